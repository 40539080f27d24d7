"""results.jsonl is written off the event loop: `append` queues, a writer thread fsyncs conversation.json and
then the line, `flush` (and `load`) wait for it, and a write error reaches the caller at `flush`."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path

import pytest

from skillgrad.envs.base import Trajectory
from skillgrad.runs.store import ResultsLog


def _traj(i: int) -> Trajectory:
    return Trajectory(item_id=f"item {i}", hard=float(i % 2), soft=0.5,
                      messages=[{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": f"a{i}"}])


def test_results_are_fsynced_off_the_loop_and_complete_after_flush(tmp_path: Path, monkeypatch) -> None:
    synced_on: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced_on.append(threading.get_ident())
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    log = ResultsLog(tmp_path / "rollout")

    async def finish_tasks() -> int:
        async def one(i: int) -> None:
            await asyncio.sleep(0.001 * (i % 5))
            log.append(_traj(i))  # what the pool's on_done does on the loop thread

        with log.saving():
            await asyncio.gather(*(one(i) for i in range(40)))
        return threading.get_ident()

    loop_thread = asyncio.run(finish_tasks())
    assert synced_on and loop_thread not in synced_on  # every fsync ran on the writer thread
    # conversation + line per result before; batches share one line fsync now
    assert len(synced_on) < 2 * 40
    lines = (tmp_path / "rollout" / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(x)["item_id"] for x in lines) == sorted(f"item {i}" for i in range(40))
    assert len(ResultsLog(tmp_path / "rollout").load()) == 40  # a resumed run reuses all 40
    assert len(list((tmp_path / "rollout" / "predictions").glob("*/conversation.json"))) == 40
    first = json.loads(next((tmp_path / "rollout" / "predictions").glob("item_0-*/conversation.json")).read_text())
    assert first == [{"role": "user", "content": "q0"}, {"role": "assistant", "content": "a0"}]


def test_a_write_error_is_raised_by_flush_and_not_lost(tmp_path: Path) -> None:
    blocker = tmp_path / "rollout"
    blocker.write_text("a file where the results folder belongs")
    log = ResultsLog(blocker)
    log.append(_traj(1))  # returns at once; the writer fails
    with pytest.raises(OSError):
        log.flush()
    blocker.unlink()
    log.append(_traj(2))  # the folder can be made now: the queued result and the new one are written
    log.flush()
    assert sorted(ResultsLog(blocker).load()) == ["item 1", "item 2"]
