"""Stage reuse on resume, told apart from a warm LLM cache: these runs have no cache, so a stage that ran
again would ask the scripted teacher again, rewrite its file and emit stage_start (the real-process SIGKILL
test is tests/test_resume.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_engine_plumbing import Scripted, events, run

import skillgrad.engine.step_stages as step_stages


class Killed(RuntimeError):
    pass


def test_finished_stages_are_reused_from_their_files_not_run_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without an LLM cache (so a warm cache cannot hide a re-run): a run killed in step 2's update stage
    continues from its step folder; no stage of step 1 and none of step 2's finished stages runs again."""
    real_update, calls = step_stages.update, {"n": 0}

    async def update_killed_in_step_2(*a, **kw):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 2:
            raise Killed("killed in step 2's update stage")
        return await real_update(*a, **kw)

    args = ("train.num_epochs=1", "optimizer.use_slow_update=false", "evaluation.edit_credit=false")
    monkeypatch.setattr(step_stages, "update", update_killed_in_step_2)
    with pytest.raises(Killed):
        run(tmp_path, *args)
    step2 = tmp_path / "run/steps/step_0002"
    kept = {f: (step2 / f).stat().st_mtime_ns for f in ("patches/reflect.json", "merged_patch.json",
                                                         "ranked_edits.json", "rollout/results.jsonl")}
    n_events = len(events(tmp_path / "run"))

    monkeypatch.setattr(step_stages, "update", real_update)
    teacher = Scripted("teacher")
    run_dir, summary, _ = run(tmp_path, *args, teacher=teacher)
    assert summary["status"] == "completed"
    second = events(run_dir)[n_events:]
    started = {(e["stage"], e["step"]) for e in second if e["event"] == "stage_start"}
    reused = {(e["stage"], e["step"]) for e in second if e["event"] == "stage_reused"}
    assert not {s for s in started if s[1] == 1}  # step 1 finished: nothing of it runs again
    assert {("reflect", 2), ("aggregate", 2), ("select", 2)} <= reused
    assert not {("reflect", 2), ("aggregate", 2), ("select", 2), ("baseline", 0)} & started
    assert ("update", 2) in started and ("gate", 2) in started
    assert not teacher.prompts  # the analysts of step 2 were not asked again
    assert {f: (step2 / f).stat().st_mtime_ns for f in kept} == kept  # the stage files were read, not rewritten
    assert len((step2 / "rollout/results.jsonl").read_text().splitlines()) == 2  # no rollout task re-run
