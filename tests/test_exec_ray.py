"""The executor interface (local pool) and the Ray executor on a local Ray cluster.

The Ray tests start one local cluster for the module (`ray.init(num_cpus=2)`: start-up is slow on two
cores) and shut it down at the end. They prove: a short training run with the embedded model gives the
same skill on Ray as on the local pool with the same seed; results stream back in completion order; a
worker process that dies mid-task loses only its own task, which Ray re-runs; a fatal provider error in a
worker stops the batch like it does locally.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import require
from train_helpers import tiny_config

from skillgrad.config.schema import ExecSection
from skillgrad.envs.base import EnvOptions, Item, Splits, Trajectory
from skillgrad.errors import ProviderFatal
from skillgrad.exec.factory import make_executor
from skillgrad.exec.pool import LocalPool

try:
    import ray
except ImportError:  # the optional extra; required in CI
    ray = None


class DelayEnv:
    """Plumbing env: inputs["delay"] seconds then success; "die" kills the worker process once (a marker
    file records each attempt); "fatal" raises a fatal provider error."""

    name = "delay"
    scorer = "scripted"
    Options = EnvOptions

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
        do = item.inputs.get("do", "ok")
        if "started" in item.inputs:
            Path(item.inputs["started"]).write_text("started")
        if do == "die":
            marker = Path(item.inputs["marker"])
            attempts = int(marker.read_text()) if marker.exists() else 0
            marker.write_text(str(attempts + 1))
            if attempts == 0:
                os._exit(1)  # the worker process dies mid-task, on the first attempt only
        if do == "fatal":
            raise ProviderFatal("401 bad key", provider="test")
        await asyncio.sleep(float(item.inputs.get("delay", 0.0)))
        if "wait_for" in item.inputs:  # finish only after another task has (completion order, not timing)
            deadline = time.monotonic() + 240  # a second Ray worker can take a minute to start on a loaded machine
            while not Path(item.inputs["wait_for"]).exists() and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            await asyncio.sleep(float(item.inputs.get("after", 0.0)))
        if "touch" in item.inputs:
            Path(item.inputs["touch"]).write_text("done")
        return Trajectory(item_id=item.id, answer=f"{skill}:{item.id}", hard=1.0, soft=1.0, gold="g")


def _items(delays: list[float]) -> list[Item]:
    return [Item(id=f"i{n}", inputs={"delay": d}) for n, d in enumerate(delays)]


# ---------------------------------------------------------------- the interface, local pool
def test_default_executor_is_the_local_pool() -> None:
    assert isinstance(make_executor(ExecSection()), LocalPool)


def test_local_pool_item_order_completion_order_and_resume() -> None:
    done: list[str] = []
    items = _items([0.3, 0.0, 0.15])
    saved = {"i1": Trajectory(item_id="i1", answer="saved", hard=1.0)}
    out = asyncio.run(LocalPool().run(DelayEnv(), items, "s", None, workers=3, timeout_s=5,  # type: ignore[arg-type]
                                      on_done=lambda t: done.append(t.item_id), existing=saved))
    assert [t.item_id for t in out] == ["i0", "i1", "i2"]  # item order
    assert out[1].answer == "saved"  # reused, not re-run
    assert done == ["i2", "i0"]  # completion order, new items only


def test_finish_order_is_completion_order_within_one_wake_up() -> None:
    """Ray's executor hands results over in the order tasks finished, even when they all finish in one turn
    of the event loop (asyncio.wait returned such a batch as a set)."""
    from skillgrad.exec.ray_exec import FinishOrder

    async def go() -> list[int]:
        loop = asyncio.get_running_loop()
        order = FinishOrder()
        futs = [order.watch(loop.create_future()) for _ in range(20)]
        finishing = [7, 3, 19, 0, 11, 5, 16, 2, 9, 14, 1, 18, 6, 12, 4, 17, 8, 13, 10, 15]
        for n in finishing:  # all in this one turn of the loop
            futs[n].set_result(n)
        return [(await order.next()).result() for _ in futs]

    assert asyncio.run(go()) == [7, 3, 19, 0, 11, 5, 16, 2, 9, 14, 1, 18, 6, 12, 4, 17, 8, 13, 10, 15]


# ---------------------------------------------------------------- Ray
@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    require(ray is not None, "ray (pip install 'skillgrad[ray]')")
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.mark.slow
def test_ray_streams_in_completion_order(ray_cluster: None, tmp_path: Path) -> None:
    """Both results land while the driver's event loop is busy (blocked here on purpose), so they are handed
    over in one wake-up: they still come back in the order they finished (asyncio.wait gave a set)."""
    ex = make_executor(ExecSection(backend="ray"))
    done: list[str] = []
    go, flag = tmp_path / "go", str(tmp_path / "i1-finished")
    started = [tmp_path / "i0-started", tmp_path / "i1-started"]
    # i0 cannot finish before i1 has (files, not delays: worker start-up on a busy machine takes seconds)
    items = [Item(id="i0", inputs={"started": str(started[0]), "wait_for": flag, "after": 0.1}),
             Item(id="i1", inputs={"started": str(started[1]), "wait_for": str(go), "touch": flag})]

    async def block_the_driver() -> None:
        deadline = time.monotonic() + 240  # a second Ray worker can take a minute to start on a loaded machine
        while not all(p.exists() for p in started) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        go.write_text("go")
        time.sleep(3)  # both tasks finish meanwhile

    async def main() -> list[Trajectory]:
        blocker = asyncio.create_task(block_the_driver())
        out = await ex.run(DelayEnv(), items, "s", None, workers=2,  # type: ignore[arg-type]
                           timeout_s=300, on_done=lambda t: done.append(t.item_id))
        await blocker
        return out

    try:
        out = asyncio.run(main())
    finally:
        ex.close()
    assert [t.item_id for t in out] == ["i0", "i1"] and [t.answer for t in out] == ["s:i0", "s:i1"]
    assert done == ["i1", "i0"]


@pytest.mark.slow
def test_ray_worker_death_is_retried(ray_cluster: None, tmp_path: Path) -> None:
    marker = tmp_path / "attempts"
    items = [Item(id="dies", inputs={"do": "die", "marker": str(marker)}), *_items([0.0])]
    ex = make_executor(ExecSection(backend="ray", max_retries=2))
    try:
        out = asyncio.run(ex.run(DelayEnv(), items, "s", None, workers=2, timeout_s=60))  # type: ignore[arg-type]
    finally:
        ex.close()
    assert marker.read_text() == "2"  # killed once, re-run once
    assert [t.item_id for t in out] == ["dies", "i0"]
    assert all(t.hard == 1.0 and not t.env_error for t in out)


@pytest.mark.slow
def test_ray_fatal_provider_error_stops_the_batch(ray_cluster: None) -> None:
    ex = make_executor(ExecSection(backend="ray"))
    items = [Item(id="bad", inputs={"do": "fatal"}), *_items([5.0])]
    t0 = time.monotonic()
    try:
        with pytest.raises(ProviderFatal):
            asyncio.run(ex.run(DelayEnv(), items, "s", None, workers=2, timeout_s=30))  # type: ignore[arg-type]
    finally:
        ex.close()
    assert time.monotonic() - t0 < 5  # the 5 s task was cancelled, not waited for


TRAIN = ["train.num_epochs=1", "train.train_size=5", "evaluation.sel_env_num=4", "evaluation.eval_test=false",
         "evaluation.edit_credit=false", "optimizer.use_slow_update=false", "optimizer.use_meta_skill=false", "model.student.n_threads=1", "model.teacher.n_threads=1", "env.workers=2"]


@pytest.mark.slow
def test_ray_training_step_gives_the_local_skill(ray_cluster: None, gguf_path: Path, tmp_path: Path) -> None:
    from skillgrad.engine.session import open_run, train_sync

    runs = {}
    for backend in ("local", "ray"):
        run_dir = tmp_path / backend
        cfg = tiny_config(*TRAIN, f"exec.backend={backend}", epochs=1)
        runs[backend] = train_sync(open_run(cfg, run_dir)), run_dir
    (local, local_dir), (on_ray, ray_dir) = runs["local"], runs["ray"]
    assert on_ray["status"] == local["status"] == "completed"
    assert (ray_dir / "best_skill.md").read_text() == (local_dir / "best_skill.md").read_text()
    state = {b: json.loads((d / "runtime_state.json").read_text()) for b, (_, d) in runs.items()}
    assert state["ray"]["current_skill"] == state["local"]["current_skill"]
    rollout = {b: [json.loads(x)["answer"] for x in (d / "steps/step_0001/rollout/results.jsonl").read_text()
                   .splitlines()] for b, (_, d) in runs.items()}
    assert sorted(rollout["ray"]) == sorted(rollout["local"])
    # the driver wrote the workers' calls: the meter counted them and the cache holds them
    student = on_ray["token_summary"]["by_role"]["student"]
    assert student["calls"] == local["token_summary"]["by_role"]["student"]["calls"] > 0
    events = [json.loads(x) for x in (ray_dir / "events.jsonl").read_text().splitlines()]
    assert any(e["event"] == "llm_call" and e.get("executor") == "ray" for e in events)
