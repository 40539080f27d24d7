"""Two epochs of two steps on `facts` with the embedded SmolLM2 as student and teacher: every file of the
run directory, the events, and the held-out score of best_skill.md against the initial skill."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from train_helpers import events, tiny_config

from skillgrad.engine.session import open_run, train_sync
from skillgrad.skill import get_region

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory: pytest.TempPathFactory, gguf_path: Path) -> tuple[Path, dict]:
    run_dir = tmp_path_factory.mktemp("run") / "facts-run"
    cfg = tiny_config("evaluation.edit_credit=true")  # the default path, edit credit included
    summary = train_sync(open_run(cfg, run_dir))
    return run_dir, summary


def test_summary_and_held_out_score(trained_run: tuple[Path, dict]) -> None:
    run_dir, summary = trained_run
    assert summary["status"] == "completed"
    assert summary["total_steps"] == 4
    assert summary["n_test"] == 10
    assert summary["baseline_test_hard"] is not None and summary["test_hard"] is not None
    # Seeded and deterministic (temperature 0, fixed seed): the initial skill knows none of the facts, so
    # training must accept at least one step, and the best skill must be strictly better than the
    # initial one both on validation and on the held-out test split (a run learning nothing fails here).
    assert summary["total_accepts"] >= 1
    assert summary["best_selection_gate_score"] > summary["baseline_selection_gate_score"]
    assert summary["test_hard"] > summary["baseline_test_hard"]
    assert summary["version"].startswith("skillgrad-")
    assert summary["token_summary"]["total"]["calls"] > 0
    on_disk = json.loads((run_dir / "summary.json").read_text())
    assert on_disk["test_hard"] == summary["test_hard"]


def test_run_directory_layout(trained_run: tuple[Path, dict]) -> None:
    run_dir, _ = trained_run
    for rel in ("config.json", "history.json", "runtime_state.json", "best_skill.md", "summary.json",
                "events.jsonl", "llm_cache.sqlite", "skills/skill_v0000.md", "selection_eval_baseline/results.jsonl",
                "test_eval_baseline/summary.json", "test_eval/summary.json"):
        assert (run_dir / rel).exists(), rel
    history = json.loads((run_dir / "history.json").read_text())
    assert [h["step"] for h in history] == [1, 2, 3, 4]
    for h in history:
        step = run_dir / "steps" / f"step_{h['step']:04d}"
        assert (run_dir / "skills" / f"skill_v{h['step']:04d}.md").exists()
        for rel in ("rollout/results.jsonl", "trajectory_digest.json", "step_record.json"):
            assert (step / rel).exists(), (step, rel)
        convs = list((step / "rollout" / "predictions").glob("*/conversation.json"))
        assert len(convs) == h["rollout_n"] == 5
        # the teacher sees the gold answer in an evaluation message
        conv = json.loads(convs[0].read_text())
        assert conv[-1]["role"] == "evaluation"
        if h["action"] in ("accept", "accept_new_best", "reject"):
            for rel in ("merged_patch.json", "ranked_edits.json", "candidate_skill.md", "edit_apply_report.json",
                        "selection_eval/results.jsonl"):
                assert (step / rel).exists(), (step, rel)
            report = json.loads((step / "edit_apply_report.json").read_text())
            assert report["total"] == len(report["outcomes"]) > 0
            assert all(o["status"].startswith(("applied", "skipped", "error")) for o in report["outcomes"])
        if h["rollout_hard"] < 1:  # every failed task went to a failure analyst
            assert list((step / "patches").glob("minibatch_fail_*.json")), step
        else:
            assert h["action"] == "skip_no_patches"  # failure_only: nothing to reflect on
    state = json.loads((run_dir / "runtime_state.json").read_text())
    assert state["last_completed_step"] == 4 and state["finished"]
    assert (run_dir / "slow_update/epoch_01/slow_result.json").exists()
    assert (run_dir / "slow_update/epoch_02/slow_result.json").exists()
    assert (run_dir / "meta_skill/epoch_01/meta_skill_result.json").exists()
    assert (run_dir / "meta_skill/epoch_02/meta_skill_result.json").exists()
    # the current skill carries exactly one SLOW_UPDATE block, at the end
    final = (run_dir / "skills" / "skill_v0004.md").read_text()
    assert final.count("<!-- SLOW_UPDATE_START -->") == 1
    assert get_region(final, "SLOW_UPDATE") is not None
    # the meta skill is teacher-only memory: never in a shipped skill
    meta = json.loads((run_dir / "meta_skill/epoch_02/meta_skill_result.json").read_text())
    assert meta.get("action") == "skip_last_epoch"  # no step follows to use its answer (issue 31)
    if meta.get("meta_skill_content"):
        assert meta["meta_skill_content"] not in (run_dir / "best_skill.md").read_text()


def test_events_have_stage_boundaries_with_counts(trained_run: tuple[Path, dict]) -> None:
    run_dir, _ = trained_run
    evs = events(run_dir)
    names = [e["event"] for e in evs]
    assert names[0] == "run_start" and names[-1] == "run_end"
    starts = [e for e in evs if e["event"] == "stage_start"]
    ends = [e for e in evs if e["event"] == "stage_end"]
    assert len(starts) == len(ends) > 0
    stages = {e["stage"] for e in ends}
    assert {"baseline", "rollout", "reflect", "gate", "test_initial", "test_best"} <= stages
    for e in ends:
        assert {"seconds", "calls", "prompt_tokens", "completion_tokens", "cost", "counts"} <= set(e)
    rollout_ends = [e for e in ends if e["stage"] == "rollout"]
    assert all(e["counts"]["n"] == 5 and e["calls"] == 5 for e in rollout_ends)
    gates = [e for e in evs if e["event"] == "gate" and e["step"] > 0 and not e.get("stage")]
    assert len(gates) == sum(1 for e in ends if e["stage"] == "gate")
    calls = [e for e in evs if e["event"] == "llm_call"]
    assert {c["role"] for c in calls} == {"teacher", "student"}
