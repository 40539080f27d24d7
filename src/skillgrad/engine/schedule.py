"""The edit budget ("learning rate") per training step, with SkillOpt's arithmetic (reference §2.12).

`lr_at(step)` is a pure function of the 1-based count of steps that reached selection, so a resumed
run gets the same budgets as an uninterrupted one provided the trainer persists that count (SkillOpt
resumes from the global step, which also counts skipped steps: §11.1 item 3). `plan_epoch` cuts an
epoch's shuffled train items into the steps' batches.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, TypeVar

from skillgrad.errors import ConfigError

SCHEDULE_KINDS = ("constant", "linear", "cosine", "autonomous")
T = TypeVar("T")


@dataclass(frozen=True)
class EditBudgetSchedule:
    kind: str
    max_lr: int
    min_lr: int
    total_steps: int

    def __post_init__(self) -> None:
        if self.kind not in SCHEDULE_KINDS:
            raise ConfigError(
                f"optimizer.lr_scheduler: unknown schedule {self.kind!r}; use one of {', '.join(SCHEDULE_KINDS)}"
            )
        if self.max_lr < 0 or self.min_lr < 0:
            raise ConfigError("optimizer.learning_rate and optimizer.min_learning_rate must be >= 0")

    def lr_at(self, step: int) -> int:
        """Edit budget for the `step`-th (1-based) step that reaches selection.

        `autonomous` returns max_lr: the teacher chooses the budget in another stage.
        """
        if self.kind in ("constant", "autonomous") or self.total_steps <= 1:
            return self.max_lr
        t = min(max(step, 0), self.total_steps) / self.total_steps
        if self.kind == "linear":
            lr = self.max_lr + (self.min_lr - self.max_lr) * t
        else:
            lr = self.min_lr + 0.5 * (self.max_lr - self.min_lr) * (1 + math.cos(math.pi * t))
        return max(self.min_lr, round(lr))  # Python round: half to even, as SkillOpt

    def sequence(self, n: int | None = None) -> list[int]:
        """Budgets for steps 1..n (default: total_steps)."""
        return [self.lr_at(k) for k in range(1, (self.total_steps if n is None else n) + 1)]

    # No counter is kept; these exist so the trainer can treat the schedule like other stateful parts.
    def state_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "max_lr": self.max_lr, "min_lr": self.min_lr, "total_steps": self.total_steps}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Checks that a resumed run uses the same schedule; the budget itself needs no state."""
        if state and state != self.state_dict():
            raise ConfigError(
                f"resume: the learning-rate schedule changed ({state} -> {self.state_dict()}); "
                "resume with the original optimizer settings"
            )


def plan_epoch(train: list[T], seed: int, per_step: int, n_steps: int) -> list[list[T]]:
    """An epoch's batches: the train items shuffled with `seed`, cut into `n_steps` batches of `per_step`."""
    order = list(train)
    random.Random(seed).shuffle(order)
    batches = [order[i * per_step : (i + 1) * per_step] for i in range(n_steps)]
    for i, b in enumerate(batches):  # refill an empty trailing batch from a reshuffle
        if not b:
            extra = list(train)
            random.Random(seed + i + 1).shuffle(extra)
            batches[i] = extra[:per_step]
    return batches
