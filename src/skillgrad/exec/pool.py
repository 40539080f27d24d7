"""The local rollout pool: run many tasks with bounded concurrency and a per-task limit on the task's own work.

A task's limit (`env.exec_timeout`) is measured on its task clock (core/task_clock.py): time queued for a model
behind other tasks' calls is not counted, so the worker count and the machine's load do not decide which tasks
time out. A task that fails for a reason outside the model and the skill (a timeout, a crash in the
environment's code or sandbox, a provider error) is run once more; if it fails again it is an *error*
(`env_error` set): excluded from the means, counted per split, and run again on resume, never scored as the
model's failure. A reply the model got wrong (a structured output that does not parse, a prompt the skill made
too long for the context window) stays a scored failure. A fatal provider error or a spent budget stops the
whole batch, cancelling the tasks still running.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from skillgrad.core.task_clock import TaskClock, running
from skillgrad.envs.base import Environment, Item, Trajectory
from skillgrad.envs.trajectory import failed_trajectory
from skillgrad.errors import BudgetExceeded, ProviderError, ProviderFatal, StructuredOutputError
from skillgrad.exec.base import reusable
from skillgrad.models.base import LLM

_STOP_RUN = (ProviderFatal, BudgetExceeded)
ATTEMPTS = 2  # a task that errs is run once more before it counts as an error
_TOO_LONG = 413  # the prompt does not fit the context window: the skill's doing, a scored failure
T = TypeVar("T")


async def within(work: Awaitable[T], timeout_s: float, clock: TaskClock) -> T:
    """`work`'s result, or TimeoutError once `clock` has counted `timeout_s` of the task's own work."""
    task = asyncio.ensure_future(work)
    try:
        while True:
            left = timeout_s - clock.work_s()
            if left <= 0:
                raise TimeoutError
            done, _ = await asyncio.wait({task}, timeout=left)  # the clock stood still while queued: look again
            if done:
                return task.result()
    finally:
        if task.done():
            # left on a cancel or a timeout after the work had ended (a spent budget fails every task at once, and
            # the first to stop the batch cancels the rest): its outcome is read here, or asyncio logs it unread
            if not task.cancelled():
                task.exception()
        else:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def attempt(env: Environment, item: Item, skill: str, student: LLM, *, timeout_s: float,
                  temperature: float = 0.0, sample: int = 0, feedback: bool = True) -> Trajectory:
    """One try of one task under its limit; a failure is a trajectory (an error when not the model's)."""
    clock = TaskClock()
    try:
        with running(clock):  # the task's model calls (and the tasks it starts) report their waits to it
            return await within(env.run_task(item, skill, student, sample=sample, temperature=temperature,
                                             feedback=feedback), timeout_s, clock)
    except _STOP_RUN:
        raise
    except TimeoutError:
        return failed_trajectory(item, f"timeout: the task worked {timeout_s:g}s (env.exec_timeout; "
                                       f"{clock.queued_s():.0f}s queued for the model not counted)", env_error=True)
    except StructuredOutputError as e:  # the model's reply failed its schema: the model's failure
        return failed_trajectory(item, e)
    except ProviderError as e:
        return failed_trajectory(item, e, env_error=e.status != _TOO_LONG)
    except Exception as e:  # noqa: BLE001 - one task's failure is a trajectory, not a crash
        return failed_trajectory(item, e, env_error=True)


async def run_one(env: Environment, item: Item, skill: str, student: LLM, *, timeout_s: float,
                  temperature: float = 0.0, sample: int = 0, feedback: bool = True) -> Trajectory:
    """One task, tried again once if it errs (Ray workers run this too); its failure is a trajectory."""
    for n in range(1, ATTEMPTS + 1):
        traj = await attempt(env, item, skill, student, timeout_s=timeout_s, temperature=temperature,
                             sample=sample, feedback=feedback)
        if not traj.env_error or n == ATTEMPTS:
            break
    if traj.env_error and ATTEMPTS > 1:
        traj.env_error = f"{traj.env_error} (after {ATTEMPTS} attempts)"
    return traj


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
