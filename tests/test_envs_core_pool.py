"""The rollout pool with a scripted environment (plumbing only; no model)."""

from __future__ import annotations

import asyncio
import gc
import uuid
from pathlib import Path
from typing import Any

import pytest

from skillgrad.core.task_clock import TaskClock
from skillgrad.envs.base import EnvOptions, Item, Splits, Trajectory
from skillgrad.errors import BudgetExceeded, ProviderFatal
from skillgrad.exec.pool import run_tasks, within


class ScriptedEnv:
    """Behaviour per item from inputs["do"]: ok, raise, sleep, fatal, budget."""

    name = "scripted"
    scorer = "scripted"
    Options = EnvOptions

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.running = 0
        self.max_running = 0

    def data_status(self) -> str:
        return "ready"

    def load_splits(self) -> Splits:
        return Splits([], [], [])

    def initial_skill(self) -> str:
        return ""

    def prompt_dirs(self) -> list[Path]:
        return []

    async def run_task(self, item: Item, skill: str, student: Any, *, sample: int = 0, temperature: float = 0.0,
                       feedback: bool = True) -> Trajectory:
        self.calls.append(item.id)
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            await asyncio.sleep(0.02)
            action = item.inputs["do"]
            if action == "raise":
                raise RuntimeError("tool exploded")
            if action == "sleep":
                await asyncio.sleep(10)
            if action == "fatal":
                raise ProviderFatal("401 bad key", provider="test")
            if action == "budget":
                raise BudgetExceeded("token budget spent", kind="tokens")
            return Trajectory(item_id=item.id, answer=f"ans-{item.id}", hard=1.0, soft=1.0, gold="g")
        finally:
            self.running -= 1


def items(*actions: str) -> list[Item]:
    return [Item(id=f"i{n}", inputs={"do": a, "question": f"q{n}"}, gold="g") for n, a in enumerate(actions)]


def run(env: ScriptedEnv, its: list[Item], **kw: Any) -> list[Trajectory]:
    kw.setdefault("workers", 2)
    kw.setdefault("timeout_s", 2.0)
    return asyncio.run(run_tasks(env, its, "skill", None, **kw))  # type: ignore[arg-type]


def test_results_in_item_order_and_bounded_concurrency() -> None:
    env = ScriptedEnv()
    done: list[str] = []
    out = run(env, items(*["ok"] * 7), workers=3, on_done=lambda t: done.append(t.item_id))
    assert [t.item_id for t in out] == [f"i{n}" for n in range(7)]
    assert all(t.hard == 1.0 for t in out)
    assert sorted(done) == sorted(t.item_id for t in out)
    assert 1 < env.max_running <= 3


def test_crash_and_timeout_become_errors_after_a_second_attempt() -> None:
    env = ScriptedEnv()
    out = run(env, items("ok", "raise", "sleep"), timeout_s=0.3)
    assert out[0].hard == 1.0 and out[0].error is None
    assert out[1].hard == out[1].soft == 0.0
    assert out[1].fail_reason == "env_error: RuntimeError: tool exploded"  # env code raised: not the model
    assert (out[1].env_error or "").startswith("RuntimeError: tool exploded (")
    assert out[1].question == "q1" and out[1].gold == "g"
    # a timeout is an error too (exec/pool.py): no verdict on the skill, left out of the means
    assert out[2].hard == 0.0 and "timeout" in (out[2].error or "") and "after 2 attempts" in (out[2].env_error or "")
    assert env.calls.count("i1") == env.calls.count("i2") == 2 and env.calls.count("i0") == 1


@pytest.mark.parametrize("action,exc", [("fatal", ProviderFatal), ("budget", BudgetExceeded)])
def test_fatal_errors_stop_the_batch(action: str, exc: type[Exception]) -> None:
    env = ScriptedEnv()
    with pytest.raises(exc):
        run(env, items("ok", action, "sleep", "sleep"), workers=4, timeout_s=30)


def test_existing_items_are_not_rerun() -> None:
    env = ScriptedEnv()
    its = items("ok", "ok", "ok")
    prior = Trajectory(item_id="i1", answer="from before", hard=1.0)
    done: list[str] = []
    out = run(env, its, existing={"i1": prior}, on_done=lambda t: done.append(t.item_id))
    assert env.calls.count("i1") == 0 and sorted(env.calls) == ["i0", "i2"]
    assert out[1] is prior
    assert sorted(done) == ["i0", "i2"]


def test_a_task_cancelled_after_its_work_failed_leaves_no_exception_unread() -> None:
    # a spent budget fails every task at about once; the first to stop the batch cancels the rest, some of whose
    # work had already failed: that failure must be read, not logged as "Task exception was never retrieved"
    # only this test's exception counts: collecting garbage also finalizes tasks other tests in this worker left
    unread: list[str] = []
    mark = f"budget.max_calls reached (3 of 3) [{uuid.uuid4().hex}]"

    def handler(_loop: object, ctx: dict) -> None:
        if mark in str(ctx.get("exception")):
            unread.append(str(ctx.get("message")))

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(handler)
        go = asyncio.Event()

        async def work() -> Trajectory:
            await go.wait()
            raise BudgetExceeded(mark, kind="calls")

        inner = asyncio.create_task(work())
        outer = asyncio.create_task(within(inner, 30, TaskClock()))
        await asyncio.sleep(0)  # `within` is waiting for the work
        go.set()
        while not inner.done():
            await asyncio.sleep(0)
        outer.cancel()  # the batch stops before `within` has looked at the finished work
        with pytest.raises(asyncio.CancelledError):
            await outer
        del inner, outer
        gc.collect()  # an unread task exception is reported when the task is collected

    asyncio.run(main())
    assert unread == []
