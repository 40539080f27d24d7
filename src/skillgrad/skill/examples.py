"""Worked examples in a skill: the `Q:`/`A:` pairs under a heading that contains "Example".

One parser serves both sides: the environments lift the pairs out of the system text and send them as chat
turns (envs/chat.py), and the optimizer's demonstration edits add, replace and remove pairs here. A
multi-line question or reply continues on indented lines (a blank line inside it is kept when the next
line is indented again), so a reply with its own headings or list stays one example:

    ## Examples
    Q: Summarise the outage.
    A: ## Summary
       The API was down for 20 minutes.

Pure functions: no I/O.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

from skillgrad.skill.regions import find_regions

EXAMPLES_HEADING = "## Examples"
INDENT = "   "

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_Q = re.compile(r"^\s*(?:[-*]\s+)?(?:\*\*)?Q(?:uestion)?\s*:(?:\*\*)?\s*(.*)$", re.IGNORECASE)
_MARKER = re.compile(r"^\s*<!--\s*[A-Z_:]+[ _](?:START|END)\s*-->\s*$")  # protected / learned block markers
_A = re.compile(r"^\s*(?:[-*]\s+)?(?:\*\*)?A(?:nswer)?\s*:(?:\*\*)?\s*(.*)$", re.IGNORECASE)


@dataclass(frozen=True)
class Example:
    question: str
    reply: str
    start: int  # first line (the Q: line) in the document's lines
    end: int  # one past the last line of the reply
    section: int  # line of the example section's heading


def _indented(line: str) -> bool:
    return bool(line.strip()) and line[:1] in (" ", "\t")


def continues_block(line: str) -> bool:
    """A line that belongs to the text above it: an indented line, or an example's `A:` line (an edit-credit
    unit never splits a worked example from its task)."""
    return _indented(line) or bool(_A.match(line))


def _continuation(lines: list[str], i: int) -> int:
    """Index after the indented lines (and blank lines between indented ones) that start at `i`."""
    j = i
    while j < len(lines):
        if _indented(lines[j]):
            j += 1
            continue
        k = j
        while k < len(lines) and not lines[k].strip():
            k += 1
        if k < len(lines) and k > j and _indented(lines[k]):
            j = k
            continue
        break
    return j


def _join(first: str, more: list[str]) -> str:
    rest = textwrap.dedent("\n".join(more)).rstrip() if more else ""
    return (first.strip() + ("\n" + rest if rest else "")).strip()


@dataclass
class _Scan:
    examples: list[Example]
    sections: list[tuple[int, int]]  # (heading line, end line) of every example section
    prose: set[int]  # example sections that hold text besides their examples (heading line)


def _scan(lines: list[str]) -> _Scan:
    out = _Scan([], [], set())
    level = head = 0  # open example section: its heading level (0 = none) and heading line
    pending: tuple[int, str] | None = None  # a Q: line waiting for its A:: (start line, question)
    i = 0
    while i < len(lines):
        line = lines[i]
        heading = _HEADING.match(line) or _MARKER.match(line)
        if heading:  # a block marker closes a section like a top-level heading and opens none
            lvl, is_example = (len(heading.group(1)), "example" in heading.group(2).lower()) if heading.re is _HEADING \
                else (0, False)
            if level and lvl <= level:
                if pending is not None:
                    out.prose.add(head)
                    pending = None
                out.sections.append((head, i))
                level = 0
            if is_example and not level:
                level, head = lvl, i
            i += 1
            continue
        if not level:
            i += 1
            continue
        q, a = _Q.match(line), _A.match(line)
        if q:
            if pending is not None:
                out.prose.add(head)
            end = _continuation(lines, i + 1)
            pending = (i, _join(q.group(1), lines[i + 1:end]))
            i = end
            continue
        if a and pending is not None:
            end = _continuation(lines, i + 1)
            out.examples.append(Example(pending[1], _join(a.group(1), lines[i + 1:end]), pending[0], end, head))
            pending = None
            i = end
            continue
        if line.strip():
            out.prose.add(head)
        i += 1
    if level:
        if pending is not None:
            out.prose.add(head)
        out.sections.append((head, len(lines)))
    return out


def find_examples(skill: str) -> list[Example]:
    """Every `Q:`/`A:` pair in an example section, in document order."""
    return _scan(skill.splitlines()).examples


def split_examples(skill: str) -> tuple[str, list[tuple[str, str]]]:
    """Remove the example pairs; return (the rest of the text, [(question, reply), ...]).

    An example section ends at the next heading of the same or a higher level. A section left with nothing
    but its heading(s) is removed (a protected-region or learned-block marker also ends a section); a `Q:` line with no `A:` after it stays in the text.
    """
    lines = skill.splitlines()
    scan = _scan(lines)
    drop: set[int] = set()
    for ex in scan.examples:
        drop.update(range(ex.start, ex.end))
    for head, end in scan.sections:
        if head not in scan.prose:
            drop.update(range(head, end))
    text = "\n".join(line for n, line in enumerate(lines) if n not in drop)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text, [(ex.question, ex.reply) for ex in scan.examples]


def render_example(question: str, reply: str) -> str:
    """`Q: ...` and `A: ...` lines; the later lines of a multi-line question or reply are indented."""

    def block(label: str, text: str) -> list[str]:
        first, *more = text.strip().splitlines() or [""]
        return [f"{label} {first.strip()}", *[(INDENT + m if m.strip() else "") for m in more]]

    return "\n".join(block("Q:", question) + block("A:", reply))


def _norm(s: str) -> str:
    return " ".join(s.split()).casefold()


def append_block(text: str, block: str) -> str:
    """`block` at the end of the body, before the protected regions, after one blank line."""
    regions = find_regions(text)
    p = regions[0].start if regions else len(text)
    before, after = text[:p], text[p:]
    head = before.rstrip()
    new = (head + "\n\n" if head else "") + block + "\n"
    return new + ("\n" + after if after else "")


def _outside_regions(text: str, lines: list[str], line_no: int) -> bool:
    offset = sum(len(x) + 1 for x in lines[:line_no])
    return not any(r.start <= offset < r.end for r in find_regions(text))


def add_example(skill: str, question: str, reply: str) -> tuple[str, str]:
    """Add a worked example; returns (new skill, status).

    Status: `applied_example` (appended to the first example section, created as `## Examples` when there is
    none), `applied_replace_example` (the same question already had another reply), `skipped_duplicate`, or
    `skipped_empty`. Examples inside protected regions are never touched.
    """
    if not question.strip() or not reply.strip():
        return skill, "skipped_empty"
    lines = skill.splitlines()
    scan = _scan(lines)
    rendered = render_example(question, reply).splitlines()
    for ex in scan.examples:
        if _norm(ex.question) == _norm(question) and _outside_regions(skill, lines, ex.start):
            if _norm(ex.reply) == _norm(reply):
                return skill, "skipped_duplicate"
            new = lines[:ex.start] + rendered + lines[ex.end:]
            return _rejoin(skill, new), "applied_replace_example"
    for head, end in scan.sections:
        if _outside_regions(skill, lines, head):
            while end > head + 1 and not lines[end - 1].strip():
                end -= 1
            new = lines[:end] + rendered + lines[end:]
            return _rejoin(skill, new), "applied_example"
    return append_block(skill, f"{EXAMPLES_HEADING}\n" + "\n".join(rendered)), "applied_example"


def remove_example(skill: str, question: str) -> tuple[str, str]:
    """Remove the example whose question matches (whitespace and case ignored); an example section left
    empty goes too. Status: `applied_delete_example` or `skipped_target_not_found`."""
    lines = skill.splitlines()
    scan = _scan(lines)
    for ex in scan.examples:
        if _norm(ex.question) == _norm(question) and _outside_regions(skill, lines, ex.start):
            drop = set(range(ex.start, ex.end))
            rest = [e for e in scan.examples if e.section == ex.section and e is not ex]
            if not rest and ex.section not in scan.prose:
                end = next(e for h, e in scan.sections if h == ex.section)
                drop.update(range(ex.section, end))
            first = min(drop)
            new = [line for n, line in enumerate(lines) if n not in drop]
            if 0 < first < len(new) and not new[first].strip() and not new[first - 1].strip():
                del new[first]  # no double blank line where the example was
            return _rejoin(skill, new), "applied_delete_example"
    return skill, "skipped_target_not_found"


def _rejoin(original: str, lines: list[str]) -> str:
    text = "\n".join(lines)
    return text + "\n" if original.endswith("\n") and text else text
