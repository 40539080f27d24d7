"""Examples bootstrapped from passing replies: the student's own reply on a task it passed (no teacher call; the
rollout's score is the verification), as in bootstrapped few-shot demonstrations.

Under the small-student strategy a reply that opens with the student's stock opening is offered with it cut
(engine/proposers/openings.py), verified again by the environment's scorer (at most 4 x `limit` cuts a step: a
rubric verifier costs a call each).

Entry point: `bootstrap`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from skillgrad.engine.proposers.filters import Filters
from skillgrad.engine.proposers.openings import without_stock_opening
from skillgrad.engine.proposers.result import DemoResult, edit, entry
from skillgrad.engine.proposers.wording import Wordings
from skillgrad.envs.base import ExampleVerifier, Item, Trajectory
from skillgrad.models.base import LLM


async def bootstrap(passed: Sequence[Trajectory], items: dict[str, Item], env: Any, student: LLM, filters: Filters,
                    wordings: Wordings, result: DemoResult, *, limit: int) -> None:
    """At most `limit` examples from passing replies, shortest first, into `result`."""
    trims = 0
    verifier = isinstance(env, ExampleVerifier)
    for t in sorted(passed, key=lambda t: len(t.answer)):
        if len(result.items) >= limit:
            break
        fixed = t.contract.fixed_texts() if t.contract is not None else ()
        cut = without_stock_opening(t.answer, filters.stock, fixed) if filters.stock else ""
        if cut and verifier and t.item_id in items and trims < 4 * limit \
                and not filters.why_not(t, cut, "passing_rollout_trimmed") and not filters.repeat_why(t, cut):
            trims += 1
            if float(await env.verify_example(items[t.item_id], cut, student)) >= 1.0 - 1e-9:
                filters.show(t, cut)
                result.items.append(edit(t, cut, "passing_rollout_trimmed", wordings.ask(t.question)))
                result.log.append(entry(t, cut, "passing_rollout_trimmed", 1.0, True,
                                        "the rollout passed; its stock opening cut, the scorer passed the rest"))
                continue
        if why := filters.why_not(t, t.answer, "passing_rollout") or filters.repeat_why(t, t.answer):
            result.log.append(entry(t, t.answer, "passing_rollout", t.hard, False, why))
            continue
        filters.show(t, t.answer)
        result.items.append(edit(t, t.answer, "passing_rollout", wordings.ask(t.question)))
        result.log.append(entry(t, t.answer, "passing_rollout", t.hard, True, "the rollout passed"))
