"""Codex CLI sessions: `<codex_home>/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl` and `archived_sessions/`.

Two layouts. The current one wraps every line in an envelope `{"timestamp", "type", "payload"}` with type
session_meta / turn_context / response_item / event_msg / compacted. The older one (Codex CLI before the
envelope, mid 2025) starts with a bare session header `{id, timestamp, instructions, git}` followed by bare
response items and `{"record_type": "state"}` markers. Response items are the model's view (including the
developer text, AGENTS.md and `<environment_context>` that Codex injects as user messages); `event_msg`
user_message / agent_message are what the person typed and saw. When a file has events we read prompts and
answers from them; otherwise from the response items, with the injections removed.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from skillgrad.sleep.harvest.build import DigestBuilder
from skillgrad.sleep.harvest.digest import SessionDigest
from skillgrad.sleep.harvest.jsonl import iter_jsonl, text_of
from skillgrad.sleep.harvest.settings import HarvestSettings

ENVELOPE_TYPES = {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
# User-role text Codex writes for the model, not the person (compared lower-cased, stripped).
INJECTED_PREFIXES = ("<environment_context>", "<user_instructions>", "# agents.md instructions for",
                     "<instructions>", "<user_shell_command>", "<permissions instructions>", "<turn_aborted>",
                     "<collaboration_mode>", "<skill>")
_INJECTED_BLOCK = re.compile(r"<(environment_context|user_instructions|INSTRUCTIONS)>.*?</\1>", re.S | re.I)
# The Codex IDE extension and desktop app wrap a request in the editor's context; the request is the last section.
_IDE_REQUEST = re.compile(r"\A\s*# (?:Context from my IDE setup|Files mentioned by the user):.*?"
                          r"^## My request(?: for Codex)?:[ \t]*\n?(.*)\Z", re.S | re.M)
# `# Files mentioned by the user:` lists one file per `## <name>: <path>` line (older: the path on the next line).
_MENTIONED = re.compile(r"^# Files mentioned by the user:[ \t]*\n(.*?)(?=^# |^## My request|\Z)", re.S | re.M)
_MENTION = re.compile(r"^## [^\n]*?:[ \t]*(\S[^\n]*)$|^## [^\n]*:[ \t]*\n([^#\n][^\n]*)$", re.M)
# `# Context from my IDE setup:` names the file open in the editor (`## Active file: src/app.ts`).
_IDE_CONTEXT = re.compile(r"^# Context from my IDE setup:[ \t]*\n(.*?)(?=^# |^## My request|\Z)", re.S | re.M)
_ACTIVE = re.compile(r"^## Active file:[ \t]*(\S[^\n]*?)[ \t]*$", re.M)
# A skill Codex put in front of the model (`$name` in a prompt): `<skill>\n<name>N</name>\n<path>P</path>...`.
_SKILL_INJECTION = re.compile(r"\A\s*<skill>\s*<name>([^<\n]+)</name>(?:\s*<path>([^<\n]+)</path>)?")
# A SKILL.md the agent read with a shell command (`sed -n '1,240p' ~/.codex/skills/<name>/SKILL.md`).
_SKILL_READ = re.compile(r"""([^\s'"]*[/\\]skills[/\\]([^/\\\s'"]+)[/\\]SKILL\.md)""")
_CWD = re.compile(r"<cwd>([^<\n]{1,1000})</cwd>")
_PATCH_FILE = re.compile(r"^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+?)\s*$", re.M)
_REDIRECT = re.compile(r"(?<![<>&\d])>>?\s*([^\s&|;<>()'\"$`]+)")
_SESSION_ID = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$", re.I)


def find_sessions(codex_home: Path) -> list[Path]:
    found: set[Path] = set()
    for sub in ("sessions", "archived_sessions"):
        root = codex_home / sub
        if root.is_dir():
            found.update(p for p in root.rglob("rollout-*.jsonl") if not p.is_dir())
    return sorted(found)


def patch_files(patch: str) -> list[str]:
    """Files an apply_patch body adds, updates, deletes or moves to."""
    return _PATCH_FILE.findall(patch)


def shell_edit_files(command: str) -> list[str]:
    """Files a shell command visibly writes: apply_patch heredocs, `sed -i`, `>`/`>>` redirections, `tee`."""
    files = patch_files(command)
    files += [f for f in _REDIRECT.findall(command) if not f.startswith("/dev/") and not f.isdigit()]
    for segment in re.split(r"&&|\|\||[;|\n]", command):
        try:
            words = shlex.split(segment)
        except ValueError:
            continue
        if not words:
            continue
        if words[0] == "sed" and any(w.startswith("-i") or w.startswith("--in-place") for w in words[1:]):
            if len(words) > 2 and not words[-1].startswith("-"):
                files.append(words[-1])
        elif words[0] == "tee":
            files += [w for w in words[1:] if not w.startswith("-")]
    return files


def _command_text(value: Any) -> str:
    if isinstance(value, list):
        words = [v for v in value if isinstance(v, str)]
        if len(words) >= 3 and words[-2] in ("-c", "-lc"):  # ["bash", "-lc", "<script>"]: the script itself
            return words[-1]
        return " ".join(words)
    return text_of(value)


def _content_text(content: Any, kinds: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(text_of(c.get("text")) for c in content if isinstance(c, dict) and c.get("type") in kinds)


def mentioned_files(text: str) -> list[str]:
    """The paths of a `# Files mentioned by the user:` section (Codex IDE extension and desktop app), then the
    editor's active file (`## Active file:` of `# Context from my IDE setup:`), the file the request is about
    when it says "this" or "it"."""
    m = _MENTIONED.search(text)
    named = [(a or b).strip() for a, b in _MENTION.findall(m.group(1))] if m else []
    ide = _IDE_CONTEXT.search(text)
    active = _ACTIVE.search(ide.group(1)) if ide else None
    return list(dict.fromkeys([*named, *([active.group(1)] if active else [])]))


def user_text(text: str) -> str:
    """A user message with Codex's injections removed ('' when nothing the person wrote is left)."""
    if text.lstrip().lower().startswith(INJECTED_PREFIXES):
        return ""
    ide = _IDE_REQUEST.match(text)
    if ide:
        text = ide.group(1)
    return _INJECTED_BLOCK.sub("", text).strip()


class _Ops:
    """Ordered normalised events; prompts and answers are tagged with where they came from."""

    def __init__(self) -> None:
        self.ops: list[tuple[str, str, str, str]] = []  # (kind, source, text, at; a skill's path)

    def add(self, kind: str, text: str, source: str = "", at: str = "") -> None:
        self.ops.append((kind, source, text, at))


def _item(ops: _Ops, b: DigestBuilder, p: dict[str, Any], at: str) -> None:
    kind = p.get("type")
    if kind == "message":
        role = p.get("role")
        if role == "user":
            raw = _content_text(p.get("content"), ("input_text", "text"))
            cwd = _CWD.search(raw)
            if cwd:
                b.set_if_empty("project", cwd.group(1).strip())
            if "<turn_aborted>" in raw:
                ops.add("interrupt", "")
            skill = _SKILL_INJECTION.match(raw)
            if skill:
                ops.add("skill", skill.group(1).strip(), "", (skill.group(2) or "").strip())
            ops.add("prompt", user_text(raw), "item", at)
            for f in mentioned_files(raw):
                ops.add("mention", f, "item")
        elif role == "assistant":
            ops.add("answer", _content_text(p.get("content"), ("output_text", "text")), "item")
        # developer / system text is Codex's own instructions: dropped
    elif kind in ("function_call", "custom_tool_call"):
        name = text_of(p.get("name"))
        ops.add("tool", name)
        args: Any = p.get("arguments") if kind == "function_call" else p.get("input")
        if isinstance(args, str) and kind == "function_call":
            try:
                args = json.loads(args)
            except ValueError:
                pass
        if isinstance(args, dict):
            text = _command_text(args.get("command") or args.get("cmd")) or text_of(args.get("input"))
        else:
            text = text_of(args)
        for f in shell_edit_files(text) if text else []:
            ops.add("file", f)
        for path, name in _SKILL_READ.findall(text) if text else []:
            ops.add("skill", name, "", path)
    elif kind == "local_shell_call":
        ops.add("tool", "local_shell")
        action = p.get("action")
        if isinstance(action, dict):
            for f in shell_edit_files(_command_text(action.get("command"))):
                ops.add("file", f)
    elif kind == "web_search_call":
        ops.add("tool", "web_search")
    # reasoning, *_output, unknown item types: nothing the digest keeps


def _event(ops: _Ops, p: dict[str, Any], at: str) -> None:
    kind = p.get("type")
    if kind == "user_message":
        raw = text_of(p.get("message"))
        ops.add("prompt", user_text(raw), "event", at)
        for f in mentioned_files(raw):
            ops.add("mention", f, "event")
    elif kind == "agent_message":
        ops.add("answer", text_of(p.get("message")), "event")
    elif kind == "turn_aborted":
        ops.add("interrupt", "")
    # token_count, agent_reasoning, task_started, exec events, unknown events: counters and UI


def parse_session(path: Path, settings: HarvestSettings) -> SessionDigest:
    """Digest of one Codex rollout file, either layout. Unreadable lines are counted, never fatal."""
    m = _SESSION_ID.search(path.stem)
    b = DigestBuilder("codex", m.group(1) if m else path.stem, str(path), settings)
    ops = _Ops()
    first = True
    for rec in iter_jsonl(path, max_line_bytes=settings.max_line_bytes):
        if rec is None:
            b.bad_record()
            continue
        typ, payload = rec.get("type"), rec.get("payload")
        typ = typ if isinstance(typ, str) else None
        if typ in ENVELOPE_TYPES and isinstance(payload, dict):
            at = b.seen_time(rec.get("timestamp"))
            if typ == "session_meta":
                _meta(b, payload)
            elif typ == "turn_context":
                b.set_if_empty("project", payload.get("cwd"))
                b.set_if_empty("model", payload.get("model"))
            elif typ == "response_item":
                _item(ops, b, payload, at)
            elif typ == "event_msg":
                _event(ops, payload, at)
            else:  # compacted: the summary that replaced the earlier history
                ops.add("summary", text_of(payload.get("message")))
        elif "record_type" in rec:
            pass  # legacy state marker
        elif first and "id" in rec and "type" not in rec:
            _meta(b, rec)  # legacy header line
        elif typ is not None and "payload" not in rec:
            _item(ops, b, rec, b.seen_time(rec.get("timestamp")))  # legacy bare response item
        elif typ not in ENVELOPE_TYPES:
            pass  # a record type from a future version: ignored, not an error
        else:
            b.bad_record()
        first = False
    _replay(ops, b)
    return b.finish()


def _meta(b: DigestBuilder, p: dict[str, Any]) -> None:
    b.set_session_id(p.get("id"))
    b.seen_time(p.get("timestamp"))
    b.set_if_empty("project", p.get("cwd"))
    b.set_if_empty("version", p.get("cli_version"))
    b.set_if_empty("model", p.get("model"))
    git = p.get("git")
    if isinstance(git, dict):
        b.set_if_empty("branch", git.get("branch"))


def _replay(ops: _Ops, b: DigestBuilder) -> None:
    prompt_src = "event" if any(k == "prompt" and s == "event" for k, s, _, _ in ops.ops) else "item"
    answer_src = "event" if any(k == "answer" and s == "event" for k, s, _, _ in ops.ops) else "item"
    for kind, src, text, at in ops.ops:
        if kind == "prompt" and src == prompt_src:
            b.prompt(text, at)
        elif kind == "answer" and src == answer_src:
            b.answer(text)
        elif kind == "tool":
            b.tool(text)
        elif kind == "file":
            b.file(text)
        elif kind == "summary":
            b.summary(text)
        elif kind == "interrupt":
            b.interrupted()
        elif kind == "skill":
            b.skill(text, at or None)
        elif kind == "mention" and src == prompt_src:
            b.named_file(text)
