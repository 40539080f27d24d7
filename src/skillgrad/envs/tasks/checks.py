"""Rule checks on a reply, scored locally: hard = every check passes, soft = the fraction that pass.

A check is `{"op": ..., "arg": ...}` (`section_contains` also takes `value`). Checks are validated when
the task file is read, so a bad regex or an unknown op is a one-line error naming the task.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

CheckOp = Literal["contains", "not_contains", "regex", "no_refusal", "tool_called", "section_present",
                  "section_contains", "min_chars", "max_chars"]
CHECK_OPS: tuple[str, ...] = CheckOp.__args__  # type: ignore[attr-defined]

# Phrases that open a refusal; matched case-insensitively anywhere in the first 200 characters.
_REFUSALS = ("i can't", "i cannot", "i can not", "i'm unable", "i am unable", "i won't", "i will not",
             "i'm sorry, but", "i am sorry, but", "as an ai", "i'm not able", "i am not able")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$|^\s*\*\*(.+?)\*\*\s*:?\s*$|^\s*([A-Z][\w /&-]{1,40}):\s*")


class Check(BaseModel):
    model_config = ConfigDict(extra="forbid")

    op: CheckOp
    arg: str = ""
    value: str = Field("", description="section_contains: the text the section must contain.")

    @model_validator(mode="after")
    def _valid(self) -> Check:
        if self.op in ("min_chars", "max_chars"):
            if not self.arg.strip().isdigit():
                raise ValueError(f"{self.op} needs a whole number as arg, not {self.arg!r}")
        elif self.op == "regex":
            try:
                re.compile(self.arg)
            except re.error as e:
                raise ValueError(f"regex {self.arg!r} does not compile: {e}") from None
        elif self.op != "no_refusal" and not self.arg.strip():
            raise ValueError(f"{self.op} needs a non-empty arg")
        if self.op == "section_contains" and not self.value.strip():
            raise ValueError("section_contains needs a non-empty value")
        return self

    def describe(self) -> str:
        """How the check reads in the teacher's evaluation message (plain words where the regex allows)."""
        if self.op == "regex":
            literal = _anchored_literal(self.arg)
            if literal:
                return f"starts with {literal!r}"
        return {"contains": f"contains {self.arg!r}", "not_contains": f"does not contain {self.arg!r}",
                "regex": f"matches the regex {self.arg!r}", "no_refusal": "does not refuse",
                "tool_called": f"calls the tool {self.arg!r}", "section_present": f"has a section {self.arg!r}",
                "section_contains": f"has a section {self.arg!r} containing {self.value!r}",
                "min_chars": f"is at least {self.arg} characters long",
                "max_chars": f"is at most {self.arg} characters long"}[self.op]


def _anchored_literal(pattern: str) -> str:
    """'X' for a pattern that is just `^` + a literal X (escapes allowed), else ''."""
    body = pattern[1:] if pattern.startswith("^") else ""
    if not body or re.search(r"(?<!\\)[.^$*+?{}\[\]|()]", body):
        return ""
    return re.sub(r"\\(.)", r"\1", body)


def sections(reply: str) -> dict[str, str]:
    """Heading (lower-cased) -> the text under it, for markdown headings, bold lines and `Label:` lines."""
    out: dict[str, str] = {}
    current: str | None = None
    for line in reply.splitlines():
        m = _HEADING.match(line)
        if m:
            current = (m.group(1) or m.group(2) or m.group(3) or "").strip().lower()
            out.setdefault(current, "")
            rest = line[m.end():] if m.group(3) else ""
            out[current] += rest + "\n"
        elif current is not None:
            out[current] += line + "\n"
    return out


def _section(reply: str, name: str) -> str | None:
    want = name.strip().lower().rstrip(":")
    for heading, text in sections(reply).items():
        if heading == want or heading.startswith(want):
            return text
    return None


def run_check(check: Check, reply: str, tools: list[str]) -> bool:
    op, arg, low = check.op, check.arg, reply.lower()
    if op == "contains":
        return arg.lower() in low
    if op == "not_contains":
        return arg.lower() not in low
    if op == "regex":
        return re.search(arg, reply, re.MULTILINE) is not None
    if op == "no_refusal":
        return bool(reply.strip()) and not any(p in low[:200] for p in _REFUSALS)
    if op == "tool_called":
        return any(t.lower() == arg.lower() for t in tools)
    if op == "section_present":
        return _section(reply, arg) is not None
    if op == "section_contains":
        text = _section(reply, arg)
        return text is not None and check.value.lower() in text.lower()
    if op == "min_chars":
        return len(reply.strip()) >= int(arg)
    return len(reply.strip()) <= int(arg)  # max_chars


def score_checks(checks: list[Check], reply: str, tools: list[str] | None = None) -> tuple[float, float, str]:
    """(hard, soft, fail_reason) for a reply."""
    if not checks:
        return 0.0, 0.0, "judge: the task has no checks"
    failed = [c for c in checks if not run_check(c, reply, tools or [])]
    soft = 1.0 - len(failed) / len(checks)
    reason = "; ".join(f"check: reply should {c.describe()}" for c in failed)
    return float(not failed), soft, reason


def trace_tools(trace: Any) -> list[str]:
    """Tool names found in an agent harness trace (Claude Code `tool_use` blocks, Codex tool items)."""
    names: list[str] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            kind = str(x.get("type", ""))
            if kind in ("tool_use", "function_call", "custom_tool_call") and isinstance(x.get("name"), str):
                names.append(x["name"])
            elif kind in ("command_execution", "local_shell_call"):
                names.append("shell")
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(trace)
    return names
