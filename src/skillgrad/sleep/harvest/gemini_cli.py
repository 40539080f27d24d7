"""Gemini CLI sessions: `~/.gemini/tmp/<project-hash>/chats/session-<YYYY-MM-DDTHH-MM>-<id>.json[l]`.

A session (`ConversationRecord`): `sessionId`, `projectHash` (sha256 of the project root's path), `startTime`,
`lastUpdated`, `kind` (`main` / `subagent`) and `messages[]`, each `{id, timestamp, type, content}` with `type`
`user` (`displayContent`, when present, is what the person typed; `content` what the model got), `gemini` (the
reply, with `toolCalls[]` `{id, name, args, status, resultDisplay}`, `thoughts`, `tokens`, `model`), or `info` /
`error` / `warning` (the CLI's own notes). `content` is a string or a list of `{text}` parts. Older releases
rewrite one JSON object (`.json`); newer ones append JSON lines (`.jsonl`): the metadata first, then each message
record (written again, whole, when it changes: the last copy wins, in first-seen order), `{"$set": {...}}`
metadata updates (a `$set` of `messages` replaces them) and `{"$rewindTo": id}` (that message and all after it are
gone). A sub-agent's session is `chats/<parent-id>/<id>.jsonl`, `kind: subagent`: never the user's prompts.
The file names no working directory: a session belongs to the project whose path hashes to its `projectHash`.
Skills: the model calls `activate_skill` (`args.name`; `resultDisplay` names the folder it loaded) or reads a
SKILL.md with `read_file`.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from skillgrad.sleep.harvest.build import DigestBuilder
from skillgrad.sleep.harvest.digest import SessionDigest
from skillgrad.sleep.harvest.jsonl import iter_jsonl, text_of
from skillgrad.sleep.harvest.settings import HarvestSettings

EDIT_TOOLS = ("write_file", "replace", "edit")
READ_TOOLS = ("read_file", "read_many_files")
# `Skill **name** activated. Resources loaded from `<folder>`:` (activate_skill's resultDisplay)
_LOADED_FROM = re.compile(r"loaded from `([^`\n]+)`")


def project_hash(project: Path) -> str:
    return hashlib.sha256(str(project).encode("utf-8")).hexdigest()


def find_sessions(home: Path) -> list[Path]:
    root = home / "tmp"
    if not root.is_dir():
        return []
    return sorted([*root.glob("*/chats/session-*.json"), *root.glob("*/chats/session-*.jsonl")])


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(text_of(p.get("text")) for p in content if isinstance(p, dict))
    return text_of(content)


def load(path: Path, settings: HarvestSettings) -> tuple[dict[str, Any], int]:
    """The conversation record and the number of unreadable lines (a `.jsonl` log replayed in order)."""
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
        if not isinstance(data, dict):
            raise ValueError("session file is not a JSON object")
        return data, 0
    meta: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}
    bad = 0
    for rec in iter_jsonl(path, max_line_bytes=settings.max_line_bytes):
        if rec is None:
            bad += 1
        elif isinstance(rec.get("$rewindTo"), str):
            ids = list(messages)
            cut = ids.index(rec["$rewindTo"]) if rec["$rewindTo"] in messages else 0
            for mid in ids[cut:]:
                del messages[mid]
        elif isinstance(rec.get("$set"), dict):
            meta.update(rec["$set"])
        elif isinstance(rec.get("id"), str):
            messages[rec["id"]] = rec  # a rewritten message keeps its place
        elif isinstance(rec.get("sessionId"), str):
            meta.update(rec)
    listed = meta.get("messages")
    return {**meta, "messages": listed if isinstance(listed, list) and listed else list(messages.values())}, bad


def _tool(b: DigestBuilder, call: dict[str, Any]) -> None:
    name, args = call.get("name"), call.get("args")
    b.tool(name)
    if not isinstance(args, dict):
        return
    if name in EDIT_TOOLS:
        b.file(args.get("file_path"))
    elif name == "activate_skill":
        folder = _LOADED_FROM.search(text_of(call.get("resultDisplay")))
        b.skill(args.get("name"), folder.group(1) if folder else None)
    elif name in READ_TOOLS:
        b.skill_read(args.get("file_path") or args.get("absolute_path"))


def parse_session(path: Path, settings: HarvestSettings) -> SessionDigest:
    b = DigestBuilder("gemini_cli", path.stem, str(path), settings)
    data, bad = load(path, settings)
    for _ in range(bad):
        b.bad_record()
    b.set_session_id(data.get("sessionId"))
    b.d.project_hash = text_of(data.get("projectHash"))
    b.seen_time(data.get("startTime"))
    if data.get("kind") == "subagent":
        return b.finish()  # a sub-agent talking to itself
    for m in data.get("messages") or []:
        if not isinstance(m, dict):
            b.bad_record()
            continue
        at = b.seen_time(m.get("timestamp"))
        kind = m.get("type")
        if kind == "user":
            b.prompt(_text(m.get("displayContent")) or _text(m.get("content")), at)
        elif kind == "gemini":
            b.set_if_empty("model", m.get("model"))
            for call in m.get("toolCalls") or []:
                if isinstance(call, dict):
                    _tool(b, call)
            b.answer(_text(m.get("content")), text_of(m.get("id")) or None)
    b.seen_time(data.get("lastUpdated"))
    return b.finish()
