"""Appendix notes change the current skill, so the current score must be that skill's real score."""

from __future__ import annotations

import json
from pathlib import Path

from test_engine_plumbing import Scripted, events, run


def test_appendix_notes_are_rescored_before_the_next_gate(tmp_path: Path) -> None:
    # No edits, one note naming a word: the skill gains 'delta' only through the appendix, and the toy
    # student echoes the skill, so the real selection score of the noted skill is 1 of 4 solved (0.25).
    teacher = Scripted("teacher", {"AnalystOutput": {"edits": [], "appendix_notes": ["The word is delta."]}})
    run_dir, summary, _ = run(tmp_path, "optimizer.use_skill_aware_reflection=true", "train.num_epochs=1",
                              "optimizer.use_slow_update=false", "evaluation.gate_metric=hard", teacher=teacher)
    history = json.loads((run_dir / "history.json").read_text())
    assert [h["action"] for h in history] == ["skip_no_patches", "skip_no_patches"]
    assert summary["baseline_selection_hard"] == 0.0
    step1 = history[0]
    assert step1["n_appendix_notes_added"] == 1
    assert step1["current_score"] == 0.25  # was the baseline's 0.0: the score of a different skill
    rows = [json.loads(x) for x in (run_dir / "steps/step_0001/appendix_eval/results.jsonl").read_text().splitlines()]
    assert sorted(r["hard"] for r in rows) == [0.0, 0.0, 0.0, 1.0]
    rescored = [e for e in events(run_dir) if e["event"] == "gate" and e.get("stage") == "appendix"]
    assert rescored and rescored[0]["current_score"] == 0.25
    state = json.loads((run_dir / "runtime_state.json").read_text())
    assert state["current_score"] == 0.25
    # step 2 adds nothing new (the same note deduplicates): no second evaluation, the cache is not needed
    assert not (run_dir / "steps/step_0002/appendix_eval").exists()
