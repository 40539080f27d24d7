"""The gate stops scoring a candidate once it can no longer pass (`evaluation.gate_early_stop`, default on).

Every rule of the gate (engine/candidate.py) starts with the strict comparison: a candidate whose selection
score is not above the incumbent's is rejected, and with `train.tiebreak` only an exact tie goes on to the
training tasks. The paired tests, `gate_min_delta` and `gate_no_regression` (engine/gate/rule.py) only ever
turn an accept into a reject. So once the items scored so far cap the candidate's score below the incumbent's
(below or at it when a tie loses), the remaining items cannot change the verdict: it is a reject whatever
they score, and they are not run.

The cap is the score the full gate would compute if every item not yet scored (or crashed in the environment)
got full marks (hard 1, soft 1), computed with the same arithmetic in the same item order (the selection
score is `gate_score(mean hard, mean soft) + bonus`; a sum of floats rounds monotonically in each term), so
the candidate's real score can never exceed it and the early verdict is the full gate's, bit for bit.
A score outside [0, 1] (an environment that does not keep to its protocol) turns the early stop off for that
evaluation. Where the verdict needs the whole score (`force`, the gate turned off for the current skill) there
is no early stop; the estimate (engine/estimate.py) keeps counting the whole selection split, an upper bound.

Items the incumbent failed are started first (a candidate fails them most often, so a loser shows it sooner);
only the launch order changes, the score is summed in selection order. The tie-break on training tasks
(engine/gate/tiebreak.py) stops the same way once the candidate cannot pass more tasks than the incumbent did
(`TiebreakStop`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from skillgrad.engine.gate.paired import gate_score
from skillgrad.envs.base import Item

PASS_MIN = 1e-9  # a trajectory passes at this hard score or above (envs/base.py, Trajectory.failed)
# an item not yet scored is counted at this (the most any item can score: hard and soft are in [0, 1])
ITEM_MAX = 1.0


def first_then_rest(items: Sequence[Item], first: frozenset[str]) -> list[Item]:
    """`items` with those in `first` started first, each part in its own order."""
    return [it for it in items if it.id in first] + [it for it in items if it.id not in first]


class ItemStop(Protocol):
    """What `RunContext.run_items` needs of an early stop: the order to start items in, and whether the items
    scored so far (selection order, None = not scored) settle the verdict (then a bound to record, else None)."""

    def launch_order(self, items: Sequence[Item]) -> list[Item]: ...

    def settled(self, per_item: Sequence[tuple[float, float] | None]) -> tuple[float, float, float] | None: ...


# How often the stop is looked at (RunContext.run_items): after each quarter of the items, never as calls come
# back and never by the worker count, so that the items run, their calls and the record are the same with 1 worker
# or 16, whichever call returns first (a group runs its items side by side).
STOP_LOOKS = 4


def stop_group(n_items: int) -> int:
    """Items run between two looks at the stop."""
    return max(1, -(-n_items // STOP_LOOKS))


@dataclass(frozen=True)
class StopRule:
    """When a candidate can no longer pass: its capped score is not above `incumbent` (`ties_lose`), or below
    it (a tie is decided elsewhere, `train.tiebreak`)."""

    incumbent: float
    ties_lose: bool
    metric: str
    mixed_weight: float
    bonus: float = 0.0
    # items to start first: those the incumbent failed, which a candidate fails most often, so a candidate that
    # cannot pass shows it early; the score is still summed in selection order (the order changes no verdict)
    first: frozenset[str] = frozenset()

    def launch_order(self, items: Sequence[Item]) -> list[Item]:
        return first_then_rest(items, self.first)

    def cap(self, per_item: Sequence[tuple[float, float] | None]) -> tuple[float, float, float] | None:
        """(hard, soft, score) the candidate reaches at most, `per_item` in selection order (None = not scored);
        None when a scored value lies outside [0, 1] (no cap can be trusted then)."""
        if any(v is not None and not (0.0 <= v[0] <= ITEM_MAX and 0.0 <= v[1] <= ITEM_MAX) for v in per_item):
            return None
        n = len(per_item)
        if not n:
            return None
        hard = sum(ITEM_MAX if v is None else v[0] for v in per_item) / n  # the arithmetic of RolloutResult.hard
        soft = sum(ITEM_MAX if v is None else v[1] for v in per_item) / n
        return hard, soft, gate_score(hard, soft, self.metric, self.mixed_weight, self.bonus)

    def cannot_pass(self, score: float) -> bool:
        """Whether a candidate that scores at most `score` is rejected by the strict comparison (NaN never wins)."""
        return not score > self.incumbent if self.ties_lose else score < self.incumbent

    def settled(self, per_item: Sequence[tuple[float, float] | None]) -> tuple[float, float, float] | None:
        """The cap when the verdict is settled (a reject), else None."""
        c = self.cap(per_item)
        return c if c is not None and self.cannot_pass(c[2]) else None

    def describe(self, n_scored: int, n_items: int, cap: float) -> str:
        rel = "not above" if self.ties_lose else "below"
        return (f"stopped after {n_scored} of {n_items} selection items: the candidate's score is at most "
                f"{cap:.4f}, {rel} the incumbent's {self.incumbent:.4f}, whatever the other items score")


def early_record(rule: StopRule, n_scored: int, n_items: int, cap: tuple[float, float, float]) -> dict[str, Any]:
    """What the step record, the gate event and `selection_eval/early_stop.json` say about an early stop."""
    return {"n_scored": n_scored, "n_items": n_items, "score_upper_bound": cap[2], "hard_upper_bound": cap[0],
            "soft_upper_bound": cap[1], "incumbent_score": rule.incumbent, "ties_lose": rule.ties_lose,
            "reason": rule.describe(n_scored, n_items, cap[2])}


@dataclass(frozen=True)
class TiebreakStop:
    """The tie-break on training tasks (engine/gate/tiebreak.py) accepts a candidate that passes strictly more of
    them than the incumbent's `before`: once its passes so far plus the tasks not yet back cannot exceed that, it
    is a reject. The bound is (most passes as a share, the same, most passes)."""

    before: int
    first: frozenset[str] = frozenset()  # the tasks the incumbent failed: started first

    def launch_order(self, items: Sequence[Item]) -> list[Item]:
        return first_then_rest(items, self.first)

    def settled(self, per_item: Sequence[tuple[float, float] | None]) -> tuple[float, float, float] | None:
        most = sum(1 for v in per_item if v is None or v[0] >= PASS_MIN)  # Trajectory.failed is hard < PASS_MIN
        if not per_item or most > self.before:
            return None
        return most / len(per_item), most / len(per_item), float(most)
