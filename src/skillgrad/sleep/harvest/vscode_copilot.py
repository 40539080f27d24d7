"""VS Code Copilot Chat sessions: `<Code>/User/workspaceStorage/<hash>/chatSessions/<session-id>.json`.

`<hash>/workspace.json` maps the folder (`{"folder": "file:///home/dev/app"}`). A session file (format
version 3) holds `sessionId`, `creationDate` / `lastMessageDate` (epoch ms) and `requests[]`: each request has
`message.text` (older files: a plain string), `timestamp`, `modelId`, `isCanceled` and `response[]`, a list of
parts: markdown is a bare `{"value": ...}` (or `kind: "markdownContent"`), everything else keeps its `kind`
(`toolInvocationSerialized` with `toolId` and an `invocationMessage` / `pastTenseMessage` `{value, uris}` that
links the files it read, `textEditGroup` with the edited `uri`, `inlineReference`, ...); a skill is loaded by
reading its SKILL.md (`copilot_readFile`). Newer builds write
`<session-id>.jsonl`: line 0 `{"kind": 0, "v": <the session>}`, then `kind: 1` (set the value at key path `k`)
and `kind: 2` (append `v` to the array at `k`, at index `i` when given) patches.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from skillgrad.sleep.harvest.build import DigestBuilder
from skillgrad.sleep.harvest.digest import SessionDigest
from skillgrad.sleep.harvest.jsonl import iter_jsonl, text_of
from skillgrad.sleep.harvest.settings import HarvestSettings

# A markdown link to a file in a tool's invocation message: `Reading [](file:///repo/src/app.ts#L1-L40)`.
_LINK = re.compile(r"\]\((file://[^)\s#]+)")


def find_sessions(home: Path) -> list[Path]:
    root = home / "workspaceStorage"
    if not root.is_dir():
        return []
    return sorted(p for p in root.glob("*/chatSessions/*.json*") if p.suffix in (".json", ".jsonl"))


def folder_of(workspace_json: Path) -> str:
    """The workspace folder a `workspace.json` names ('' when unreadable or remote)."""
    try:
        data = json.loads(workspace_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    uri = text_of(data.get("folder")) if isinstance(data, dict) else ""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else ""


def _apply(session: dict[str, Any], patch: dict[str, Any]) -> None:
    keys = patch.get("k")
    if not isinstance(keys, list) or not keys:
        return
    node: Any = session
    for k in keys[:-1]:
        if isinstance(node, dict) and isinstance(k, str):
            node = node.setdefault(k, {})
        elif isinstance(node, list) and isinstance(k, int) and 0 <= k < len(node):
            node = node[k]
        else:
            return
    last, value = keys[-1], patch.get("v")
    if patch.get("kind") == 1:
        if isinstance(node, dict) and isinstance(last, str):
            node[last] = value
        elif isinstance(node, list) and isinstance(last, int) and 0 <= last < len(node):
            node[last] = value
    elif patch.get("kind") == 2:
        target = node.setdefault(last, []) if isinstance(node, dict) and isinstance(last, str) else (
            node[last] if isinstance(node, list) and isinstance(last, int) and 0 <= last < len(node) else None)
        if isinstance(target, list):
            items = value if isinstance(value, list) else [value]
            at = patch.get("i")
            if isinstance(at, int):
                target[at:at] = items
            else:
                target.extend(items)


def load(path: Path, settings: HarvestSettings) -> tuple[dict[str, Any], int]:
    """The session object and the number of unreadable lines (a .jsonl with patches applied in order)."""
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
        return (data if isinstance(data, dict) else {}), 0
    session: dict[str, Any] = {}
    bad = 0
    for rec in iter_jsonl(path, max_line_bytes=settings.max_line_bytes):
        if rec is None:
            bad += 1
        elif rec.get("kind") == 0 and isinstance(rec.get("v"), dict):
            session = rec["v"]
        else:
            _apply(session, rec)
    return session, bad


def _message_paths(message: Any) -> list[str]:
    """The file paths a tool's invocation message links (`Reading [](file:///…)`, its `uris` map)."""
    if not isinstance(message, dict):
        return _LINK.findall(text_of(message))
    uris = message.get("uris")
    paths = [text_of(u.get("path")) or k for k, u in uris.items() if isinstance(u, dict)] \
        if isinstance(uris, dict) else []
    return paths + _LINK.findall(text_of(message.get("value")))


def _answer(parts: Any) -> tuple[str, list[str], list[str], list[str]]:
    """(markdown text, tool names, edited files, files the tools read or named) of a response's parts."""
    texts, tools, files, seen = [], [], [], []
    for p in parts if isinstance(parts, list) else []:
        if not isinstance(p, dict):
            continue
        kind = p.get("kind")
        if kind in (None, "markdownContent"):
            value = p.get("value") if kind is None else (p.get("content") or {}).get("value")
            texts.append(text_of(value))
        elif kind == "toolInvocationSerialized":
            tools.append(text_of(p.get("toolId")) or "tool")
            seen += _message_paths(p.get("pastTenseMessage")) + _message_paths(p.get("invocationMessage"))
        elif kind == "textEditGroup":
            uri = p.get("uri")
            files.append(text_of(uri.get("path")) if isinstance(uri, dict) else "")
    return "".join(texts).strip(), tools, [f for f in files if f], seen


def parse_session(path: Path, settings: HarvestSettings) -> SessionDigest:
    b = DigestBuilder("vscode_copilot", path.stem, str(path), settings)
    session, bad = load(path, settings)
    for _ in range(bad):
        b.bad_record()
    b.set_session_id(session.get("sessionId"))
    b.set_if_empty("project", folder_of(path.parent.parent / "workspace.json"))
    b.seen_time(session.get("creationDate"))
    for req in session.get("requests") or []:
        if not isinstance(req, dict):
            b.bad_record()
            continue
        msg = req.get("message")
        text = text_of(msg.get("text")) if isinstance(msg, dict) else text_of(msg)
        b.prompt(text, b.seen_time(req.get("timestamp")))
        b.set_if_empty("model", req.get("modelId"))
        answer, tools, files, seen = _answer(req.get("response"))
        for name in tools:
            b.tool(name)
        for f in files:
            b.file(f)
        for f in seen:  # a skill is loaded by reading its SKILL.md (`.github/skills/<name>/`, `.claude/skills/`)
            b.skill_read(f)
        b.answer(answer)
        if req.get("isCanceled") is True:
            b.interrupted()
    b.seen_time(session.get("lastMessageDate"))
    return b.finish()
