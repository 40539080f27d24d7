"""Meta reflect (epoch-end review of the steps, gated) and deep reflect (multi-turn probing before the
patch): plumbing with a scripted teacher and the toy environment, then each once end to end with the
embedded model (slow)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from test_engine_plumbing import WORDS, Scripted, ToyEnv, events, run

from skillgrad.config.loader import load_config
from skillgrad.core.events import EventLog
from skillgrad.engine.trainer import Trainer
from skillgrad.models.budget import Budget
from skillgrad.models.factory import Models
from skillgrad.models.meter import Meter
from skillgrad.runs.store import RunStore


class Crash(RuntimeError):
    pass


def crash(_: str) -> Any:
    raise Crash("killed")


def resume(tmp_path: Path, teacher: Scripted, *overrides: str) -> dict[str, Any]:
    cfg = load_config(None, ["env.name=toy", "train.batch_size=2", "train.num_epochs=2", "env.workers=1",
                             "optimizer.slow_update_samples=2", *overrides])
    models = Models(teacher=teacher, student=Scripted("student"), meter=Meter(), budget=Budget(), cache=None)
    run_dir = tmp_path / "run"
    return asyncio.run(Trainer(cfg, ToyEnv(), models, RunStore(run_dir), EventLog(run_dir / "events.jsonl")).run())


def names(teacher: Scripted) -> list[str]:
    return [n for n, _ in teacher.prompts]


# ---------------------------------------------------------------- meta reflect
def test_meta_reflect_candidate_is_gated_and_files_are_kept(tmp_path: Path) -> None:
    # each step learns one word (scripted analyst); the epoch review adds two more at once
    meta = {"edits": [{"op": "append", "content": "- charlie delta echo"}], "meta_summary": "bulk word lists helped"}
    teacher = Scripted("teacher", {"MetaReflect": meta})
    run_dir, summary, _ = run(tmp_path, "optimizer.use_meta_reflect=true", "optimizer.use_slow_update=false",
                              "optimizer.use_meta_skill=false", "gradient.failure_only=true", teacher=teacher)
    assert summary["status"] == "completed"
    e1 = run_dir / "meta_reflect/epoch_01"
    for f in ("meta_reflect_result.json", "candidate_skill.md", "edit_apply_report.json", "gate_result.json"):
        assert (e1 / f).is_file(), f
    result = json.loads((e1 / "meta_reflect_result.json").read_text())
    assert result["reply"]["ok"] and result["meta_summary"] == "bulk word lists helped"
    gate = json.loads((e1 / "gate_result.json").read_text())
    assert gate["action"] == "accept_new_best" and gate["gate_score"] > gate["score_before"]
    assert json.loads((e1 / "edit_apply_report.json").read_text())["applied"] == 1
    # the review saw both steps of epoch 1 with what they kept; epoch 2's review saw epoch 1's summary
    prompts = [u for n, u in teacher.prompts if n == "MetaReflect"]
    assert len(prompts) == 2
    assert "### Step 1: ACCEPT_NEW_BEST" in prompts[0] and "### Step 2:" in prompts[0]
    assert "Kept edits:" in prompts[0] and "### Step 3" not in prompts[0]
    assert "bulk word lists helped" in prompts[1] and "### Step 3" in prompts[1]
    gates = [e for e in events(run_dir) if e["event"] == "gate" and e.get("stage") == "meta_reflect"]
    assert [g["action"] for g in gates][0] == "accept_new_best"
    state = json.loads((run_dir / "runtime_state.json").read_text())
    assert "charlie delta echo" in (run_dir / "best_skill.md").read_text()
    assert state["best_origin"].startswith(("meta_reflect_epoch_", "step_"))


def test_meta_reflect_that_hurts_is_rejected(tmp_path: Path) -> None:
    def delete_a_word(user: str) -> dict[str, Any]:
        word = next(w for w in WORDS if f"- {w}" in user.split("## Edit budget")[0])
        return {"edits": [{"op": "delete", "target": f"- {word}", "content": ""}], "meta_summary": ""}

    teacher = Scripted("teacher", {"MetaReflect": delete_a_word})
    run_dir, _, _ = run(tmp_path, "optimizer.use_meta_reflect=true", "optimizer.use_slow_update=false",
                        "train.num_epochs=1", teacher=teacher)
    gate = json.loads((run_dir / "meta_reflect/epoch_01/gate_result.json").read_text())
    assert gate["action"] == "reject"
    if gate.get("gate_early_stop"):  # scoring stopped once it could not pass (engine/gate/early.py): a bound
        assert gate["gate_score"] is None and gate["gate_score_upper_bound"] <= gate["score_before"]
        assert gate["selection_n_scored"] < gate["selection_n_items"] and gate["rule"]["decided_by"] == "early_stop"
    else:
        assert gate["gate_score"] < gate["score_before"]
    assert (run_dir / "best_skill.md").read_text() != (run_dir / "meta_reflect/epoch_01/candidate_skill.md").read_text()


def test_meta_reflect_resumes_without_asking_again(tmp_path: Path) -> None:
    meta = {"edits": [{"op": "append", "content": "- echo"}], "meta_summary": "s"}
    first = Scripted("teacher", {"MetaReflect": meta, "SlowUpdate": crash})
    with pytest.raises(Crash):  # killed inside epoch 2's slow update, after epoch 2's meta reflect finished
        run(tmp_path, "optimizer.use_meta_reflect=true", "optimizer.slow_update_gate_with_selection=true",
            teacher=first)
    assert names(first).count("MetaReflect") == 2
    assert (tmp_path / "run/meta_reflect/epoch_02/meta_reflect_result.json").is_file()
    assert not (tmp_path / "run/summary.json").exists()
    second = Scripted("teacher", {"MetaReflect": meta})
    summary = resume(tmp_path, second, "optimizer.use_meta_reflect=true",
                     "optimizer.slow_update_gate_with_selection=true")
    assert summary["status"] == "completed"
    assert "MetaReflect" not in names(second)  # the epoch-2 review was reused from its folder
    assert names(second).count("SlowUpdate") == 1
    gate = json.loads((tmp_path / "run/meta_reflect/epoch_02/gate_result.json").read_text())
    assert gate["action"] in ("accept", "accept_new_best", "reject")


# ---------------------------------------------------------------- deep reflect
def probe_reply(user: str) -> dict[str, Any]:
    turn = int(user.split("(turn ")[1].split(" ")[0])
    return {"question": f"what did the student see at turn {turn}?", "look_at": [0, 1],
            "finding": "the skill has no word list entry for this question", "done": turn >= 2}


def test_deep_reflect_probes_then_patches(tmp_path: Path) -> None:
    teacher = Scripted("teacher", {"ProbeTurn": probe_reply})
    run_dir, summary, _ = run(tmp_path, "gradient.use_deep_reflect=true", "gradient.deep_reflect_failures=1",
                              "gradient.deep_reflect_successes=1", "train.num_epochs=1", teacher=teacher)
    assert summary["status"] == "completed"
    probes = json.loads((run_dir / "steps/step_0001/patches/deep_reflect.json").read_text())
    assert [p["source_type"] for p in probes] == ["failure"]  # step 1 has no successes yet
    assert len(probes[0]["turns"]) == 2 and probes[0]["stopped"] == "done"
    assert (run_dir / "steps/step_0001/patches/deep_fail_000.json").is_file()
    assert (run_dir / "steps/step_0001/patches/minibatch_fail_000.json").is_file()
    # turn 2 was shown the messages turn 1 asked to re-read, in full; the patch call got the findings
    probe_prompts = [u for n, u in teacher.prompts if n == "ProbeTurn"]
    assert "(nothing yet)" in probe_prompts[0] and "[1] user (full): What is word" in probe_prompts[1]
    deep_analyst = [u for n, u in teacher.prompts if n == "AnalystOutput" and "Findings from probing" in u]
    assert deep_analyst and "no word list entry" in deep_analyst[0]
    step2 = json.loads((run_dir / "steps/step_0002/patches/deep_reflect.json").read_text())
    assert sorted(p["source_type"] for p in step2) in (["failure", "success"], ["failure"], ["success"])
    ends = [e for e in events(run_dir) if e["event"] == "stage_end" and e["stage"] == "deep_reflect"]
    assert ends and ends[0]["counts"] == {"probed": 1, "turns": 2}


def test_deep_reflect_turns_are_bounded_and_cached(tmp_path: Path) -> None:
    never_done = {"question": "and then?", "look_at": [1], "finding": "", "done": False}
    first = Scripted("teacher", {"ProbeTurn": never_done, "Ranking": crash, "MergeOutput": crash})
    with pytest.raises(Crash):  # killed after deep reflect, in the merge of step 1
        run(tmp_path, "gradient.use_deep_reflect=true", "gradient.deep_reflect_failures=2",
            "gradient.merge_mode=llm", "train.num_epochs=1", teacher=first)
    probes = json.loads((tmp_path / "run/steps/step_0001/patches/deep_reflect.json").read_text())
    assert all(len(p["turns"]) == 3 and p["stopped"] == "max_turns" for p in probes)
    second = Scripted("teacher", {"ProbeTurn": never_done})
    resume(tmp_path, second, "gradient.use_deep_reflect=true", "gradient.deep_reflect_failures=2",
           "gradient.merge_mode=llm", "train.num_epochs=1")
    # step 1's probes were reused from the step folder; only step 2 probed
    assert names(second).count("ProbeTurn") == 3 * len(
        json.loads((tmp_path / "run/steps/step_0002/patches/deep_reflect.json").read_text()))


# ---------------------------------------------------------------- embedded model, end to end
@pytest.mark.slow
def test_meta_and_deep_reflect_with_the_embedded_model(tmp_path: Path, gguf_path: Path) -> None:
    """One epoch on `facts` with SmolLM2 as teacher and student: deep reflect probes a failure over real
    teacher turns before its patch; meta reflect reviews the epoch and its candidate meets the gate."""
    from train_helpers import tiny_config

    from skillgrad.engine.session import open_run, train_sync

    cfg = tiny_config("env.limit=2", "evaluation.min_val_items=2", "train.batch_size=2", "gradient.minibatch_size=2",
                      "evaluation.sel_env_num=2",
                      "optimizer.use_slow_update=false", "optimizer.use_meta_skill=false", "optimizer.use_meta_reflect=true",
                      "gradient.use_deep_reflect=true", "gradient.deep_reflect_failures=1",
                      "gradient.deep_reflect_successes=0", "evaluation.eval_test=false",
                      "evaluation.edit_credit=false", epochs=1)
    run_dir = tmp_path / "run"
    summary = train_sync(open_run(cfg, run_dir))
    assert summary["status"] == "completed"
    probes = json.loads((run_dir / "steps/step_0001/patches/deep_reflect.json").read_text())
    assert len(probes) == 1 and probes[0]["source_type"] == "failure"
    p = probes[0]
    assert 1 <= len(p["turns"]) <= 3 and p["stopped"] in ("done", "max_turns", "token_budget", "bad_reply")
    assert p["tokens"] > 0 and p["patch"]["origin"] == "deep"
    assert (run_dir / "steps/step_0001/patches/deep_fail_000.json").is_file()
    base = run_dir / "meta_reflect/epoch_01"
    result = json.loads((base / "meta_reflect_result.json").read_text())
    assert result["reply"]["template"] == "meta_reflect" and result["reply"]["raw"]
    gate = json.loads((base / "gate_result.json").read_text())
    assert gate["action"] in ("accept", "accept_new_best", "reject", "blocked", "skip_no_edits")
    if gate["action"] != "skip_no_edits":
        assert (base / "candidate_skill.md").is_file()
        # scored items, or (the gate stopped before any item could change its verdict) the record of that stop
        assert (base / "selection_eval/results.jsonl").is_file() or (base / "selection_eval/early_stop.json").is_file()
    stages = {e.get("stage") for e in events(run_dir) if e["event"] == "stage_end"}
    assert {"deep_reflect", "meta_reflect"} <= stages
