"""A run that learned nothing says why (engine/no_learning.py): counts by reason, read back from the step records and
patch files, and the next step, in summary.json, on the CLI's result and in the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_baselines import VerifyingToy, run_env
from test_engine_plumbing import Scripted, ToyEnv

from skillgrad.engine.no_learning import REASONS, SEED_DOC, explain_no_learning, refusal_counts
from skillgrad.engine.state import RunState
from skillgrad.envs.base import Item
from skillgrad.runs.store import RunStore
from skillgrad.runs.summary_lines import no_learning_line

MALFORMED = '{"edits": [{"op": "append", "content": "trunc'


class NeverVerified(VerifyingToy):
    """Every proposed worked example fails the environment's check (the teacher cannot write the form)."""

    async def verify_example(self, item: Item, reply: str, student: Any) -> float:
        return 0.0


def test_unparsed_teacher_replies_are_counted_and_named(tmp_path: Path) -> None:
    teacher = Scripted("teacher", {"AnalystOutput": MALFORMED})
    run_dir, summary = run_env(tmp_path, ToyEnv(), "optimizer.demonstrations=0", teacher=teacher)
    nl = summary["no_learning"]
    assert nl["counts"] == {"teacher_unparsed": 2, "steps_nothing_proposed": 2}
    assert nl["summary"].startswith("learned nothing in 2 steps: every proposal was refused")
    assert "2 teacher replies that did not parse" in nl["summary"]
    assert "stronger teacher" in nl["next_step"].split(";")[0]
    assert json.loads((run_dir / "summary.json").read_text())["no_learning"] == nl
    assert no_learning_line(summary).startswith("learned nothing") and "Next: use a stronger teacher" in \
        no_learning_line(summary)


def test_examples_refused_by_the_checks_point_to_seeding(tmp_path: Path) -> None:
    teacher = Scripted("teacher", {"AnalystOutput": MALFORMED, "Demonstration": {"reply": "a table, badly"}})
    run_dir, summary = run_env(tmp_path, NeverVerified(), "optimizer.demonstrations=2", teacher=teacher)
    nl = summary["no_learning"]
    logs = [d for f in sorted(run_dir.glob("steps/step_*/patches/demonstrations.json"))
            for d in json.loads(f.read_text())["log"]]
    failed = [d for d in logs if not d["verified"] and isinstance(d["score"], float) and d["score"] < 1]
    refused = sum(d["source"] != "own_reply_repair" for d in failed)
    repairs = len(failed) - refused  # the optimizer's repairs of the student's replies are no teacher's examples
    assert refused >= 2 and nl["counts"]["examples_refused_by_checks"] == refused
    assert nl["counts"].get("repairs_failed", 0) == repairs
    assert nl["counts"]["teacher_unparsed"] == 2  # the analysts' replies
    assert f"{refused} worked examples your checks failed" in nl["summary"]
    assert nl["next_step"].startswith("seed one worked example by hand") and SEED_DOC in nl["next_step"]
    assert "passed your checks" in nl["note"]


def test_a_run_that_learned_has_no_explanation(tmp_path: Path) -> None:
    _, summary = run_env(tmp_path, ToyEnv())
    assert summary["total_accepts"] >= 1 and summary["no_learning"] is None


def test_counts_from_step_records(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    hist = [{"step": 1, "action": "reject", "edit_apply_summary": {"skipped": 3, "refused_checker_text": 2, "errors": 1}},
            {"step": 2, "action": "blocked"}, {"step": 3, "action": "skip_no_patches", "rollout_hard": 1}]
    assert refusal_counts(store, hist) == {"edits_refused_by_guard": 2, "edits_skipped": 2, "gate_rejected": 1,
                                           "gate_blocked": 1, "steps_all_passed": 1}
    assert explain_no_learning(store, hist, RunState(best_origin="step_0002")) is None
    nl = explain_no_learning(store, [], RunState())
    assert nl is not None and nl["summary"] == "no training step ran"


def test_report_dashboard_and_cli_say_why(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from skillgrad.cli import _print_result, out
    from skillgrad.runs.report import write_report
    from skillgrad.ui.app import create_app

    teacher = Scripted("teacher", {"AnalystOutput": MALFORMED})
    run_dir, summary = run_env(tmp_path, ToyEnv(), "optimizer.demonstrations=0", teacher=teacher)
    _, md = write_report(run_dir)
    text = md.read_text()
    assert "## Why nothing was learned" in text and "2 teacher replies that did not parse" in text
    assert "Next step: use a stronger teacher" in text
    page = TestClient(create_app(tmp_path), base_url="http://127.0.0.1").get("/run", params={"r": "run"}).text
    assert 'id="no-learning"' in page and "2 teacher replies that did not parse" in page
    with out.capture() as cap:
        _print_result(summary, run_dir)
    last = cap.get().strip().splitlines()[-1]
    assert last.startswith("learned nothing in 2 steps") and "Next: use a stronger teacher" in last


def test_a_failed_repair_of_the_student_reply_is_not_counted_as_a_refused_worked_example(tmp_path: Path) -> None:
    # the log entries a small-student step writes (engine/proposers/sources.py): a teacher's correction the checks
    # failed, and the optimizer's own repair of the student's failed reply that still failed (no one wrote that one)
    store = RunStore(tmp_path)
    store.write_json("steps/step_0001/patches/demonstrations.json", {"items": [], "log": [
        {"source": "teacher_correction", "verified": False, "score": 0.0, "why": "failed the checks"},
        {"source": "own_reply_repair", "verified": False, "score": 0.0,
         "why": "no repair of the student's reply passed"},
        {"source": "own_reply_repair", "verified": False, "score": None, "why": "no repair to try"}]})
    counts = refusal_counts(store, [{"step": 1, "action": "reject"}])
    assert counts["examples_refused_by_checks"] == 1 and counts["repairs_failed"] == 1
    assert "1 repair of a failed student reply that still failed your checks" in \
        ", ".join(f"{n} {REASONS[k][n != 1]}" for k, n in counts.items())
