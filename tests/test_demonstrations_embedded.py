"""The default path with the embedded SmolLM2 as student and teacher: the run probes the student, proposes
worked examples, verifies them with the environment's scorer, and applies a verified one as an edit.

One step on four `fewshot-format` questions (replies must start with "ANSWER:"): the 135M student never
writes the prefix, so every example that reaches the candidate was made and verified by the optimizer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from train_helpers import events

from skillgrad.config.loader import load_config, packaged_config_path
from skillgrad.engine.session import open_run, train_sync
from skillgrad.envs.fewshot_format.env import score_reply
from skillgrad.skill.examples import find_examples

pytestmark = pytest.mark.slow

# the sources whose reply is the student's, the teacher's or the gold answer, with at most the required label put on
WORDS_FROM = {"passing_rollout", "passing_rollout_trimmed", "teacher_correction", "expected_answer", "teacher_repair",
              "gold_repair", "own_reply_repair", "own_reply_trimmed"}


def test_a_verified_example_is_proposed_applied_and_recorded(tmp_path: Path, gguf_path: Path) -> None:
    cfg = load_config(packaged_config_path("demo-fewshot.yaml"), [
        "env.limit=4", "train.batch_size=4", "train.num_epochs=1", "evaluation.edit_credit=false",
        "gradient.minibatch_size=4",  # one analyst call: the rules are not what this test is about
        "evaluation.eval_test=false", "model.student.n_threads=1", "model.teacher.n_threads=1"])
    assert cfg.prompts.use_env_prompts is False  # the generic prompts: no family prompt dictates the edit
    run_dir = tmp_path / "run"
    summary = train_sync(open_run(cfg, run_dir))
    assert summary["status"] == "completed" and summary["total_steps"] == 1

    assert summary["student_probe"]["probed"] and summary["student_probe"]["prefers"] == "example"
    assert json.loads((run_dir / "student_probe.json").read_text())["calls"] == 6
    step = run_dir / "steps" / "step_0001"
    demos = json.loads((step / "patches" / "demonstrations.json").read_text())
    verified = [d for d in demos["log"] if d["verified"]]
    assert verified and summary["demonstrations"]["demonstrations"] == len(demos["items"]) >= 1
    report = json.loads((step / "edit_apply_report.json").read_text())
    applied = [o for o in report["outcomes"] if o["op"] == "example" and o["status"] == "applied_example"]
    assert applied and summary["demonstrations"]["examples_applied"] == len(applied)
    candidate = (step / "candidate_skill.md").read_text()
    # The log keeps every candidate of a task: a verified repair can be followed by the teacher's own reply that
    # the scorer refused (recorded so that a capable teacher is told why when asked again), so an example is
    # matched to its verified entry, not to the task's last one.
    for ex in find_examples(candidate):  # every example in the candidate passes its own task's scorer
        src = next(d for d in verified if d["question"] == ex.question and d["reply"] == ex.reply)
        assert src["source"] in WORDS_FROM  # the student's, the teacher's or the gold's words, never composed
        assert score_reply(ex.reply, _gold(run_dir, src["item_id"]))[0] == 1.0
    assert any(e["event"] == "student_probe" for e in events(run_dir))


def _gold(run_dir: Path, item_id: str) -> object:
    for line in (run_dir / "steps" / "step_0001" / "rollout" / "results.jsonl").read_text().splitlines():
        t = json.loads(line)
        if t["item_id"] == item_id:
            return t["gold"]
    raise AssertionError(item_id)
