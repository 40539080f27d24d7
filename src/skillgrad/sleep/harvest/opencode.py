"""OpenCode sessions (file storage): `~/.local/share/opencode/storage/`.

`session/<projectID>/<sessionID>.json` (`id`, `directory`, `title`, `parentID` for a sub-agent's session,
`version`, `time.created` / `time.updated` in epoch ms), `message/<sessionID>/<messageID>.json` (`role`,
`time.created`, `modelID`) and `part/<messageID>/<partID>.json` holding the content (`type`: `text` with
`text`, and `synthetic: true` for text OpenCode added itself; `tool` with `tool` and `state.input`;
`reasoning`, `step-start`, `step-finish`, `file`, ...). Ids sort by creation. A skill is loaded by the `skill`
tool (`state.input.name`; `state.metadata.dir` is its folder once the call completed), also when the user runs
it as `/<name>`; the agent may also `read` a SKILL.md. A session with a `parentID` is a
sub-agent talking to itself: counted for its parent, never read as the user's prompts. (Releases that moved
to the SQLite store `opencode.db` are not read.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillgrad.sleep.harvest.build import DigestBuilder
from skillgrad.sleep.harvest.digest import SessionDigest
from skillgrad.sleep.harvest.jsonl import text_of
from skillgrad.sleep.harvest.settings import HarvestSettings

EDIT_TOOLS = ("edit", "write", "patch", "multiedit")


def find_sessions(home: Path) -> list[Path]:
    root = home / "storage" / "session"
    return sorted(root.glob("*/*.json")) if root.is_dir() else []


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _created(d: dict[str, Any]) -> Any:
    t = d.get("time")
    return t.get("created") if isinstance(t, dict) else None


def parse_session(path: Path, settings: HarvestSettings) -> SessionDigest:
    storage = path.parent.parent.parent
    b = DigestBuilder("opencode", path.stem, str(path), settings)
    info = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    if not isinstance(info, dict):
        raise ValueError("session file is not a JSON object")
    b.set_session_id(info.get("id"))
    b.set_if_empty("project", info.get("directory"))
    b.set_if_empty("version", info.get("version"))
    b.seen_time(_created(info))
    if info.get("parentID"):
        return b.finish()  # a sub-agent's session: no prompts of the user's
    sid = b.d.session_id
    children = [p for p in path.parent.glob("*.json") if p != path]
    b.d.n_subagent_sessions = sum(1 for p in children if (_read(p) or {}).get("parentID") == sid)
    for mpath in sorted((storage / "message" / sid).glob("*.json")):
        msg = _read(mpath)
        if msg is None:
            b.bad_record()
            continue
        at = b.seen_time(_created(msg))
        role = msg.get("role")
        if role == "assistant":
            b.set_if_empty("model", msg.get("modelID"))
        texts: list[str] = []
        for ppath in sorted((storage / "part" / mpath.stem).glob("*.json")):
            part = _read(ppath)
            if part is None:
                b.bad_record()
                continue
            kind = part.get("type")
            if kind == "text" and part.get("synthetic") is not True:
                texts.append(text_of(part.get("text")))
            elif kind == "tool" and role == "assistant":
                name = text_of(part.get("tool"))
                b.tool(name)
                state = part.get("state")
                inp = state.get("input") if isinstance(state, dict) else None
                if name in EDIT_TOOLS and isinstance(inp, dict):
                    b.file(inp.get("filePath"))
                elif name == "skill" and isinstance(inp, dict):  # `skill({name})`, also what `/<skill>` runs
                    meta = state.get("metadata") if isinstance(state, dict) else None
                    b.skill(inp.get("name"), meta.get("dir") if isinstance(meta, dict) else None)
                elif name == "read" and isinstance(inp, dict):
                    b.skill_read(inp.get("filePath"))
        text = "\n".join(t for t in texts if t.strip())
        if role == "user":
            b.prompt(text, at)
        elif role == "assistant":
            b.answer(text, mpath.stem)
    t = info.get("time")
    b.seen_time(t.get("updated") if isinstance(t, dict) else None)
    return b.finish()
