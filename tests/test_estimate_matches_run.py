"""`skillgrad estimate` runs the real trainer against counting models, so its call count is the loop's own:
it matches a tiny real run with the embedded model within 10 %, per role and in total, with no model call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillgrad.config.loader import load_config, packaged_config_path
from skillgrad.engine.estimate import estimate_run
from skillgrad.engine.session import open_run, train_sync

TINY = ["env.n_facts=10", "train.num_epochs=1", "train.batch_size=3", "train.train_size=3",
        "evaluation.sel_env_num=3", "evaluation.test_env_num=3", "optimizer.use_slow_update=false",
        "optimizer.use_meta_skill=false", "env.workers=1", "model.student.n_threads=1", "model.teacher.n_threads=1",
        "model.teacher.max_tokens=160", "env.max_tokens=24",
        # from the initial skill: the real student passes all 3 training tasks with the few-shot start and the run
        # stops at the ceiling, which a count cannot foresee (docs/guide/training.md: there it is an upper bound)
        "optimizer.start_from=initial"]


@pytest.mark.slow
def test_estimate_matches_the_calls_of_a_real_tiny_run(gguf_path: Path, tmp_path: Path) -> None:
    cfg = load_config(packaged_config_path("demo.yaml"), TINY)
    est = estimate_run(cfg)
    assert not list(tmp_path.iterdir())  # nothing written where the run would go
    summary = train_sync(open_run(cfg, tmp_path / "run"))
    assert summary["status"] == "completed"
    real: dict[str, int] = {}
    for line in (tmp_path / "run" / "events.jsonl").read_text().splitlines():
        e = json.loads(line)
        if e["event"] == "llm_call":
            real[e["role"]] = real.get(e["role"], 0) + 1
    forecast: dict[str, int] = {}
    for r in est["rows"]:
        forecast[r["role"]] = forecast.get(r["role"], 0) + r["calls"]
    assert est["total"]["calls"] == sum(forecast.values())
    assert abs(est["total"]["calls"] - sum(real.values())) <= 0.1 * sum(real.values()), (forecast, real, est["rows"])
    for role in ("student", "teacher"):  # and per role (one teacher call is a ranking the real reply may not need)
        assert abs(forecast[role] - real[role]) <= max(1, 0.1 * real[role]), (role, forecast, real, est["rows"])
    assert est["steps"] == 1 and est["total"]["cost"] == 0.0  # the embedded model is free
