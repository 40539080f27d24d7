"""Rollout and evaluation: run the student on items with a skill, reusing finished items on resume."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from skillgrad.envs.base import Environment, Item, Trajectory
from skillgrad.errors import EnvironmentFailure
from skillgrad.exec.base import Executor
from skillgrad.exec.pool import LocalPool
from skillgrad.models.base import LLM
from skillgrad.skill import hide_empty_regions


@dataclass
class RolloutResult:
    trajectories: list[Trajectory]
    # the gate stopped early (engine/gate/early.py): the trajectories are only the items scored, and this is the
    # (hard, soft, score) the candidate could reach at most; hard/soft below are then partial means, never its score
    capped: tuple[float, float, float] | None = None

    @property
    def n(self) -> int:
        return len(self.trajectories)

    @property
    def scored(self) -> list[Trajectory]:
        """The trajectories that have a score: an error (exec/pool.py) is no verdict on the skill or the model."""
        return [t for t in self.trajectories if not t.env_error]

    @property
    def hard(self) -> float:
        scored = self.scored
        return sum(t.hard for t in scored) / len(scored) if scored else 0.0

    @property
    def soft(self) -> float:
        scored = self.scored
        return sum(t.soft for t in scored) / len(scored) if scored else 0.0

    @property
    def n_fail(self) -> int:
        return sum(1 for t in self.trajectories if t.failed)

    @property
    def n_env_errors(self) -> int:
        """Tasks that ended in an error (a timeout, a crash, a provider failure): not in the means."""
        return sum(1 for t in self.trajectories if t.env_error)

    def by_task_type(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for t in self.scored:
            b = out.setdefault(t.task_type, {"total": 0, "hard_sum": 0.0, "soft_sum": 0.0})
            b["total"] += 1
            b["hard_sum"] += t.hard
            b["soft_sum"] += t.soft
        return {k: {"total": int(v["total"]), "hard_acc": v["hard_sum"] / v["total"],
                    "soft_acc": v["soft_sum"] / v["total"]} for k, v in sorted(out.items())}


async def rollout(
    env: Environment,
    items: list[Item],
    skill: str,
    student: LLM,
    *,
    workers: int,
    timeout_s: float,
    temperature: float,
    feedback: bool,
    existing: dict[str, Trajectory] | None = None,
    on_done: Callable[[Trajectory], None] | None = None,
    sample: int = 0,
    executor: Executor | None = None,
) -> RolloutResult:
    trajs = await (executor or LocalPool()).run(
        env, items, hide_empty_regions(skill), student, workers=workers, timeout_s=timeout_s, temperature=temperature,
        sample=sample, feedback=feedback, on_done=on_done, existing=existing,
    )
    result = RolloutResult(trajs)
    check_env_errors(result, getattr(env, "name", type(env).__name__))
    return result


def check_env_errors(result: RolloutResult, env_name: str) -> None:
    """Stop when most of a batch ended in an error (exec/pool.py): the few scores left would not measure the
    skill. The errored tasks are re-run on resume (their model calls come from the cache)."""
    n_env = result.n_env_errors
    if n_env and n_env * 2 > result.n:
        first = next(t for t in result.trajectories if t.env_error)
        raise EnvironmentFailure(
            f"environment {env_name!r}: {n_env} of {result.n} tasks in this batch ended in an error (item "
            f"{first.item_id!r}: {first.env_error}); fix the cause (the environment, the provider, or raise "
            "env.exec_timeout for a timeout), then continue with `skillgrad resume <run dir>`")
