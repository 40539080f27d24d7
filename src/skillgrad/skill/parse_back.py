"""Parse-back preview of an edit: would the skill's parser read the edited text as its writer meant it?

A worked example is a `Q:`/`A:` pair under a heading that contains "Example", its further lines indented by three
spaces (skill/examples.py). An edit written without that layout is read otherwise, in silence: an unindented
second line of a reply is cut from the example (the student never gets it as part of the reply), a `## Heading`
line of a reply closes the Examples section, and the pairs after it are no examples at all. Measured with a capable
teacher through handoff (issue 31): every multi-line example was cut to its first line, and a `## Key Risks` line
inside one made all six candidates of the run fail.

`parse_back(before, after)` compares the edited text with the text before the edit and either repairs what it can
say for sure (lines that directly continue a `Q:` or `A:` line, headings among them, are indented) or refuses the
edit with the reason. Problems the skill already had are not the edit's. Pure functions: no I/O.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from skillgrad.skill.examples import _A, _HEADING, _MARKER, _Q, INDENT


@dataclass
class _Found:
    cut: list[int] = field(default_factory=list)  # lines that continue a Q:/A: line unindented (cut from it)
    stray: list[int] = field(default_factory=list)  # Q: lines of pairs outside any Examples section


def _pair(lines: list[str], i: int) -> bool:
    """A `Q:` line at `i` with an `A:` line before the next blank line (a worked example as written)."""
    for line in lines[i + 1:]:
        if not line.strip() or _Q.match(line):
            return False
        if _A.match(line):
            return True
    return False


def _find(lines: list[str]) -> _Found:
    found = _Found()
    level = 0  # the open Examples section's heading level (0 = none)
    block = False  # the line above belongs to a Q:/A: line (no blank line since)
    for i, line in enumerate(lines):
        heading = _HEADING.match(line)
        if heading:
            if level and block:  # a heading right under a reply's line: part of the reply, but it closes the section
                found.cut.append(i)
                continue
            lvl = len(heading.group(1))
            if level and lvl <= level:
                level = 0
            if "example" in heading.group(2).lower() and not level:
                level = lvl
            block = False
            continue
        if _MARKER.match(line):
            level, block = 0, False
            continue
        if not line.strip():
            block = False
            continue
        if _Q.match(line) or _A.match(line):
            if not level and _Q.match(line) and _pair(lines, i):
                found.stray.append(i)
            block = bool(level)
            continue
        if level and block and not line[:1].isspace():
            found.cut.append(i)
    return found


def _new(lines: list[str], idx: list[int], old_lines: list[str], old_idx: list[int]) -> list[int]:
    """The lines of `idx` that the text before the edit did not have at such a place (by their text)."""
    left = Counter(old_lines[i].strip() for i in old_idx)
    out = []
    for i in idx:
        key = lines[i].strip()
        if left[key]:
            left[key] -= 1
        else:
            out.append(i)
    return out


def parse_back(before: str, after: str) -> tuple[str | None, str]:
    """(the text to use, a note) for an edit that turned `before` into `after`: `after` itself with '' when the
    parser reads it as written; repaired with a note saying what was indented; None with the reason when the edit
    would be misread and cannot be repaired for sure."""
    lines, old = after.splitlines(), before.splitlines()
    f, g = _find(lines), _find(old)
    cut, stray = _new(lines, f.cut, old, g.cut), _new(lines, f.stray, old, g.stray)
    if stray:
        q = lines[stray[0]].strip()[:80]
        return None, (f"misparsed: the worked example {q!r} is outside any Examples section, so it is no example "
                      "(a heading line above it closed the section, or no '## Examples' heading opens one); put "
                      "examples under '## Examples' and indent a heading that belongs to a reply by 3 spaces")
    if not cut:
        return after, ""
    fixed = list(lines)
    for i in cut:
        fixed[i] = INDENT + fixed[i]
    text = "\n".join(fixed) + ("\n" if after.endswith("\n") else "")
    if _new(fixed, _find(fixed).cut, old, g.cut):  # not repaired after all: refuse rather than guess
        return None, "misparsed: a worked example's further lines are not indented by 3 spaces"
    shown = lines[cut[0]].strip()[:60]
    return text, (f"repaired: indented {len(cut)} line(s) of a worked example by 3 spaces (first: {shown!r}); "
                  "unindented, they were cut from the example" + (" and a heading among them closed the Examples "
                                                                   "section" if any(_HEADING.match(lines[i])
                                                                                    for i in cut) else ""))
