"""Cursor chats (composer / agent): SQLite key-value stores, read-only.

`<Cursor>/User/globalStorage/state.vscdb`, table `cursorDiskKV(key, value)` with JSON values:
`composerData:<composerId>` is a session (`createdAt` / `lastUpdatedAt` epoch ms, `name`, `modelConfig.modelName`,
and either `fullConversationHeadersOnly: [{bubbleId, type}]`, whose messages are the keys
`bubbleId:<composerId>:<bubbleId>`, or, in older builds, the messages inline in `conversation[]`). A message
("bubble") has `type` 1 (the user) or 2 (the assistant), `text`, `createdAt` and, for a tool call,
`toolFormerData` (`name`, and the arguments as a JSON string in `rawArgs` / `params`: `read_file` reads
`target_file`, which for a skill is its `.cursor/skills/<name>/SKILL.md`). The project: `workspaceIdentifier.uri.fsPath` when the composer has it, else the
workspace whose `workspaceStorage/<hash>/state.vscdb` lists the composer in `ItemTable['composer.composerData']`
(`allComposers[].composerId`), with the folder from that workspace's `workspace.json`. One database holds every
session, so a session's "path" here is `<state.vscdb>#<composerId>`.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from skillgrad.sleep.harvest.build import DigestBuilder
from skillgrad.sleep.harvest.digest import SessionDigest
from skillgrad.sleep.harvest.jsonl import text_of
from skillgrad.sleep.harvest.settings import HarvestSettings
from skillgrad.sleep.harvest.vscode_copilot import folder_of

SEP = "#"
_PATH_ARGS = ("target_file", "targetFile", "path", "file_path", "filePath")


def _connect(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=2)


def _json(value: Any) -> Any:
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    try:
        return json.loads(value) if isinstance(value, str) else None
    except ValueError:
        return None


def find_sessions(home: Path) -> list[Path]:
    db = home / "globalStorage" / "state.vscdb"
    if not db.is_file():
        return []
    with closing(_connect(db)) as conn:
        rows = conn.execute("SELECT key FROM cursorDiskKV WHERE key LIKE 'composerData:%'").fetchall()
    return sorted(Path(f"{db}{SEP}{k.split(':', 1)[1]}") for (k,) in rows)


def workspace_of(home: Path, composer: str) -> str:
    """The folder of the workspace that lists `composer` ('' when none does)."""
    for ws in sorted((home / "workspaceStorage").glob("*/state.vscdb")):
        try:
            with closing(_connect(ws)) as conn:
                row = conn.execute("SELECT value FROM ItemTable WHERE key = 'composer.composerData'").fetchone()
        except sqlite3.Error:
            continue
        data = _json(row[0]) if row else None
        listed = data.get("allComposers") if isinstance(data, dict) else None
        if any(isinstance(c, dict) and c.get("composerId") == composer for c in listed or []):
            return folder_of(ws.parent / "workspace.json")
    return ""


def parse_session(path: Path, settings: HarvestSettings) -> SessionDigest:
    db_text, _, composer = str(path).rpartition(SEP)
    db = Path(db_text)
    b = DigestBuilder("cursor", composer, str(path), settings)
    with closing(_connect(db)) as conn:
        def get(key: str) -> Any:
            row = conn.execute("SELECT value FROM cursorDiskKV WHERE key = ?", (key,)).fetchone()
            return _json(row[0]) if row else None

        data = get(f"composerData:{composer}")
        if not isinstance(data, dict):
            raise ValueError(f"composerData:{composer} is not a JSON object")
        headers = data.get("fullConversationHeadersOnly")
        bubbles: list[Any]
        if isinstance(headers, list):
            bubbles = [get(f"bubbleId:{composer}:{text_of(h.get('bubbleId'))}") if isinstance(h, dict) else None
                       for h in headers]
        else:
            inline = data.get("conversation")
            bubbles = inline if isinstance(inline, list) else []
    ident = data.get("workspaceIdentifier")
    uri = ident.get("uri") if isinstance(ident, dict) else None
    b.set_if_empty("project", text_of(uri.get("fsPath")) if isinstance(uri, dict) else "")
    if not b.d.project:
        b.set_if_empty("project", workspace_of(db.parent.parent, composer))
    model = data.get("modelConfig")
    b.set_if_empty("model", model.get("modelName") if isinstance(model, dict) else None)
    b.seen_time(data.get("createdAt"))
    for bubble in bubbles:
        if not isinstance(bubble, dict):
            b.bad_record()
            continue
        at = b.seen_time(bubble.get("createdAt"))
        text = text_of(bubble.get("text"))
        if bubble.get("type") == 1:
            b.prompt(text, at)
        elif bubble.get("type") == 2:
            tool = bubble.get("toolFormerData")
            if isinstance(tool, dict):
                b.tool(tool.get("name"))
                if "read" in text_of(tool.get("name")):  # reading a skill's SKILL.md is using that skill
                    args = _json(tool.get("rawArgs")) or _json(tool.get("params"))
                    if isinstance(args, dict):
                        b.skill_read(next((args[k] for k in _PATH_ARGS if isinstance(args.get(k), str)), None))
            b.answer(text)
    b.seen_time(data.get("lastUpdatedAt"))
    return b.finish()
