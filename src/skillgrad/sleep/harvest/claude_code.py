"""Claude Code sessions: `<claude_home>/projects/<encoded-cwd>/<session-id>.jsonl`.

One JSON record per line. Conversation records have `type` user/assistant and a `message` with `role` and
`content` (a string, or a list of text / tool_use / tool_result / thinking / image blocks); bookkeeping records
(`summary`, `file-history-snapshot`, `system`, `progress`, `queue-operation`, titles, ...) sit between them.
Layouts differ by version: 1.0.x keeps Task sub-agent turns inline (`isSidechain: true`), 2.0.x writes them to
`agent-<id>.jsonl` beside the session, 2.1.x to `<session-id>/subagents/agent-<id>.jsonl`. Sub-agent turns are
the agent talking to itself, never the user's prompts: they are counted, not read as turns.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from skillgrad.sleep.harvest.build import EDIT_TOOLS, DigestBuilder
from skillgrad.sleep.harvest.digest import SessionDigest
from skillgrad.sleep.harvest.jsonl import first_records, iter_jsonl, text_of
from skillgrad.sleep.harvest.settings import HarvestSettings

# User-role text that the CLI, a hook or a slash command wrote, not the person (compared lower-cased, stripped).
META_PREFIXES = (
    "<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>", "<local-command-stderr>",
    "<local-command-caveat>", "caveat: the messages below were generated", "<system-reminder>",
    "<task-notification>", "<bash-input>", "<bash-stdout>", "<bash-stderr>", "<user-prompt-submit-hook>",
    "base directory for this skill:", "this session is being continued from a previous conversation",
    "<session-start-hook>", "<user-memory-input>",
)
INTERRUPTED = "[request interrupted by user"
_BARE_SLASH = re.compile(r"^/[\w:.\-]+$")  # "/clear", "/model": a command typed with no request
# A slash command as Claude Code records it: `<command-message>x is running…</command-message>`,
# `<command-name>/x</command-name>`, `<command-args>the request</command-args>` (tags in either order).
_COMMAND_NAME = re.compile(r"<command-name>\s*/?([^<\s]+)\s*</command-name>")
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
# Notes the IDE extensions add to a prompt ("The user opened the file ... in the IDE"), not the person's words.
_IDE_NOTE = re.compile(r"<(ide_opened_file|ide_selection|ide_diagnostics)>.*?</\1>\s*", re.S)
# The text Claude Code adds after launching a skill (the Skill tool or its slash command): its folder, then its body.
SKILL_BASE = "base directory for this skill:"
# `@src/app.ts` in a prompt: a file the user put in front of the agent (a path: it has a dot or a slash, so
# `@alice` is not one).
_AT_MENTION = re.compile(r"(?<![\w@/])@((?:~/|\./|\.\./|/)?[\w.\-]+(?:/[\w.\-]+)*)")
# Built-in commands whose arguments configure the CLI (a model name, a session id), never a request.
BUILTIN_COMMANDS = frozenset((
    "add-dir", "agents", "bug", "clear", "compact", "config", "context", "cost", "doctor", "exit", "export", "help",
    "hooks", "ide", "init", "install-github-app", "login", "logout", "mcp", "memory", "model", "output-style",
    "permissions", "plugin", "privacy-settings", "release-notes", "resume", "rewind", "status", "statusline",
    "terminal-setup", "theme", "todos", "usage", "vim"))
# Files of the CLI's own helpers that sit among sub-agent files: compaction (`agent-acompact-*`) is not a sub-agent.
HELPER_AGENT_PREFIXES = ("acompact",)


def command_request(text: str) -> str:
    """`/name args` of a slash command whose arguments are the user's request ('' for none or a built-in)."""
    name, args = _COMMAND_NAME.search(text), _COMMAND_ARGS.search(text)
    if name is None or args is None or not args.group(1).strip():
        return ""
    if name.group(1).lower() in BUILTIN_COMMANDS:
        return ""
    return f"/{name.group(1)} {args.group(1).strip()}"


def at_mentions(text: str) -> list[str]:
    """Paths the user @-mentioned in a prompt (`@src/app.ts`, `@AGENTS.md`), without the @."""
    found = (m.rstrip(".") for m in _AT_MENTION.findall(text))
    return [m for m in found if "/" in m or "." in m]


def is_meta_text(text: str) -> bool:
    low = text.lstrip().lower()
    return low.startswith(META_PREFIXES) or bool(_BARE_SLASH.match(low.strip()))


def find_sessions(claude_home: Path) -> list[Path]:
    """Top-level session files of every project folder (sub-agent files excluded)."""
    root = claude_home / "projects"
    if not root.is_dir():
        return []
    return sorted(p for p in root.glob("*/*.jsonl") if not p.is_dir() and not p.name.startswith("agent-"))


def subagent_ids(session: Path, *, max_line_bytes: int) -> set[str]:
    """Ids of sub-agent files that belong to `session`: its `subagents/` folder, and `agent-*.jsonl` files
    beside it whose records name it as their session."""
    ids: set[str] = set()
    sub = session.with_suffix("") / "subagents"
    if sub.is_dir():
        ids.update(p.stem.removeprefix("agent-") for p in sub.rglob("agent-*.jsonl"))
    for p in session.parent.glob("agent-*.jsonl"):
        if p.stem.removeprefix("agent-").startswith(HELPER_AGENT_PREFIXES):
            continue
        try:
            recs = first_records(p, limit=5, max_line_bytes=max_line_bytes)
        except OSError:
            continue
        if any(r.get("sessionId") == session.stem for r in recs):
            ids.add(p.stem.removeprefix("agent-"))
    return {i for i in ids if not i.startswith(HELPER_AGENT_PREFIXES)}


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _user(b: DigestBuilder, rec: dict[str, Any], msg: dict[str, Any], at: str) -> None:
    blocks = _blocks(msg.get("content"))
    result = rec.get("toolUseResult")  # a dict for most tools, a plain string for errors and old versions
    if isinstance(result, dict) and ("structuredPatch" in result or result.get("type") in ("create", "update")):
        b.file(result.get("filePath"))
    text = _IDE_NOTE.sub("", "\n".join(text_of(x.get("text")) for x in blocks if x.get("type") == "text")).strip()
    if rec.get("isCompactSummary") is True:
        b.summary(text)
        return
    if text.lower().startswith(SKILL_BASE):  # a launched skill's folder and body (an isMeta record since 2.1)
        b.skill_folder(text[len(SKILL_BASE):].split("\n", 1)[0])
        return
    if not text or rec.get("isMeta") is True:
        return
    if text.lower().startswith(INTERRUPTED):
        b.interrupted()
        return
    if any(x.get("type") == "tool_result" for x in blocks):
        return  # text riding along a tool result
    low = text.lstrip().lower()
    if low.startswith(("<command-name>", "<command-message>")):
        request = command_request(text)
        if request:  # `/fix-issue the login page is slow`: the arguments are the request
            b.prompt(request, at)
            for path in at_mentions(request):
                b.named_file(path)
            b.expect_expansion()  # the command file's expanded text that follows is not the user's words
        else:
            b.command_without_request()
        return
    if low.startswith("<task-notification>"):
        b.hold_answers()  # the agent's reply to a background task's notice is not the turn's answer
        return
    if is_meta_text(text):
        return  # harness text
    if b.take_expansion():
        return
    b.prompt(text, at)
    for path in at_mentions(text):
        b.named_file(path)


def _assistant(b: DigestBuilder, rec: dict[str, Any], msg: dict[str, Any]) -> None:
    model = text_of(msg.get("model"))
    if model == "<synthetic>":  # CLI-made placeholder (API error, "No response requested.")
        return
    b.set_if_empty("model", model)
    b.assistant_spoke()
    key = text_of(msg.get("id")) or None
    for block in _blocks(msg.get("content")):
        kind = block.get("type")
        if kind == "text":
            b.answer(text_of(block.get("text")), key)
        elif kind == "tool_use":
            name, inp = block.get("name"), block.get("input")
            b.tool(name)
            if not isinstance(inp, dict):
                continue
            if name == "Skill":
                b.skill(inp.get("skill") or inp.get("command"))
            elif isinstance(name, str) and name in EDIT_TOOLS:
                b.file(inp.get(EDIT_TOOLS[name]))
            elif name == "Read":  # reading a skill's SKILL.md is using that skill
                b.skill_read(inp.get("file_path"))


def parse_session(path: Path, settings: HarvestSettings) -> SessionDigest:
    """Digest of one Claude Code session file. Unreadable lines are counted in `skipped_records`; only an
    unreadable file (OSError) raises."""
    b = DigestBuilder("claude_code", path.stem, str(path), settings)
    sidechains: set[str] = set()
    for rec in iter_jsonl(path, max_line_bytes=settings.max_line_bytes):
        if rec is None:
            b.bad_record()
            continue
        typ = rec.get("type")
        b.set_session_id(rec.get("sessionId"))
        b.set_if_empty("project", rec.get("cwd"))
        b.set_if_empty("branch", rec.get("gitBranch"))
        b.set_if_empty("version", rec.get("version"))
        at = b.seen_time(rec.get("timestamp"))
        if rec.get("isSidechain") is True:
            # 1.0.x inline sub-agent: one chain per agentId (or per root record in files without agentId)
            chain = rec.get("agentId") or (rec.get("uuid") if rec.get("parentUuid") is None else None)
            if isinstance(chain, str) and not chain.startswith(HELPER_AGENT_PREFIXES):
                sidechains.add(chain)
            continue
        if typ == "summary":
            b.summary(rec.get("summary"))
        elif typ == "file-history-snapshot":
            snap = rec.get("snapshot")
            backups = snap.get("trackedFileBackups") if isinstance(snap, dict) else None
            for f in backups if isinstance(backups, dict) else ():
                b.file(f)
        elif typ == "attachment":
            att = rec.get("attachment")  # a prompt the user queued while the agent was working
            if isinstance(att, dict) and att.get("type") == "queued_command" and att.get("commandMode") == "prompt":
                text = text_of(att.get("prompt"))
                if text and not is_meta_text(text):
                    b.prompt(text, at)
        elif typ in ("user", "assistant"):
            msg = rec.get("message")
            if not isinstance(msg, dict):
                continue
            role = msg.get("role") if msg.get("role") in ("user", "assistant") else typ
            if role == "user":
                _user(b, rec, msg, at)
            else:
                _assistant(b, rec, msg)
        # system (compact_boundary, hooks, errors), progress, queue-operation, titles, unknown types: no content
    ids = sidechains | subagent_ids(path, max_line_bytes=settings.max_line_bytes)
    b.d.n_subagent_sessions = len(ids)
    return b.finish()
