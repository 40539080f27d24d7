"""A hard budget stops the run at a safe point with `stopped: budget`; `skillgrad resume` with a raised
budget continues from there without repeating provider calls."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from train_helpers import TINY, cli, events, provider_keys

from skillgrad.config.loader import packaged_config_path

pytestmark = pytest.mark.slow


def test_budget_stop_then_resume(tmp_path: Path, gguf_path: Path) -> None:
    run_dir = tmp_path / "run"
    opts = [x for o in [*TINY, "train.num_epochs=1", "optimizer.use_slow_update=false",
                        "optimizer.use_meta_skill=false", "budget.max_calls=25"] for x in ("-o", o)]
    first = cli("train", "--config", str(packaged_config_path("demo.yaml")), *opts, "--out", str(run_dir), "--quiet",
                cwd=tmp_path)
    assert first.returncode == 4, first.stderr  # stopped by its budget
    assert [ln for ln in first.stderr.splitlines() if ln.strip()][-1].startswith("stopped: budget.max_calls")
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "stopped" and summary["stopped"] == "budget"
    assert "skillgrad resume" in first.stderr
    warnings = [e for e in events(run_dir) if e["event"] == "budget_warning"]
    assert {(w["kind"], w["percent"]) for w in warnings} >= {("calls", 50), ("calls", 80)}
    assert len(provider_keys(run_dir)) <= 25
    state = json.loads((run_dir / "runtime_state.json").read_text())
    assert not state["finished"]

    second = cli("resume", str(run_dir), "-o", "budget.max_calls=100000", "--quiet", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["stopped"] is None
    assert summary["total_steps"] == 2
    repeated = [k for k, n in Counter(provider_keys(run_dir)).items() if n > 1]
    assert repeated == []
