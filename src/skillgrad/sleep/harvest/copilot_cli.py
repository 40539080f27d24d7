"""GitHub Copilot CLI sessions: `~/.copilot/session-state/<session-id>/events.jsonl` (older: `<id>.jsonl`).

Every line is an event `{"type", "data", "id", "timestamp", "parentId"}`: `session.start` (`data.sessionId`,
`copilotVersion`, `context.cwd` / `cwd`, `context.branch`), `user.message` (`data.content`, what the person
typed; `transformedContent` is the model's view with injected context, never read), `assistant.message`
(`data.content`, `toolRequests[]`), `tool.execution_start` (`toolName`, `arguments`), `session.model_change`,
`abort`, `session.info` and others (ignored). Skills: a `skill.invoked` event (`data.name`, `data.path` of its
SKILL.md, `pluginName` for a plugin's skill) when the model calls the `skill` tool (`toolRequests[].arguments.skill`)
or the user runs `/<name>`; the skill's body then comes back as a `user.message` `<skill-context name=...>` that
the person never typed. Events of a sub-agent carry `agentId` (or `data.parentToolCallId`): not the user's turns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillgrad.sleep.harvest.build import DigestBuilder
from skillgrad.sleep.harvest.digest import SessionDigest
from skillgrad.sleep.harvest.jsonl import iter_jsonl, text_of
from skillgrad.sleep.harvest.settings import HarvestSettings

EDIT_TOOLS = ("edit", "create", "str_replace_editor", "write", "apply_patch")
READ_TOOLS = ("view", "read", "read_file")
# user.message text the CLI writes itself (a skill's body, notices), and `data.source` values of such messages
_INJECTED = ("<skill-context", "<system_notification", "<system-notification", "<system_reminder")
_SYNTHETIC_SOURCES = ("skill-", "agent-", "system", "schedule-")


def find_sessions(home: Path) -> list[Path]:
    root = home / "session-state"
    if not root.is_dir():
        return []
    return sorted([*root.glob("*/events.jsonl"), *(p for p in root.glob("*.jsonl") if p.is_file())])


def parse_session(path: Path, settings: HarvestSettings) -> SessionDigest:
    stem = path.parent.name if path.name == "events.jsonl" else path.stem
    b = DigestBuilder("copilot_cli", stem, str(path), settings)
    for rec in iter_jsonl(path, max_line_bytes=settings.max_line_bytes):
        if rec is None:
            b.bad_record()
            continue
        typ, data = rec.get("type"), rec.get("data")
        data = data if isinstance(data, dict) else {}
        at = b.seen_time(rec.get("timestamp"))
        if typ == "session.start":
            b.set_session_id(data.get("sessionId"))
            b.set_if_empty("version", data.get("copilotVersion"))
            raw = data.get("context")
            ctx: dict[str, Any] = raw if isinstance(raw, dict) else {}
            b.set_if_empty("project", ctx.get("cwd") or data.get("cwd"))
            b.set_if_empty("branch", ctx.get("branch"))
        elif typ == "session.model_change":
            b.set_if_empty("model", data.get("newModel"))
        elif rec.get("agentId") or data.get("parentToolCallId"):
            continue  # a sub-agent's own traffic
        elif typ == "user.message":
            text = text_of(data.get("content"))
            if not text.lstrip().startswith(_INJECTED) and not text_of(data.get("source")).startswith(
                    _SYNTHETIC_SOURCES):
                b.prompt(text, at)
        elif typ == "assistant.message":
            b.answer(text_of(data.get("content")), text_of(data.get("messageId")) or None)
        elif typ == "skill.invoked":
            plugin = text_of(data.get("pluginName"))
            name = text_of(data.get("name") or data.get("skillName"))
            # a plugin's skill is someone else's: named `plugin:name` and no path, so it is never trained
            b.skill(f"{plugin}:{name}" if plugin and name else name, None if plugin else data.get("path"))
        elif typ == "tool.execution_start":
            name = text_of(data.get("toolName"))
            b.tool(name)
            args = data.get("arguments")
            if isinstance(args, dict) and name in EDIT_TOOLS:
                b.file(args.get("path") or args.get("file_path"))
            elif isinstance(args, dict) and name == "skill":
                b.skill(args.get("skill") or args.get("name"))
            elif isinstance(args, dict) and name in READ_TOOLS:
                b.skill_read(args.get("path") or args.get("file_path"))
        elif typ == "abort":
            b.interrupted()
    return b.finish()
