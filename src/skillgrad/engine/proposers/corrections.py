"""Teacher corrections: for a task the student failed, the teacher writes the reply it should have given (one small
call each); the task's gold answer is the next candidate. Under the small-student strategy, repairs of these and of
the student's own reply follow (engine/proposers/repairs.py). The environment's scorer verifies each.

The failures are corrected together (a handoff teacher gets them in one round), and their results enter the repeat
filter in task order, never in the order the calls finish: with an API teacher the faster call's example would
otherwise survive and the slower one be refused (issue 29).

Entry point: `corrections`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from skillgrad.core.gather import gather_all
from skillgrad.engine.demo_limits import earlier_line, limit_line
from skillgrad.engine.evidence import render_trajectory
from skillgrad.engine.proposers.filters import GOLD, Filters
from skillgrad.engine.proposers.openings import without_stock_opening
from skillgrad.engine.proposers.repairs import candidates
from skillgrad.engine.proposers.result import DemoResult, edit, entry, first_passing, gold_answer
from skillgrad.engine.proposers.wording import Wordings
from skillgrad.engine.schemas import demonstration_model
from skillgrad.engine.teacher import TeacherCall
from skillgrad.envs.base import Item, ReplyContract, Trajectory
from skillgrad.envs.trajectory import gold_text
from skillgrad.models.base import LLM


def teacher_view(t: Trajectory, skill: str, *, compact: bool, limit: str = "", earlier: str = "") -> str:
    """The failed task as the teacher reads it, with the limit its reply is held to and, when the task is asked
    again, why (engine/demo_limits.py). Compact (small teachers copy the last line they read): the task, the reply
    (not for a fact the student lacks: a wrong fact only gets copied), what was wrong, the limit, the expected
    answer last. The compact template shows the skill: whatever the window, no teacher is asked for an example
    without the skill it goes into or the limit it is held to (issue 31)."""
    if not compact:
        return "\n".join([render_trajectory(t, skill), *(x for x in (limit, earlier) if x)])
    lines = [f"Task: {t.question.strip()}"]
    if t.fail_kind != "missing_knowledge":
        lines.append(f"The assistant replied: {' '.join(t.answer.split())[:300] or '(nothing)'}")
    if t.fail_reason:
        lines.append(f"What was wrong: {t.fail_reason}")
    lines += [x for x in (limit, earlier) if x]
    lines.append(f"Expected answer: {gold_text(t.gold)}")
    return "\n".join(lines)


def own_candidates(t: Trajectory, stock: set[tuple[str, ...]]) -> list[tuple[str, str]]:
    """The small student's own failed reply repaired, then without its stock opening and that cut repaired."""
    c = t.contract or ReplyContract()
    out = [(x, "own_reply_repair") for x in candidates(t.answer, c, t.question)]
    cut = without_stock_opening(t.answer, stock, c.fixed_texts()) if stock else ""
    if cut:
        out += [(cut, "own_reply_trimmed"), *((x, "own_reply_trimmed") for x in candidates(cut, c, t.question))]
    return out


async def corrections(failed: Sequence[Trajectory], items: dict[str, Item], skill: str, teacher: TeacherCall,
                      env: Any, student: LLM, filters: Filters, wordings: Wordings, result: DemoResult, *,
                      max_chars: int, compact: bool, sample: int, repairs: bool,
                      earlier: dict[str, tuple[int, str, str]] | None = None, other_model: bool = False) -> None:
    """One teacher correction per task of `failed`, verified, into `result` in task order. `earlier`: a task's
    refused correction of an earlier step, told when it is asked again. `other_model`: the teacher is another
    model than the student."""
    schema = demonstration_model(max_chars)
    # a teacher that is another model than the student, or has a window over 4,096 tokens (not compact), writes beyond
    # the small student: a handoff agent under a config that sets teacher.n_ctx: 4096 is one.
    # The shared lists stay shared, so examples shown by one task's correction are seen by the next
    judged = dataclasses.replace(filters, capable_teacher=other_model or not compact)

    async def one(t: Trajectory) -> tuple[list[dict[str, Any]], str, str, bool, str, str]:
        log: list[dict[str, Any]] = []
        view = teacher_view(t, skill, compact=compact, earlier=earlier_line((earlier or {}).get(t.item_id)),
                            limit=limit_line(env, items.get(t.item_id), student, t.question, max_chars))
        # a small teacher (compact) gets the short prompt, without the syntax note; the skill and the limit are in both
        answer = await teacher.ask("demonstrate_compact" if compact else "demonstrate", schema, stage="demonstrate",
                                   values={"skill": skill.strip()}, evidence_key="task", evidence=[view],
                                   sample=sample)
        text = str(getattr(answer.parsed, "reply", "") or "").strip() if answer.parsed is not None else ""
        if not text:
            log.append(entry(t, answer.raw, "teacher_correction", None, False,
                             f"no usable reply: {answer.error or 'empty'}"))
        gold, c = gold_answer(t), t.contract or ReplyContract()
        # the teacher's reply that is the gold answer itself counts as the gold (exempt from the refusal filter)
        cands = [(text, "teacher_correction")] if text != gold else []
        cands.append((gold, GOLD))
        if repairs:
            cands += [(x, "teacher_repair") for x in candidates(text, c, t.question)]
            cands += [(x, "gold_repair") for x in candidates(gold, c, t.question)]
            cands += own_candidates(t, filters.stock)
        reasons: dict[str, str] = {}
        reply, source, tried = await first_passing(t, cands, env, items[t.item_id], student, judged, log, reasons)
        return log, reply, source, tried, text, reasons.get(text, "")

    chosen = await gather_all(*(one(t) for t in failed))  # in task order, however the calls finish
    for t, (log, reply, source, tried, text, text_why) in zip(failed, chosen, strict=True):
        result.log.extend(log)
        if reply and (why := filters.repeat_why(t, reply)):
            result.log.append(entry(t, reply, source, 1.0, False, f"repeat: {why}"))
        elif reply:
            filters.show(t, reply)
            result.items.append(edit(t, reply, source, wordings.ask(t.question)))
            result.log.append(entry(t, reply, source, 1.0, True, "the environment's scorer passed it"))
        # the rule that refused the teacher's own reply (length, checks, guard, repeat), also when another candidate
        # passed in its place: the teacher is told it when the task is asked again (engine/demo_limits.py)
        if text and reply != text:
            why = text_why or ("not scored: the scorer's tries went to other candidates" if tried else
                               "refused before scoring: no candidate left")
            result.log.append(entry(t, text, "teacher_correction", 0.0 if tried else None, False, why))
