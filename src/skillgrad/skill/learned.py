"""The learned block: the one part of a live SKILL.md / CLAUDE.md / AGENTS.md that training may change.

    <!-- SKILLGRAD:LEARNED START -->
    ## Learned preferences & procedures
    ...
    <!-- SKILLGRAD:LEARNED END -->

It is a protected region turned inside out: everything *outside* the block is hand-written and
protected, byte for byte; only the block's inner text is editable. Sleep trains the inner text as the
skill and writes it back with `replace_learned`, so no edit, rewrite or junk teacher output can reach
hand-written text. Pure functions: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from skillgrad.skill.edits import ApplyReport, Edit, apply_edits

LEARNED_START = "<!-- SKILLGRAD:LEARNED START -->"
LEARNED_END = "<!-- SKILLGRAD:LEARNED END -->"
LEARNED_HEADING = "## Learned preferences and examples"  # "example" in it: Q:/A: pairs become chat turns


class LearnedBlock(NamedTuple):
    """`text[start:end]` is the whole block with both markers; `text[inner_start:inner_end]` its content."""

    start: int
    inner_start: int
    inner_end: int
    end: int


def find_learned(text: str) -> LearnedBlock | None:
    """The first learned block, or None. A start marker with no end marker after it is a ValueError
    (the file is damaged; guessing where the block ends could swallow hand-written text)."""
    s = text.find(LEARNED_START)
    if s == -1:
        return None
    inner_start = s + len(LEARNED_START)
    e = text.find(LEARNED_END, inner_start)
    if e == -1:
        raise ValueError(f"the learned block has a start marker but no end marker ({LEARNED_END})")
    return LearnedBlock(s, inner_start, e, e + len(LEARNED_END))


def strip_learned_markers(s: str) -> str:
    """Remove the markers (repeatedly: removing one can join its neighbours into another)."""
    while True:
        out = s.replace(LEARNED_START, "").replace(LEARNED_END, "")
        if out == s:
            return out
        s = out


def as_read(text: str) -> str:
    """The text as a model reads it: the markers' own lines removed, a marker inside a line cut out. The file keeps
    them (adopt and undo find the block by them); shown to the 135M student in its system text, a reply carried
    `## SKILLGRAD:LEARNED START` (benchmarks/sleep_sessions.py)."""
    lines = [x for x in text.splitlines(keepends=True) if x.strip() not in (LEARNED_START, LEARNED_END)]
    return strip_learned_markers("".join(lines))


def ensure_learned(text: str, heading: str = LEARNED_HEADING) -> str:
    """Add an empty block at the end when there is none; the original text stays an exact prefix."""
    if find_learned(text) is not None:
        return text
    sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    return f"{text}{sep}{LEARNED_START}\n{heading}\n{LEARNED_END}\n"


def extract_learned(text: str) -> str:
    """The block's content without markers and without the line breaks next to them ('' if no block)."""
    block = find_learned(text)
    if block is None:
        return ""
    inner = text[block.inner_start:block.inner_end]
    if inner.startswith("\n"):
        inner = inner[1:]
    return inner[:-1] if inner.endswith("\n") else inner


def outside_learned(text: str) -> tuple[str, str]:
    """(text before the block, text after it): the protected, hand-written parts."""
    block = find_learned(text)
    if block is None:
        return text, ""
    return text[:block.start], text[block.end:]


def replace_learned(text: str, content: str) -> str:
    """Put `content` in the block (adding one first if needed); text outside it is unchanged, byte for byte."""
    text = ensure_learned(text)
    block = find_learned(text)
    assert block is not None  # ensure_learned made one
    inner = strip_learned_markers(content).strip("\n")
    middle = f"\n{inner}\n" if inner else "\n"
    return text[:block.start] + LEARNED_START + middle + LEARNED_END + text[block.end:]


def apply_learned_edits(text: str, edits: Iterable[Edit | Mapping[str, Any]], *,
                        lenient_anchors: bool = False) -> tuple[str, ApplyReport]:
    """Apply edits to the block's content only, with the usual per-edit report."""
    new_inner, report = apply_edits(extract_learned(text), edits, lenient_anchors=lenient_anchors)
    return replace_learned(text, new_inner), report
