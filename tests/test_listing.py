"""`runs list|show` data: list_runs and show_run on the sample run, a partial run and non-runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillgrad.errors import UsageError
from skillgrad.runs.listing import list_runs, show_run

FIXTURE = Path(__file__).parent / "fixtures" / "sample_run"
T0 = 1767225600.0  # the fixture's run_start


@pytest.fixture
def runs_root(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    shutil.copytree(FIXTURE, root / "sample_run")
    # a later run killed after its first step: events and a one-record history, nothing else
    partial = root / "later_partial"
    partial.mkdir()
    events = [
        {"ts": T0 + 3600, "event": "run_start", "env": "fewshot-format"},
        {"ts": T0 + 3610, "event": "gate", "step": 1, "epoch": 1, "action": "reject", "candidate_score": 0.2,
         "current_score": 0.3, "best_score": 0.3},
    ]
    (partial / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events) + '{"ts": 1')
    (root / "not_a_run").mkdir()
    (root / "not_a_run" / "notes.txt").write_text("x")
    (root / "stray.json").write_text("{}")
    return root


def test_list_runs_reads_each_run(runs_root: Path) -> None:
    runs = list_runs(runs_root)
    assert [r.name for r in runs] == ["later_partial", "sample_run"]  # newest first
    partial, sample = runs
    assert sample.env == "facts"
    assert sample.status == "completed"
    assert sample.steps_done == 4
    assert sample.best_val_score == pytest.approx(0.6)
    assert sample.test_delta == pytest.approx(0.15)
    assert sample.started == pytest.approx(T0)
    assert sample.path == runs_root / "sample_run"
    assert partial.env == "fewshot-format"
    assert partial.status == "incomplete"
    assert partial.steps_done == 1
    assert partial.best_val_score is None and partial.test_delta is None
    assert partial.to_dict()["path"] == str(runs_root / "later_partial")


def test_list_runs_on_missing_root_and_on_a_run_itself(tmp_path: Path, runs_root: Path) -> None:
    assert list_runs(tmp_path / "nope") == []
    assert [r.name for r in list_runs(runs_root / "sample_run")] == ["sample_run"]


def test_list_runs_prefers_summary_then_falls_back(runs_root: Path) -> None:
    run = runs_root / "sample_run"
    (run / "summary.json").unlink()
    (run / "runtime_state.json").unlink()
    info = [r for r in list_runs(runs_root) if r.name == "sample_run"][0]
    assert info.status == "completed"  # from the run_end event
    assert info.best_val_score == pytest.approx(0.6)  # max best_score in history
    assert info.test_delta == pytest.approx(0.15)  # from the eval events
    summary = json.loads((FIXTURE / "summary.json").read_text())
    summary.update(status="stopped", stopped="budget", test_delta_hard=-0.05)
    (run / "summary.json").write_text(json.dumps(summary))
    info = [r for r in list_runs(runs_root) if r.name == "sample_run"][0]
    assert info.status == "stopped (budget)"
    assert info.test_delta == pytest.approx(-0.05)
    # resumed with a raised budget, then Ctrl-C: the newer run_end wins over the earlier session's summary
    with (run / "events.jsonl").open("a") as f:
        for e in ({"event": "run_start", "resumed": True}, {"event": "run_end", "status": "stopped",
                                                             "stopped": "interrupted"}):
            f.write(json.dumps({"ts": T0 + 7200, **e}) + "\n")
    assert [r for r in list_runs(runs_root) if r.name == "sample_run"][0].status == "stopped (interrupted)"


def test_show_run(runs_root: Path) -> None:
    shown = show_run(runs_root / "sample_run", last=2)
    assert shown["info"]["name"] == "sample_run"
    assert shown["summary"]["test_delta_hard"] == pytest.approx(0.15)
    assert [r["step"] for r in shown["last_steps"]] == [3, 4]
    assert shown["teacher"].startswith("local/SmolLM2-135M-Instruct.Q4_1.gguf")
    assert shown["student"] == "local/SmolLM2-135M-Instruct.Q4_1.gguf"
    paths = shown["paths"]
    for key in ("config", "summary", "history", "events", "best_skill", "initial_skill", "latest_skill"):
        assert Path(paths[key]).is_file(), key
    assert paths["latest_skill"].endswith("skill_v0004.md")
    assert "report_html" not in paths  # not written yet
    json.dumps(shown)  # plain data the CLI can print as JSON

    partial = show_run(runs_root / "later_partial")
    assert partial["summary"] is None and partial["last_steps"] == []
    assert set(partial["paths"]) == {"events"}


def test_show_run_rejects_a_non_run(runs_root: Path) -> None:
    with pytest.raises(UsageError, match="not a run directory"):
        show_run(runs_root / "not_a_run")
