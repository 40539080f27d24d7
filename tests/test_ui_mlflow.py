"""`skillgrad export mlflow` against a local MLflow file store in tmp, read back with MLflow's client."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ui_helpers import make_run


def test_export_mlflow_to_a_file_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        from mlflow.tracking import MlflowClient
    except ImportError:
        if os.environ.get("SKILLGRAD_REQUIRE_ALL") == "1":
            pytest.fail("mlflow is required (SKILLGRAD_REQUIRE_ALL=1)")
        pytest.skip("mlflow is not installed")
    run = make_run(tmp_path, "exported", steps=3)
    uri = f"file:{tmp_path / 'mlruns'}"
    r = subprocess.run([sys.executable, "-m", "skillgrad.cli", "export", "mlflow", str(run), "--tracking-uri", uri],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 refuses file stores otherwise
    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("skillgrad")
    assert exp is not None
    (mrun,) = client.search_runs([exp.experiment_id])
    assert mrun.data.params["optimizer.learning_rate"] == "2"
    assert mrun.data.params["model.teacher.api_key"] == "***"
    gate = client.get_metric_history(mrun.info.run_id, "candidate_gate_score")
    assert sorted(m.step for m in gate) == [1, 2, 3]
    calls = {m.step: m.value for m in client.get_metric_history(mrun.info.run_id, "usage_calls")}
    assert calls[1] == 5 + 1 + 5  # rollout + reflect + gate calls of step 1 (stage_end events)
    assert "usage_tokens" in mrun.data.metrics and "usage_cost" in mrun.data.metrics
    arts = {a.path for a in client.list_artifacts(mrun.info.run_id)}
    assert {"best_skill.md", "summary.json", "config.json", "report.html", "skills"} <= arts
    skills = {a.path for a in client.list_artifacts(mrun.info.run_id, "skills")}
    assert skills == {f"skills/skill_v000{i}.md" for i in range(4)}
    assert not (run / "report.html").exists()  # the run directory is left as it was

    # exporting again updates the same MLflow run: no second run, no repeated metric points
    r = subprocess.run([sys.executable, "-m", "skillgrad.cli", "export", "mlflow", str(run), "--tracking-uri", uri],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert mrun.info.run_id in r.stdout
    (again,) = client.search_runs([exp.experiment_id])
    assert again.info.run_id == mrun.info.run_id
    assert sorted(m.step for m in client.get_metric_history(mrun.info.run_id, "candidate_gate_score")) == [1, 2, 3]


def test_export_mlflow_bad_run_is_a_usage_error(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "skillgrad.cli", "export", "mlflow", str(tmp_path / "nope"),
                        "--tracking-uri", f"file:{tmp_path / 'mlruns'}"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "not a run directory" in r.stderr
