"""Bounded edits to a skill document and their application with a per-edit report.

Differences from SkillOpt (reference §2.6, §11.1 item 11), on purpose:
- a missing `insert_after` anchor is skipped, not silently appended (`lenient_anchors=True` restores
  SkillOpt's fallback and reports it as `applied_append_fallback`);
- the protected-region check looks at every occurrence of the target, not only the first;
- anchors match exactly first, then with whitespace normalised, and the report says which.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from skillgrad.skill.examples import add_example, append_block, remove_example
from skillgrad.skill.parse_back import parse_back
from skillgrad.skill.regions import body, find_regions, strip_markers

# `example` / `delete_example`: a worked example (target = the task, content = the reply) in the skill's
# examples section (skill/examples.py); the optimizer proposes them only after the environment verified them.
OPS = ("append", "insert_after", "replace", "delete", "example", "delete_example")
_OP_ALIASES = {"add": "append"}

Status = Literal[
    "applied_append",
    "applied_insert_after",
    "applied_replace",
    "applied_delete",
    "applied_append_fallback",
    "applied_example",
    "applied_replace_example",
    "applied_delete_example",
    "skipped_missing_anchor",
    "skipped_target_not_found",
    "skipped_protected_region",
    "skipped_unknown_op",
    "skipped_empty",
    "skipped_duplicate",
    "skipped_misparsed",
    "refused_no_content",
    "error",
]
Match = Literal["exact", "normalized"]


class Edit(BaseModel):
    model_config = ConfigDict(extra="ignore")

    op: str
    target: str = ""
    content: str = ""
    support_count: int = 1
    source_type: str = "failure"
    merge_level: int = 0
    rationale: str = ""
    failure_kind: str = Field("", description="missing_knowledge | wrong_procedure | format | ''")

    @field_validator("op", mode="before")
    @classmethod
    def _op(cls, v: Any) -> str:
        op = str(v or "").strip().lower()
        return _OP_ALIASES.get(op, op)

    @field_validator("target", "content", "rationale", "source_type", "failure_kind", mode="before")
    @classmethod
    def _text(cls, v: Any) -> str:
        return "" if v is None else str(v)

    @field_validator("support_count", "merge_level", mode="before")
    @classmethod
    def _count(cls, v: Any) -> Any:
        return 0 if v is None else v


class EditOutcome(BaseModel):
    index: int
    op: str
    status: Status
    detail: str = ""
    match: Match | None = None


class ApplyReport(BaseModel):
    outcomes: list[EditOutcome] = Field(default_factory=list)
    total: int = 0
    applied: int = 0
    skipped: int = 0
    errors: int = 0

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable dict (the content of edit_apply_report.json)."""
        return self.model_dump(mode="json")


# ---------------------------------------------------------------- matching


def _normalize(s: str) -> str:
    return " ".join(s.split())


def _normalized_index(text: str) -> tuple[str, list[int]]:
    """Whitespace-collapsed, stripped text and, per character, its index in `text`."""
    out: list[str] = []
    idx: list[int] = []
    for m in re.finditer(r"\s+|\S+", text):
        if m.group().isspace():
            if out:  # leading whitespace is stripped; trailing is removed below
                out.append(" ")
                idx.append(m.start())
        else:
            out.extend(m.group())
            idx.extend(range(m.start(), m.end()))
    if out and out[-1] == " ":
        out.pop()
        idx.pop()
    return "".join(out), idx


def _all_occurrences(haystack: str, needle: str) -> list[int]:
    found: list[int] = []
    i = haystack.find(needle)
    while i != -1:
        found.append(i)
        i = haystack.find(needle, i + 1)  # overlapping occurrences count too
    return found


def _find(text: str, target: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(exact spans, whitespace-normalised spans) of `target` in `text`, in document order."""
    exact = [(i, i + len(target)) for i in _all_occurrences(text, target)]
    norm_target = _normalize(target)
    if not norm_target:
        return exact, []
    norm_text, idx = _normalized_index(text)
    normalized = [
        (idx[i], idx[i + len(norm_target) - 1] + 1) for i in _all_occurrences(norm_text, norm_target)
    ]
    return exact, normalized


def _overlaps_region(text: str, spans: Iterable[tuple[int, int]]) -> bool:
    regions = find_regions(text)
    return any(s < r.end and e > r.start for s, e in spans for r in regions)


def _blocks(text: str) -> list[str]:
    return [text[r.start : r.end] for r in find_regions(text)]


def _tail_if_canonical(text: str) -> str | None:
    regions = find_regions(text)
    if not regions:
        return None
    tail = text[regions[0].start :]
    outside = [text[a.end : b.start] for a, b in zip(regions, regions[1:], strict=False)]
    outside.append(text[regions[-1].end :])
    return tail if all(not o.strip() for o in outside) else None


# ---------------------------------------------------------------- operations


def _norm(s: str) -> str:
    return " ".join(s.split()).casefold()


def _append(text: str, content: str) -> str:
    return append_block(text, content)


def _line_end(text: str, end: int) -> int:
    """Index just after the line that contains position end-1 (the anchor's last character)."""
    if end > 0 and text[end - 1] == "\n":
        return end
    nl = text.find("\n", end)
    return len(text) if nl == -1 else nl + 1


def _clean_content(content: str) -> str:
    return strip_markers(content).strip("\n").rstrip()


def _apply_one(text: str, edit: Edit, lenient: bool) -> tuple[str, Status, str, Match | None]:
    op = edit.op
    if op not in OPS:
        return text, "skipped_unknown_op", f"unknown op {op!r}", None
    content = _clean_content(edit.content)

    if op == "example":
        new, status = add_example(text, strip_markers(edit.target), content)
        return new, status, "", None  # type: ignore[return-value]
    if op == "delete_example":
        new, status = remove_example(text, edit.target)
        return new, status, "", None  # type: ignore[return-value]

    if op == "append":
        if not content:
            return text, "skipped_empty", "empty content", None
        if _norm(content) in _norm(body(text)):  # re-adding a line the skill already has changes nothing
            return text, "skipped_duplicate", "content already in the skill", None
        return _append(text, content), "applied_append", "", None

    target = edit.target
    if op == "insert_after" and not content:
        return text, "skipped_empty", "empty content", None
    if not target.strip():
        if op == "insert_after":
            if lenient:
                return _append(text, content), "applied_append_fallback", "empty anchor; appended", None
            return text, "skipped_missing_anchor", "empty anchor", None
        return text, "skipped_empty", "empty target", None

    exact, normalized = _find(text, target)
    # Normalised spans cover the exact ones; check both so no occurrence escapes the region rule.
    if _overlaps_region(text, exact + normalized):
        return text, "skipped_protected_region", "target occurs inside a protected region", None
    match: Match
    if exact:
        (s, e), match = exact[0], "exact"
    elif normalized:
        (s, e), match = normalized[0], "normalized"
    else:
        if op == "insert_after":
            if lenient:
                return _append(text, content), "applied_append_fallback", "anchor not found; appended", None
            return text, "skipped_missing_anchor", "anchor not found", None
        return text, "skipped_target_not_found", "target not found", None

    if op == "insert_after":
        p = _line_end(text, e)
        if any(r.start < p < r.end for r in find_regions(text)):
            return text, "skipped_protected_region", "insertion point inside a protected region", None
        prefix = text[:p] if p == 0 or text[p - 1] == "\n" else text[:p] + "\n"
        return prefix + content + "\n" + text[p:], "applied_insert_after", "", match

    if op == "replace":
        new = strip_markers(edit.content)
        # Keep the target's own line structure: no blank lines introduced around an inline target.
        if not target.startswith("\n"):
            new = new.lstrip("\n")
        if not target.endswith("\n"):
            new = new.rstrip("\n")
        return text[:s] + new + text[e:], "applied_replace", "", match

    # delete: removing a whole line also removes its line break
    if (s == 0 or text[s - 1] == "\n") and e < len(text) and text[e] == "\n":
        e += 1
    return text[:s] + text[e:], "applied_delete", "", match


def _one_line(exc: Exception) -> str:
    first = (str(exc).splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first}"[:300]


def apply_edits(
    text: str, edits: Iterable[Edit | Mapping[str, Any]], *, lenient_anchors: bool = False
) -> tuple[str, ApplyReport]:
    """Apply edits in order; every edit gets an outcome and none raises.

    An edit whose result would change a protected block (or move the canonical tail) is reverted and
    reported as skipped_protected_region, whatever the reason (e.g. text joined into a marker).
    """
    report = ApplyReport()
    for i, raw in enumerate(edits):
        op = ""
        try:
            op = str(raw.get("op", "")) if isinstance(raw, Mapping) else str(getattr(raw, "op", ""))
            edit = raw if isinstance(raw, Edit) else Edit.model_validate(raw)
            op = edit.op
            new, status, detail, match = _apply_one(text, edit, lenient_anchors)
            if new != text:
                tail = _tail_if_canonical(text)
                if _blocks(new) != _blocks(text) or (tail is not None and not new.endswith(tail)):
                    new, status, detail, match = text, "skipped_protected_region", "edit would alter a protected region", None
            if new != text:  # the parser must read the edit as it was written (skill/parse_back.py)
                read, note = parse_back(text, new)
                if read is None:
                    new, status, detail, match = text, "skipped_misparsed", note, None
                else:
                    new, detail = read, "; ".join(x for x in (detail, note) if x)
            text = new
            outcome = EditOutcome(index=i, op=op, status=status, detail=detail, match=match)
        except Exception as exc:  # an edit never raises
            outcome = EditOutcome(index=i, op=str(op), status="error", detail=_one_line(exc))
        report.outcomes.append(outcome)
    report.total = len(report.outcomes)
    report.applied = sum(o.status.startswith("applied_") for o in report.outcomes)
    report.skipped = sum(o.status.startswith("skipped_") for o in report.outcomes)
    report.errors = sum(o.status == "error" for o in report.outcomes)
    return text, report
