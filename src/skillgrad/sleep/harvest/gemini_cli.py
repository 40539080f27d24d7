"""Gemini CLI sessions: `~/.gemini/tmp/<project-hash>/chats/session-<YYYY-MM-DDTHH-MM>-<id>.json`.

One JSON object per session (the CLI rewrites it as the chat goes): `sessionId`, `projectHash` (sha256 of the
project root's path), `startTime`, `lastUpdated` and `messages[]`, each `{id, timestamp, type, content}` with
`type` `user` (what the person typed), `gemini` (the model's reply, with `toolCalls[]` `{name, args, status}`,
`thoughts`, `tokens`, `model`), or `info` / `error` / `warning` (the CLI's own notes). `content` is a string
(newer releases: a list of `{text}` parts). The file names no working directory: a session belongs to the
project whose path hashes to its `projectHash` (`project_hash`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from skillgrad.sleep.harvest.build import DigestBuilder
from skillgrad.sleep.harvest.digest import SessionDigest
from skillgrad.sleep.harvest.jsonl import text_of
from skillgrad.sleep.harvest.settings import HarvestSettings

EDIT_TOOLS = ("write_file", "replace", "edit")


def project_hash(project: Path) -> str:
    return hashlib.sha256(str(project).encode("utf-8")).hexdigest()


def find_sessions(home: Path) -> list[Path]:
    root = home / "tmp"
    return sorted(root.glob("*/chats/session-*.json")) if root.is_dir() else []


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(text_of(p.get("text")) for p in content if isinstance(p, dict))
    return text_of(content)


def parse_session(path: Path, settings: HarvestSettings) -> SessionDigest:
    b = DigestBuilder("gemini_cli", path.stem, str(path), settings)
    data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    if not isinstance(data, dict):
        raise ValueError("session file is not a JSON object")
    b.set_session_id(data.get("sessionId"))
    b.d.project_hash = text_of(data.get("projectHash"))
    b.seen_time(data.get("startTime"))
    for m in data.get("messages") or []:
        if not isinstance(m, dict):
            b.bad_record()
            continue
        at = b.seen_time(m.get("timestamp"))
        kind = m.get("type")
        if kind == "user":
            b.prompt(_text(m.get("content")), at)
        elif kind == "gemini":
            b.set_if_empty("model", m.get("model"))
            for call in m.get("toolCalls") or []:
                if isinstance(call, dict):
                    b.tool(call.get("name"))
                    args = call.get("args")
                    if call.get("name") in EDIT_TOOLS and isinstance(args, dict):
                        b.file(args.get("file_path"))
            b.answer(_text(m.get("content")), text_of(m.get("id")) or None)
    b.seen_time(data.get("lastUpdated"))
    return b.finish()
