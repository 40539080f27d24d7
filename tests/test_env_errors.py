"""A crash inside an environment's own code is an environment error: counted apart from the model's
failures (trajectory, step record, summary, report), and a batch that mostly crashes stops the run,
which resumes once the environment is fixed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from test_engine_plumbing import Scripted, ToyEnv

from skillgrad.config.loader import load_config
from skillgrad.core.events import EventLog
from skillgrad.engine.trainer import Trainer
from skillgrad.envs.base import Item, Trajectory
from skillgrad.errors import EnvironmentFailure, ProviderError
from skillgrad.exec.pool import run_tasks
from skillgrad.models.budget import Budget
from skillgrad.models.factory import Models
from skillgrad.models.meter import Meter
from skillgrad.runs.report import write_report
from skillgrad.runs.store import RunStore


class CrashyEnv(ToyEnv):
    """ToyEnv whose scorer has a bug on the items in `broken` (a KeyError in env code)."""

    def __init__(self, broken: set[str]) -> None:
        super().__init__()
        self.broken = broken
        self.model_fails: set[str] = set()

    async def run_task(self, item: Item, skill: str, student: Any, **kw: Any) -> Trajectory:
        if item.id in self.model_fails:
            raise ProviderError("malformed response after 4 retries", provider="scripted")
        traj = await super().run_task(item, skill, student, **kw)
        if item.id in self.broken:
            _ = {}["answer_position"]  # the environment's own bug, after the model answered
        return traj


def test_pool_tells_env_crashes_from_model_failures() -> None:
    env = CrashyEnv({"t0"})
    env.model_fails = {"t1"}
    items = env.splits.train
    trajs = asyncio.run(run_tasks(env, items, "skill", Scripted("student"), workers=2, timeout_s=10))
    by = {t.item_id: t for t in trajs}
    assert by["t0"].env_error and "KeyError" in by["t0"].env_error and "test_env_errors.py" in by["t0"].env_error
    assert by["t0"].hard == 0.0 and by["t0"].fail_reason.startswith("env_error: ")
    # a provider error is no verdict on the model either: an error after its second attempt (exec/pool.py)
    assert by["t1"].env_error and "ProviderError" in by["t1"].env_error and "after 2 attempts" in by["t1"].env_error
    assert by["t2"].env_error is None
    # on resume an env error is run again (the env may be fixed); a finished task is not
    env.broken = set()
    again = asyncio.run(run_tasks(env, items, "skill", Scripted("student"), workers=1, timeout_s=10,
                                  existing=by))
    assert {t.item_id: t.env_error for t in again}["t0"] is None
    assert {t.item_id: t for t in again}["t2"] is by["t2"]


def _trainer(run_dir: Path, env: CrashyEnv) -> Trainer:
    cfg = load_config(None, ["env.name=toy", "train.batch_size=2", "train.num_epochs=1", "env.workers=1",
                             "optimizer.use_slow_update=false"])
    models = Models(teacher=Scripted("teacher"), student=Scripted("student"), meter=Meter(), budget=Budget(),
                    cache=None)
    return Trainer(cfg, env, models, RunStore(run_dir), EventLog(run_dir / "events.jsonl"))


def test_a_mostly_crashing_batch_stops_the_run_and_resume_continues(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    env = CrashyEnv({"t0", "t1"})  # the whole first training batch (and half of the selection split)
    with pytest.raises(EnvironmentFailure, match=r"2 of 2 tasks in this batch ended in an error .*skillgrad resume"):
        asyncio.run(_trainer(run_dir, env).run())
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "failed" and "2 of 2 tasks in this batch ended in an error" in summary["stop_reason"]
    assert "KeyError" in summary["stop_reason"]
    ends = [json.loads(x) for x in (run_dir / "events.jsonl").read_text().splitlines() if '"run_end"' in x]
    assert ends[-1]["status"] == "failed"

    crashed_log = next(p for p in sorted(run_dir.glob("steps/*/rollout/results.jsonl")) if "KeyError" in p.read_text())
    crashed_step = int(crashed_log.parts[-3].split("_")[1])
    env.broken = {"t0"}  # mostly fixed: one task of that batch still crashes, which is counted, not a stop
    summary = asyncio.run(_trainer(run_dir, env).run())
    assert summary["status"] == "completed"
    history = json.loads((run_dir / "history.json").read_text())
    assert [h["rollout_env_errors"] for h in history] == [int(h["step"] == crashed_step) for h in history]
    rows = [json.loads(x) for x in crashed_log.read_text().splitlines()]
    latest = {r["item_id"]: r for r in rows}  # the log keeps the crashed lines; the re-run comes last
    assert latest["t1"]["env_error"] is None and latest["t1"]["hard"] == 0.0  # a real, model-scored run
    assert "KeyError" in latest["t0"]["env_error"]
    assert summary["env_errors"]["rollout"] == 1 and summary["total_env_errors"] >= 1
    assert summary["errors"]["train"] == 1 and summary["errors"]["val"] >= 1  # t0 is a selection item too
    assert history[0]["selection_errors"] >= 1 and summary["total_errors"] >= 2
    write_report(run_dir)
    assert "tasks ended in an error" in (run_dir / "report.md").read_text()
    from starlette.testclient import TestClient

    from skillgrad.ui.app import create_app

    page = TestClient(create_app(run_dir.parent), base_url="http://127.0.0.1").get("/run?r=run").text
    assert "errors (not scored)" in page and f"train {summary['errors']['train']}" in page
