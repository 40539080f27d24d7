"""The local rollout pool: run many tasks with bounded concurrency and a per-task wall-clock limit.

One task's crash or timeout becomes a failed, scored trajectory (the run goes on); a crash in the
environment's own code (anything but a provider error or a timeout) is marked `env_error`, so it is
counted apart from the model's failures and re-run on resume. A fatal provider error or a spent budget
stops the whole batch, cancelling the tasks still running.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from skillgrad.envs.base import Environment, Item, Trajectory
from skillgrad.envs.trajectory import failed_trajectory
from skillgrad.errors import BudgetExceeded, ProviderError, ProviderFatal, StructuredOutputError
from skillgrad.exec.base import reusable
from skillgrad.models.base import LLM

_STOP_RUN = (ProviderFatal, BudgetExceeded)


async def run_one(env: Environment, item: Item, skill: str, student: LLM, *, timeout_s: float,
                  temperature: float = 0.0, sample: int = 0, feedback: bool = True) -> Trajectory:
    """One task under the wall-clock limit; its failure is a scored trajectory (Ray workers run this too)."""
    try:
        return await asyncio.wait_for(
            env.run_task(item, skill, student, sample=sample, temperature=temperature, feedback=feedback),
            timeout=timeout_s,
        )
    except _STOP_RUN:
        raise
    except TimeoutError:
        return failed_trajectory(item, f"timeout: task exceeded {timeout_s:g}s (env.exec_timeout)")
    except (ProviderError, StructuredOutputError) as e:  # the model's call failed: a model failure
        return failed_trajectory(item, e)
    except Exception as e:  # noqa: BLE001 - one task's failure is a scored failure, not a crash
        return failed_trajectory(item, e, env_error=True)


async def run_tasks(
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
    on_done: Callable[[Trajectory], None] | None = None,
    existing: dict[str, Trajectory] | None = None,
) -> list[Trajectory]:
    """Run `items` through `env.run_task`; results come back in item order.

    Items whose id is in `existing` (a resumed run) are returned as they are, without a model call,
    except environment errors, which are run again (the environment may have been fixed).
    `on_done` is called with each new trajectory as it finishes (e.g. to persist it at once).
    """
    existing = reusable(existing)
    results: list[Trajectory | None] = [existing.get(it.id) for it in items]
    sem = asyncio.Semaphore(max(1, int(workers)))

    async def one(index: int, item: Item) -> None:
        async with sem:
            traj = await run_one(env, item, skill, student, timeout_s=timeout_s, temperature=temperature,
                                 sample=sample, feedback=feedback)
        results[index] = traj
        if on_done is not None:
            on_done(traj)

    tasks = [asyncio.create_task(one(i, it)) for i, it in enumerate(items) if results[i] is None]
    if tasks:
        try:
            done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for t in done:
                if not t.cancelled() and t.exception() is not None:
                    raise t.exception()  # type: ignore[misc]
        finally:
            for t in tasks:
                if not t.done():
                    t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    return [r for r in results if r is not None]


class LocalPool:
    """The default executor: an asyncio pool in this process (`exec.backend: local`)."""

    name = "local"

    async def run(self, env: Environment, items: Sequence[Item], skill: str, student: LLM, *, workers: int,
                  timeout_s: float, temperature: float = 0.0, sample: int = 0, feedback: bool = True,
                  on_done: Callable[[Trajectory], None] | None = None,
                  existing: dict[str, Trajectory] | None = None) -> list[Trajectory]:
        return await run_tasks(env, items, skill, student, workers=workers, timeout_s=timeout_s,
                               temperature=temperature, sample=sample, feedback=feedback, on_done=on_done,
                               existing=existing)

    def close(self) -> None:
        return None
