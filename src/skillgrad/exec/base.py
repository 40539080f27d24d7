"""The executor interface: where a batch of rollouts (or gate-evaluation items) runs.

Stages hand an executor a batch and get trajectories back; the trainer never learns which executor
runs. Every executor keeps the same contract as the local pool:
- results come back in item order (callers merge them in that order, never in completion order); `on_done` is
  called with each new trajectory in completion order (progress and the results log only);
- items in `existing` (a resumed run) are returned without a model call, except errors;
- one task's failure is a trajectory (an error when it was not the model's, exec/pool.py); a fatal provider
  error or a spent budget raises and stops the batch;
- an exception raised by `on_done` stops the batch the same way (no new item starts, the items queued or
  running are cancelled) and propagates to the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from skillgrad.envs.base import Environment, Item, Trajectory
from skillgrad.models.base import LLM

OnDone = Callable[[Trajectory], None]


class Executor(Protocol):
    name: str

    async def run(
        self,
        env: Environment,
        items: Sequence[Item],
        skill: str,
        student: LLM,
        *,
        workers: int,
        timeout_s: float,
        temperature: float = 0.0,
        sample: int = 0,
        feedback: bool = True,
        on_done: OnDone | None = None,
        existing: dict[str, Trajectory] | None = None,
    ) -> list[Trajectory]: ...

    def close(self) -> None: ...


def reusable(existing: dict[str, Trajectory] | None) -> dict[str, Trajectory]:
    """Saved trajectories a resumed batch keeps; environment errors are run again (the env may be fixed)."""
    return {k: t for k, t in (existing or {}).items() if not t.env_error}
