"""Edit units: the changes between two versions of a skill, one unit per line added (or per changed block),
and reverting any subset of them. Used by edit-level credit to score a skill "without edit i".

Why units from the diff and not the step's Edit objects: the same code then serves every update mode
(a rewrite has no edit list) and the run-end pass over everything learned since the initial skill, and
an edit that added several lines is credited line by line, so an invented line riding inside a helpful
edit is found too (a worked example, task and reply, is one unit). Changes inside protected regions (SLOW_UPDATE, APPENDIX, ...) are not units: other
stages own them, and reverting never touches them.

Pure code: no I/O, no LLM.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

from skillgrad.skill.examples import continues_block
from skillgrad.skill.regions import find_regions

UnitKind = Literal["insert", "delete", "replace"]


@dataclass(frozen=True)
class Unit:
    index: int
    kind: UnitKind
    removed: str  # text of the lines the unit removed from `before` ('' for an insert)
    added: str    # text of the lines the unit added in `after` ('' for a delete)

    def label(self, width: int = 100) -> str:
        text = " ".join((self.added or self.removed).split())
        return text if len(text) <= width else text[: width - 1] + "…"


@dataclass(frozen=True)
class _Segment:
    before: tuple[str, ...]
    after: tuple[str, ...]
    unit: int | None  # None: unchanged text, or a change inside a protected region (never reverted)


def _protected_lines(text: str) -> set[int]:
    """Indices of the lines of `text` that overlap a protected region (markers included)."""
    starts, pos = [], 0
    for line in text.splitlines(keepends=True):
        starts.append(pos)
        pos += len(line)
    out: set[int] = set()
    for r in find_regions(text):
        for i, s in enumerate(starts):
            end = starts[i + 1] if i + 1 < len(starts) else len(text)
            if s < r.end and end > r.start:
                out.add(i)
    return out


def _segments(before: str, after: str) -> list[_Segment]:
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    prot_a, prot_b = _protected_lines(before), _protected_lines(after)
    segs: list[_Segment] = []
    n = 0
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        old, new = tuple(a[i1:i2]), tuple(b[j1:j2])
        if op == "equal" or prot_a.intersection(range(i1, i2)) or prot_b.intersection(range(j1, j2)):
            segs.append(_Segment(old, new, None))
            continue
        if not any(line.strip() for line in old + new):  # whitespace only: nothing to credit
            segs.append(_Segment(old, new, None))
            continue
        if op == "insert":  # one unit per non-blank added line; blank lines go with the nearest content line
            groups: list[list[str]] = []
            pending: list[str] = []
            for line in new:
                if not line.strip():
                    pending.append(line)
                elif not groups:
                    groups.append([*pending, line])
                    pending = []
                elif continues_block(line):  # a worked example's reply stays with its task
                    groups[-1].extend([*pending, line])
                    pending = []
                else:
                    groups[-1].extend(pending)
                    groups.append([line])
                    pending = []
            groups[-1].extend(pending)
            for grp in groups:
                segs.append(_Segment((), tuple(grp), n))
                n += 1
            continue
        segs.append(_Segment(old, new, n))
        n += 1
    return segs


def edit_units(before: str, after: str) -> list[Unit]:
    """The units that turn `before` into `after`, in document order."""
    out = []
    for s in _segments(before, after):
        if s.unit is None:
            continue
        kind: UnitKind = "insert" if not s.before else "delete" if not s.after else "replace"
        out.append(Unit(s.unit, kind, "".join(s.before), "".join(s.after)))
    return out


def revert_units(before: str, after: str, revert: set[int] | frozenset[int]) -> str:
    """`after` with the units in `revert` undone (their `before` text restored); other text untouched."""
    return "".join("".join(s.before if s.unit is not None and s.unit in revert else s.after)
                   for s in _segments(before, after))
