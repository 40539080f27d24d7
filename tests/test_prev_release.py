"""A run directory written by the previous release (tests/fixtures/prev_release_run, see its .md) is read by
today's typed records and resumed by today's trainer: runtime_state.json migrates from schema 1 (no
schema_version) and training continues for one more epoch with the embedded model."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skillgrad.core.records import (
    RUNTIME_STATE_VERSION,
    ApplyReport,
    ResultLine,
    RunFiles,
    migrate_runtime_state,
)
from skillgrad.engine.state import RunState
from skillgrad.errors import UsageError
from skillgrad.runs.report_data import load_run

FIXTURE = Path(__file__).parent / "fixtures" / "prev_release_run"


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_prev_release_state_migrates() -> None:
    saved = _json(FIXTURE / "runtime_state.json")
    assert "schema_version" not in saved and "judgements" not in saved  # really the older format
    state = RunState.from_json(saved)
    assert state.schema_version == RUNTIME_STATE_VERSION == 2
    assert state.judgements == [] and state.sel_degenerate == {}
    assert state.best_skill == saved["best_skill"] and state.last_completed_step == 2
    assert state.to_json()["schema_version"] == RUNTIME_STATE_VERSION


def test_newer_state_is_refused_with_the_fix() -> None:
    with pytest.raises(UsageError, match=r"run/runtime_state.json was written by a newer skillgrad .*upgrade"):
        migrate_runtime_state({"schema_version": RUNTIME_STATE_VERSION + 1}, "run/runtime_state.json")


def test_records_read_the_prev_release_files() -> None:
    warned: list[str] = []
    files = RunFiles(FIXTURE, warn=warned.append)
    summary = files.summary()
    assert summary is not None and summary.status == "completed" and summary.version == "skillgrad-0.1.0"
    assert summary.test_hard == pytest.approx(0.4) and summary.best_step in (1, 2)
    assert isinstance(summary.get("epoch_stats"), list)  # a field the record does not name is kept
    assert [r.step for r in files.history()] == [1, 2]
    events = list(files.events())
    assert len(events) == 170 and {"run_start", "run_end", "llm_call"} <= {e.event for e in events}
    results = list(files.lines(ResultLine, "steps/step_0001/rollout/results.jsonl"))
    assert len(results) == 5 and all(r.hard in (0.0, 1.0) and r.item_id for r in results)
    report = files.record(ApplyReport, "steps/step_0001/edit_apply_report.json")
    assert report is not None and report.total == len(report.outcomes or [])
    # the typed records change no value of a real run's files (a field typed wrongly would read as None)
    assert summary.as_dict() == _json(FIXTURE / "summary.json")
    state = files.runtime_state()
    assert state is not None and state.as_dict() == _json(FIXTURE / "runtime_state.json")
    assert [r.as_dict() for r in files.history()] == _json(FIXTURE / "history.json")
    raw_events = [json.loads(ln) for ln in (FIXTURE / "events.jsonl").read_text().splitlines()]
    assert [e.as_dict() for e in events] == raw_events
    rel = "steps/step_0001/rollout/results.jsonl"
    assert [r.as_dict() for r in results] == [json.loads(ln) for ln in (FIXTURE / rel).read_text().splitlines()]
    assert report.as_dict() == _json(FIXTURE / "steps/step_0001/edit_apply_report.json")
    assert warned == []
    assert load_run(FIXTURE).warnings == []


def test_records_are_tolerant(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text(json.dumps({"status": "completed", "test_hard": "n/a", "best_step": "3",
                                                       "new_field": {"a": 1}}))
    (tmp_path / "history.json").write_text("[1, {\"step\": 1, \"timing\": 5}]")
    (tmp_path / "runtime_state.json").write_text("[]")
    (tmp_path / "events.jsonl").write_text('{"event": "a", "x": 1}\n{"event": \n{"event": "b", "ts": "bad"}\n')
    warned: list[str] = []
    files = RunFiles(tmp_path, warn=warned.append)
    s = files.summary()
    assert s is not None and s.test_hard is None and s.best_step == 3 and s.as_dict()["new_field"] == {"a": 1}
    assert [(r.step, r.timing) for r in files.history()] == [(1, None)]
    assert files.runtime_state() is None
    assert [(e.event, e.ts, e.get("x")) for e in files.events()] == [("a", None, 1), ("b", None, None)]
    assert warned == ["runtime_state.json: unexpected JSON type list; ignored", "events.jsonl: 1 damaged line skipped"]


@pytest.mark.slow
def test_resume_prev_release_run_one_more_epoch(tmp_path: Path, gguf_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    before = _json(FIXTURE / "history.json")
    proc = subprocess.run([sys.executable, "-m", "skillgrad.cli", "resume", str(run), "-q",
                           "-o", "train.num_epochs=2", "-o", "model.student.n_threads=1",
                           "-o", "model.teacher.n_threads=1"], capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    state, summary, history = (_json(run / n) for n in ("runtime_state.json", "summary.json", "history.json"))
    assert state["schema_version"] == RUNTIME_STATE_VERSION and state["last_completed_step"] == 4
    assert summary["status"] == "completed" and summary["total_steps"] == 4
    assert history[:2] == before and [r["step"] for r in history] == [1, 2, 3, 4]
    assert [r["epoch"] for r in history[2:]] == [2, 2]


def test_resume_refuses_a_newer_state_with_one_line(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    state_file = run / "runtime_state.json"
    state_file.write_text(json.dumps({**_json(state_file), "schema_version": RUNTIME_STATE_VERSION + 1}))
    before = state_file.read_bytes()
    proc = subprocess.run([sys.executable, "-m", "skillgrad.cli", "resume", str(run), "-q"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = [ln.lower() for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines == [f"error: {str(state_file).lower()} was written by a newer skillgrad (runtime state schema "
                     f"{RUNTIME_STATE_VERSION + 1}, this release reads up to {RUNTIME_STATE_VERSION}); upgrade "
                     "skillgrad (pip install -u skillgrad) to resume this run"]
    assert state_file.read_bytes() == before  # nothing already saved is lost
