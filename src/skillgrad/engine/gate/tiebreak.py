"""A tie on validation, broken on the step's training tasks (`train.tiebreak`).

Six validation items saturate fast: in the suite, review-sections scored 1.0 on validation after one step and
0.6 held-out, and push-length 1.0 and 0.6. Two skills at full marks on validation cannot be told apart there, so
the strict gate (ties reject) rejected every later candidate and the run stopped; below the ceiling, push-length's
later candidates tied at 5 of 6 and were rejected the same way. The step's rollout already scored the incumbent
(the current skill) on the step's training tasks; a candidate that ties it on validation is run on the same tasks
and accepted when it passes strictly more of them. Tasks whose question is a worked example in either skill are
left out (an example answers its own task). The test split is never read.

`pass_rate` is the same measure for one skill (the run stops at the ceiling only once the best skill also passes
every such training task, engine/trainer.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skillgrad.engine.gate.early import TiebreakStop
from skillgrad.engine.proposers.wording import asks
from skillgrad.envs.base import Item, Trajectory
from skillgrad.skill.examples import find_examples

if TYPE_CHECKING:
    from skillgrad.engine.context import RunContext


def unseen(trajs: list[Trajectory], *skills: str) -> list[Trajectory]:
    """The trajectories whose task is not a worked example of any of `skills` (and ran without an env error)."""
    have = [e.question for s in skills for e in find_examples(s)]
    return [t for t in trajs if not t.env_error and not any(asks(t.question, q) for q in have)]


def pass_rate(trajs: list[Trajectory], skill: str) -> float | None:
    """Share of `skill`'s training tasks passed, its own example tasks left out; None when none is left."""
    left = unseen(trajs, skill)
    return sum(not t.failed for t in left) / len(left) if left else None


async def train_tiebreak(ctx: RunContext, folder: str, incumbent: str, candidate: str, rollout: list[Trajectory],
                         batch: list[Item]) -> tuple[bool, dict[str, Any]]:
    """Whether `candidate` passes strictly more of the step's training tasks than the incumbent did in the step's
    rollout (`rollout`, run with `incumbent`), on the tasks neither skill holds as an example; its record."""
    left = unseen(rollout, incumbent, candidate)
    ids = {t.item_id for t in left}
    items = [it for it in batch if it.id in ids]
    if not items:
        return False, {"decided_by": "train_tiebreak", "n_items": 0,
                       "reason": "a tie on validation; no training task left to break it"}
    before = sum(not t.failed for t in left)
    # the early stop (evaluation.gate_early_stop): no further task once it cannot pass more than `before`; the
    # tasks the incumbent failed go first
    stop = TiebreakStop(before, frozenset(t.item_id for t in left if t.failed)) \
        if ctx.cfg.evaluation.gate_early_stop else None
    res = await ctx.run_items(f"{folder}/tiebreak_train", items, candidate, stage="tiebreak", train=True, stop=stop)
    if res.capped is not None:  # not a measured pass rate: nothing for the ceiling stop to keep
        most = int(res.capped[2])
        return False, {"decided_by": "train_tiebreak", "n_items": len(items), "incumbent_passed": before,
                       "candidate_passed": None, "candidate_passed_at_most": most, "n_scored": res.n,
                       "early_stop": True,
                       "reason": f"a tie on validation; stopped after {res.n} of {len(items)} training tasks: the "
                                 f"candidate can pass at most {most}, not more than the incumbent's {before}"}
    after = sum(not t.failed for t in res.trajectories if t.item_id in ids and not t.env_error)
    passed = after > before
    return passed, {"decided_by": "train_tiebreak", "n_items": len(items), "incumbent_passed": before,
                    "candidate_passed": after, "candidate_train_hard": after / len(items),
                    "reason": f"a tie on validation; training tasks passed {after}/{len(items)} vs "
                              f"{before}/{len(items)} for the incumbent"}
