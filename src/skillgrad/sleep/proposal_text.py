"""Learned text that reads like the user's own: what a night would stage is cleaned before it is tested.

A proposal goes into the user's CLAUDE.md / AGENTS.md / SKILL.md, where every later session reads it. Lines that
name the tool that wrote them (a small student then answers "This is a skillgrad-learned."), that carry a
redaction placeholder (`[REDACTED]`, `***`: a secret that was in a session, useless and alarming in the user's
file), or that copy a held-out request (the decision would measure recall of that very request) are removed; the
held-out then tests the cleaned text, so the decision is about what would be staged. A worked example built on a
training or selection request stays: a student that learns only from examples (the embedded 135M model) has no
other way to learn, and the example is the user's own work.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from skillgrad.envs.tasks.records import TaskRecord
from skillgrad.sleep.heldout import normalise

_PRODUCT = re.compile(r"(?i)\bskill[\s_-]?grad\b|\bskillopt\b")
_PLACEHOLDER = re.compile(r"\[REDACTED\]|(?<![*\w])\*\*\*(?![*\w])")
MIN_COPY_CHARS = 24  # a request shorter than this ("Status?") may well recur in the user's own words


def names_the_tool(line: str) -> str:
    """Why `line` may not be in a user's file ('' when it may): it names the tool or carries a redaction
    placeholder."""
    if _PRODUCT.search(line):
        return f"names the tool: {line.strip()[:80]}"
    if _PLACEHOLDER.search(line):
        return f"carries a redaction placeholder: {line.strip()[:80]}"
    return ""


def clean_block(block: str, tasks: Sequence[TaskRecord]) -> tuple[str, list[str]]:
    """`block` without the lines above, and why each removed line went (one reason per line)."""
    requests = [n for n in (normalise(t.task) for t in tasks if t.split == "test") if len(n) >= MIN_COPY_CHARS]
    kept, why = [], []
    for line in block.splitlines():
        low = normalise(line)
        if reason := names_the_tool(line):
            why.append(reason)
        elif low and any(r in low for r in requests):
            why.append(f"copies a held-out request: {line.strip()[:80]}")
        else:
            kept.append(line)
    text = "\n".join(kept)
    return (text + "\n" if block.endswith("\n") and text else text), why
