"""Skill lineage: for each line of best_skill.md, the step (and the edit) that put it there.

Computed from the saved versions (skills/skill_vNNNN.md = the current skill after step N) by aligning
each version with the one before: lines kept keep their origin, new lines take the step's number.
An epoch's slow update is written into the version of that epoch's last step, so a line that step's
edits do not contain is credited to the epoch-end update.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillgrad.runs.report_data import RunData, as_int
from skillgrad.skill.examples import render_example


@dataclass
class LineOrigin:
    number: int
    text: str
    step: int | None  # None: in the initial skill
    edit: dict[str, Any] | None  # the apply-report outcome that wrote it, when one matches
    note: str


def _carry(prev_lines: list[str], prev_origin: list[int | None], lines: list[str], step: int | None) -> list[int | None]:
    origin: list[int | None] = [step] * len(lines)
    sm = difflib.SequenceMatcher(a=prev_lines, b=lines, autojunk=False)
    for block in sm.get_matching_blocks():
        for k in range(block.size):
            origin[block.b + k] = prev_origin[block.a + k]
    return origin


def _applied(data: RunData, step: int) -> list[dict[str, Any]]:
    rep = data.read_json(Path("steps") / f"step_{step:04d}" / "edit_apply_report.json", dict) or {}
    return [o for o in rep.get("outcomes") or [] if isinstance(o, dict) and str(o.get("status", "")).startswith("applied")]


def _match_edit(line: str, outcomes: list[dict[str, Any]]) -> dict[str, Any] | None:
    s = line.strip()
    if not s:
        return None
    for o in outcomes:
        if o.get("op") == "example":  # a worked example is written as `Q: <target>` / `A: <content>` lines
            rendered = render_example(str(o.get("target") or ""), str(o.get("content") or ""))
            if s in {r.strip() for r in rendered.splitlines() if r.strip()}:
                return o
            continue
        content = str(o.get("content") or "")
        if s in content or (len(content.strip()) > 8 and content.strip() in s):
            return o
    return None


def lineage(data: RunData) -> list[LineOrigin]:
    best_path = data.best_skill()
    best = data.read_text(best_path)
    if best is None:
        return []
    versions = sorted(data.skills)
    prev_lines: list[str] = []
    prev_origin: list[int | None] = []
    best_step = as_int(data.summary_get("best_step"))
    if best_step is None:
        best_step = as_int((data.runtime_state or {}).get("best_step"))
    chain = [v for v in versions if best_step is None or v <= best_step] or versions
    for i, v in enumerate(chain):
        lines = (data.read_text(data.skills[v]) or "").splitlines()
        prev_origin = _carry(prev_lines, prev_origin, lines, None if i == 0 else v)
        prev_lines = lines
    best_lines = best.splitlines()
    origin = _carry(prev_lines, prev_origin, best_lines, best_step)
    cache: dict[int, list[dict[str, Any]]] = {}
    out: list[LineOrigin] = []
    for n, (text, step) in enumerate(zip(best_lines, origin, strict=True), start=1):
        edit, note = None, "initial skill"
        if step is not None:
            edit = _match_edit(text, cache.setdefault(step, _applied(data, step)))
            if edit is not None:
                note = f"step {step}: {edit.get('op')} (edit #{edit.get('index')})"
            elif text.strip():
                note = f"step {step} (epoch-end update or rewrite)"
            else:
                note = f"step {step}"
        out.append(LineOrigin(n, text, step, edit, note))
    return out
