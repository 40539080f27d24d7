"""A task's timeout measures its own work (core/task_clock.py): time queued for a model behind other tasks' calls
is not counted, so the worker count does not decide which tasks time out; a task that still errs is tried again
and then counted as an error, outside the means (exec/pool.py)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import local_role

from skillgrad.core.task_clock import TaskClock, queued, running
from skillgrad.engine.stages.rollout import RolloutResult
from skillgrad.envs.base import Item, Trajectory
from skillgrad.exec.pool import run_tasks
from skillgrad.models.base import Completion, Request, Usage
from skillgrad.models.limits import Limits
from skillgrad.models.providers.local import LocalProvider


class Ticks:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_the_clock_stands_still_while_a_wait_is_open() -> None:
    now = Ticks()
    clock = TaskClock(now)
    now.t = 2.0
    with running(clock), queued():
        now.t = 5.0
        with queued():  # two calls queued at once stop the clock once
            now.t = 7.0
        assert clock.work_s() == 2.0 and clock.queued_s() == 5.0
    now.t = 8.0
    assert clock.work_s() == 3.0 and clock.queued_s() == 5.0
    with queued():  # outside a task a wait reports nothing
        pass


class OneSlotModel:
    """A student whose calls take 0.25 s each and share one slot (the real `Limits` middleware), like the
    embedded model's lock: with 4 workers the fourth task's call waits 0.75 s for its turn."""

    name, role, supports_vision, is_agent = "slot:model", "student", False, False

    def __init__(self) -> None:
        async def model(req: Request) -> Completion:
            await asyncio.sleep(0.25)
            return Completion(text="ok", usage=Usage(3, 1))

        self.handler = Limits(concurrency=1).wrap(model)

    def count_tokens(self, text: str) -> int:
        return len(text)

    async def complete(self, messages: list[Any], **kw: Any) -> Completion:
        return await self.handler(Request(messages=messages))


class AskOnce:
    name = "ask-once"

    def __init__(self, slow_first: set[str] | None = None) -> None:
        self.slow_first = set(slow_first or ())
        self.calls: list[str] = []

    async def run_task(self, item: Item, skill: str, student: Any, **kw: Any) -> Trajectory:
        self.calls.append(item.id)
        if item.id in self.slow_first:  # a hung first try (a stuck tool): the second one works
            self.slow_first.discard(item.id)
            await asyncio.sleep(30)
        c = await student.complete([{"role": "user", "content": item.id}])
        return Trajectory(item_id=item.id, answer=c.text, hard=1.0, soft=1.0)


ITEMS = [Item(id=f"i{n}", inputs={"question": f"q{n}"}) for n in range(4)]


@pytest.mark.parametrize("workers", [1, 4])
def test_time_queued_for_the_model_is_not_the_tasks_work(workers: int) -> None:
    t0 = time.monotonic()
    out = asyncio.run(run_tasks(AskOnce(), ITEMS, "skill", OneSlotModel(), workers=workers,  # type: ignore[arg-type]
                                timeout_s=0.6))
    assert time.monotonic() - t0 >= 0.95  # the four calls did run one after another
    assert [(t.item_id, t.hard, t.env_error) for t in out] == [(f"i{n}", 1.0, None) for n in range(4)]


def test_a_timed_out_task_is_tried_again_and_an_error_is_outside_the_means() -> None:
    env = AskOnce(slow_first={"i1"})
    out = asyncio.run(run_tasks(env, ITEMS[:2], "skill", OneSlotModel(), workers=2,  # type: ignore[arg-type]
                                timeout_s=0.5))
    assert env.calls.count("i1") == 2 and [t.hard for t in out] == [1.0, 1.0] and not any(t.env_error for t in out)
    err = Trajectory(item_id="i2", hard=0.0, env_error="timeout (after 2 attempts)")
    res = RolloutResult([*out, err])
    assert (res.hard, res.soft, res.n, res.n_env_errors) == (1.0, 1.0, 3, 1)
    assert res.by_task_type() == {"default": {"total": 2, "hard_acc": 1.0, "soft_acc": 1.0}}


def test_the_embedded_models_queue_stops_the_callers_clock(gguf_path: Path) -> None:
    """Two tasks call the real embedded model at once: one call runs, the other waits for the model thread, and
    only the waiting task's clock counts that time as queued."""
    model = LocalProvider(local_role(gguf_path), "student")
    req = Request(messages=[{"role": "user", "content": "Count from one to twenty."}], max_tokens=24)
    clocks = [TaskClock(), TaskClock()]

    async def task(clock: TaskClock) -> tuple[float, float, float]:
        with running(clock):
            t0 = time.monotonic()
            await model(req)
            return time.monotonic() - t0, clock.work_s(), clock.queued_s()

    async def both() -> list[tuple[float, float, float]]:
        return list(await asyncio.gather(task(clocks[0]), task(clocks[1])))

    (wall_a, work_a, queued_a), (wall_b, work_b, queued_b) = sorted(asyncio.run(both()), key=lambda r: r[2])
    assert queued_a < 0.2 * wall_a  # the first call got the model at once
    assert queued_b > 0.3 * wall_a  # the second waited about one whole call
    assert work_b == pytest.approx(wall_b - queued_b, abs=0.05)  # and that wait is not its work


def test_a_batch_that_mostly_times_out_stops_with_the_fix_named() -> None:
    from skillgrad.engine.stages.rollout import rollout
    from skillgrad.errors import EnvironmentFailure

    class Hangs(AskOnce):  # every try of i0-i2 hangs: each is tried twice, then an error
        async def run_task(self, item: Item, skill: str, student: Any, **kw: Any) -> Trajectory:
            if item.id != "i3":
                await asyncio.sleep(30)
            return await super().run_task(item, skill, student, **kw)

    with pytest.raises(EnvironmentFailure, match=r"3 of 4 tasks in this batch ended in an error .*timeout.*"
                                                 r"raise env.exec_timeout.*skillgrad resume"):
        asyncio.run(rollout(Hangs(), ITEMS, "skill", OneSlotModel(), workers=4, timeout_s=0.3,  # type: ignore[arg-type]
                            temperature=0.0, feedback=False))
