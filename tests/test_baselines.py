"""Zero-call baselines (engine/baselines.py): the few-shot skill makes no teacher call, takes verified gold answers
first and the student's own passing replies after, is scored beside the trained skill on the same held-out items,
and can be the run's step-0 candidate. Scripted models on a toy environment (the plumbing); the embedded model's
check is test_baselines_embedded.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from test_engine_plumbing import WORDS, Scripted, ToyEnv, events, run

from skillgrad.config.loader import load_config
from skillgrad.core.events import EventLog
from skillgrad.engine.baselines import FEWSHOT_FILE, FewShot, build_fewshot, epoch_order, fewshot_k
from skillgrad.engine.context import CURRENT_STAGE
from skillgrad.engine.student_probe import StudentForm
from skillgrad.engine.trainer import Trainer
from skillgrad.envs.base import Item, Splits, Trajectory
from skillgrad.errors import BudgetExceeded
from skillgrad.models.budget import Budget
from skillgrad.models.factory import Models
from skillgrad.models.meter import Meter
from skillgrad.runs.store import RunStore
from skillgrad.runs.summary_lines import baseline_lines
from skillgrad.skill.examples import find_examples


class VerifyingToy(ToyEnv):
    """The toy environment with a verifier: a reply passes when it names the task's word."""

    async def verify_example(self, item: Item, reply: str, student: Any) -> float:
        return 1.0 if item.gold in reply else 0.0


class StageTeacher(Scripted):
    """The scripted teacher, recording the trainer stage of every call."""

    def __init__(self) -> None:
        super().__init__("teacher")
        self.stages: list[str | None] = []

    async def complete(self, messages: list[dict[str, Any]], **kw: Any) -> Any:
        self.stages.append(CURRENT_STAGE.get())
        return await super().complete(messages, **kw)


def run_env(tmp_path: Path, env: Any, *overrides: str, teacher: Scripted | None = None,
            student: Scripted | None = None) -> tuple[Path, dict]:
    cfg = load_config(None, ["env.name=toy", "train.batch_size=2", "train.num_epochs=1", "env.workers=1",
                             "optimizer.use_slow_update=false", "optimizer.use_meta_skill=false", *overrides])
    models = Models(teacher=teacher or Scripted("teacher"), student=student or Scripted("student"), meter=Meter(),
                    budget=Budget(), cache=None)
    run_dir = tmp_path / "run"
    summary = asyncio.run(Trainer(cfg, env, models, RunStore(run_dir), EventLog(run_dir / "events.jsonl")).run())
    return run_dir, summary


def test_fewshot_uses_verified_gold_and_never_the_teacher(tmp_path: Path) -> None:
    teacher = StageTeacher()  # started from the initial skill: the few-shot start would leave the teacher nothing to do
    run_dir, summary = run_env(tmp_path, VerifyingToy(), "optimizer.start_from=initial", teacher=teacher)
    fs = FewShot.from_json(json.loads((run_dir / FEWSHOT_FILE).read_text()))
    assert fs.sources() == {"gold": 4} and fs.replies_tried == 0
    assert [e.reply for e in find_examples(fs.skill)] == [e["reply"] for e in fs.examples]
    assert sorted(e["reply"] for e in fs.examples) == sorted(WORDS[:4])
    assert teacher.stages and "fewshot_baseline" not in teacher.stages  # the teacher was called, never for this
    b = summary["baselines"]
    assert b["initial"]["score"] == 0.0 and b["fewshot"]["score"] == 1.0 and b["fewshot"]["n"] == 4
    assert b["fewshot"]["examples"] == 4 and b["fewshot"]["sources"] == {"gold": 4}
    assert len(b["fewshot"]["interval"]) == 2 and b["initial"]["interval"] == [0.0, 0.0]
    assert summary["best_baseline"] == "fewshot"
    g = summary["gain_over_best_baseline"]
    assert g["over"] == "fewshot" and g["delta"] == summary["test_hard"] - 1.0 and g["n"] == 4
    assert (run_dir / "test_eval_fewshot/summary.json").exists()
    ev = [e for e in events(run_dir) if e["event"] == "baseline_fewshot"]
    assert ev and ev[0]["examples"] == 4
    assert any("few-shot" in line and "100.0% of 4" in line for line in baseline_lines(summary))


def test_gold_the_checks_refuse_is_not_an_example(tmp_path: Path) -> None:
    class Strict(VerifyingToy):
        async def verify_example(self, item: Item, reply: str, student: Any) -> float:
            return 1.0 if reply.startswith("Words:") and item.gold in reply else 0.0  # a bare value is no reply

    order = Strict().splits.train
    fs = asyncio.run(build_fewshot(Strict(), Scripted("student"), "# Toy\n", order, 4, bootstrap=[], run_items=None))
    assert fs.examples == [] and fs.gold_tried == 4 and fs.skill == "# Toy\n" and "bootstrapping is off" in fs.why_none


def test_student_replies_are_bootstrapped_without_a_verifier() -> None:
    """An environment without a verifier: the student's own passing replies (the first step's batch) are the examples."""
    env = ToyEnv()
    skill = "# Toy skill\n\nKnown words: alpha charlie\n"
    calls: list[list[str]] = []

    async def run_items(items: list[Item]) -> list[Trajectory]:
        calls.append([it.id for it in items])
        return [await env.run_task(it, skill, Scripted("student")) for it in items]

    train = env.splits.train
    fs = asyncio.run(build_fewshot(env, Scripted("student"), skill, train, 16, bootstrap=train[:3], run_items=run_items))
    assert calls == [["t0", "t1", "t2"]] and fs.replies_tried == 3
    assert [e["item_id"] for e in fs.examples] == ["t0", "t2"] and fs.sources() == {"student_reply": 2}
    assert all(e["reply"].startswith("Words: alpha charlie") for e in fs.examples)


def test_k_follows_the_probe_and_the_room() -> None:
    assert fewshot_k(StudentForm(prefers="example", probed=True))[0] == 32
    assert fewshot_k(StudentForm(prefers="rule", probed=True))[0] == 16
    assert fewshot_k(None)[0] == 16 and fewshot_k(StudentForm(), 5) == (5, "evaluation.fewshot_k")
    env = VerifyingToy()
    small = Scripted("student")
    small.context_window = 30  # half of it: room for one example beside the skill, not two
    fs = asyncio.run(build_fewshot(env, small, "# Toy\n", env.splits.train, 4, bootstrap=[], run_items=None))
    assert len(fs.examples) == 1
    two = asyncio.run(build_fewshot(env, Scripted("student"), "# Toy\n", env.splits.train, 2, bootstrap=[],
                                    run_items=None))
    assert len(two.examples) == 2


def test_epoch_order_is_the_first_epochs_batches() -> None:
    items = [Item(id=f"i{n}", inputs={"question": str(n)}) for n in range(7)]
    from skillgrad.engine.schedule import plan_epoch

    first = plan_epoch(items, 1042, 3, 3)[0]
    order = epoch_order(items, 1042, 3)
    assert order[:3] == first and sorted(i.id for i in order) == sorted(i.id for i in items)


def test_start_from_fewshot_goes_through_the_gate(tmp_path: Path) -> None:
    run_dir, summary = run_env(tmp_path, VerifyingToy(), "optimizer.start_from=fewshot")
    gates = [e for e in events(run_dir) if e["event"] == "gate" and e.get("origin") == "fewshot_baseline"]
    assert len(gates) == 1 and gates[0]["action"] == "accept_new_best" and gates[0]["step"] == 0
    assert summary["best_origin"] in ("fewshot_baseline",) or summary["best_step"] >= 1
    assert summary["test_hard"] >= summary["baselines"]["fewshot"]["score"]
    assert summary["gain_over_best_baseline"]["delta"] >= 0


def test_a_run_stopped_by_its_budget_after_the_fewshot_start_keeps_it_as_best_skill(tmp_path: Path) -> None:
    """The few-shot start is adopted at step 0; a budget stop before any step ends must still leave it in
    best_skill.md (the file a user and the head to head read), not the initial skill."""
    class Spent(Scripted):  # the budget runs out at step 1's rollout, after the few-shot start was adopted
        async def complete(self, messages: list[dict[str, Any]], **kw: Any) -> Any:
            if CURRENT_STAGE.get() == "rollout":
                raise BudgetExceeded("budget.max_calls reached", kind="calls")
            return await super().complete(messages, **kw)

    run_dir, summary = run_env(tmp_path, VerifyingToy(), "optimizer.start_from=fewshot", "train.num_epochs=2",
                               student=Spent("student"))
    assert summary["status"] == "stopped" and summary["stopped"] == "budget"
    gates = [e for e in events(run_dir) if e["event"] == "gate" and e.get("origin") == "fewshot_baseline"]
    assert gates and gates[0]["action"] == "accept_new_best"
    best = (run_dir / "best_skill.md").read_text(encoding="utf-8")
    assert find_examples(best) and best == json.loads((run_dir / "runtime_state.json").read_text())["best_skill"]


def test_start_from_fewshot_that_is_worse_stays_initial(tmp_path: Path) -> None:
    """A few-shot skill no better on validation is refused like any candidate: the run starts from the initial skill."""
    class NoGain(VerifyingToy):
        async def verify_example(self, item: Item, reply: str, student: Any) -> float:
            return 1.0 if item.id == "t0" else 0.0  # only t0's gold passes its check

        async def run_task(self, item: Item, skill: str, student: Any, **kw: Any) -> Trajectory:
            t = await super().run_task(item, skill, student, **kw)
            t.hard = t.soft = 0.0 if item.id == "t0" else t.hard  # ... and the student never passes t0
            return t

    run_dir, summary = run_env(tmp_path, NoGain(), "optimizer.start_from=fewshot", "train.num_epochs=1")
    gates = [e for e in events(run_dir) if e["event"] == "gate" and e.get("origin") == "fewshot_baseline"]
    assert len(gates) == 1 and gates[0]["action"] == "reject"


def test_baselines_off_scores_no_fewshot(tmp_path: Path) -> None:
    run_dir, summary = run_env(tmp_path, VerifyingToy(), "evaluation.fewshot_baseline=false",
                               "optimizer.start_from=initial")
    assert not (run_dir / FEWSHOT_FILE).exists()
    assert set(summary["baselines"]) == {"initial"} and summary["best_baseline"] == "initial"


@pytest.mark.parametrize("bad", ["optimizer.start_from=best", "evaluation.fewshot_k=-1"])
def test_bad_options_are_refused(bad: str) -> None:
    from skillgrad.errors import SkillgradError

    with pytest.raises(SkillgradError):
        load_config(None, ["env.name=toy", bad])


def test_old_toy_run_still_learns_with_baselines(tmp_path: Path) -> None:
    """The plumbing run of test_engine_plumbing (no verifier, no passing reply at first): no few-shot skill, said why."""
    _, summary, _ = run(tmp_path, "train.num_epochs=1")
    assert summary["baselines"]["fewshot"]["score"] is None
    assert "student passed none" in summary["baselines"]["fewshot"]["why"]
    assert summary["gain_over_best_baseline"]["over"] == "initial"


def test_report_dashboard_and_cli_show_the_baselines(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from skillgrad.cli import _print_result, out
    from skillgrad.runs.report import write_report
    from skillgrad.ui.app import create_app

    run_dir, summary = run_env(tmp_path, VerifyingToy())
    _, md = write_report(run_dir)
    text = md.read_text()
    assert "## Baselines (same held-out items, zero teacher calls)" in text
    assert "| few-shot baseline (zero teacher calls) | 100.0% |" in text and "4 examples (gold 4)" in text
    assert "Trained vs the best baseline (few-shot baseline (zero teacher calls))" in text
    page = TestClient(create_app(tmp_path), base_url="http://127.0.0.1").get("/run", params={"r": "run"}).text
    assert 'id="baselines"' in page and "few-shot baseline (zero teacher calls): 100.0% of 4" in page
    with out.capture() as cap:
        _print_result(summary, run_dir)
    assert "few-shot baseline" in cap.get() and "trained vs the best baseline" in cap.get()


class StageStudent(Scripted):
    """The scripted student, recording the trainer stage of every call."""

    def __init__(self) -> None:
        super().__init__("student")
        self.stages: list[str | None] = []

    async def complete(self, messages: list[dict[str, Any]], **kw: Any) -> Any:
        self.stages.append(CURRENT_STAGE.get())
        return await super().complete(messages, **kw)


def test_bootstrapped_examples_come_from_step_one_at_no_cost(tmp_path: Path) -> None:
    """Without a verifier, the few-shot skill takes the student's passing replies from step 1's saved rollout (the
    initial skill on the first batch): the run makes no student call for it."""
    class Knows(ToyEnv):
        def initial_skill(self) -> str:
            return "# Toy skill\n\nKnown words: alpha bravo charlie delta\n"

    student = StageStudent()
    cfg = load_config(None, ["env.name=toy", "train.batch_size=2", "train.num_epochs=1", "env.workers=1",
                             "optimizer.use_slow_update=false", "optimizer.use_meta_skill=false",
                             "optimizer.start_from=initial"])  # the run-end path (start_from fewshot asks at start)
    models = Models(teacher=Scripted("teacher"), student=student, meter=Meter(), budget=Budget(), cache=None)
    run_dir = tmp_path / "run"
    summary = asyncio.run(Trainer(cfg, Knows(), models, RunStore(run_dir), EventLog(run_dir / "events.jsonl")).run())
    fs = FewShot.from_json(json.loads((run_dir / FEWSHOT_FILE).read_text()))
    step1 = [json.loads(x)["item_id"] for x in (run_dir / "steps/step_0001/rollout/results.jsonl").read_text().splitlines()]
    assert [e["item_id"] for e in fs.examples] == step1 and fs.sources() == {"student_reply": 2}
    assert fs.replies_tried == 2 and "fewshot_baseline" not in student.stages
    assert student.stages.count("test_fewshot") == 4  # its held-out score: the only calls it costs
    assert summary["baselines"]["fewshot"]["sources"] == {"student_reply": 2}


class AlikeToy(ToyEnv):
    """The student passes the training tasks with the initial skill (a reply of its own each) and the validation
    tasks only once its skill holds worked examples, then with one reply for all of them: the guard's "same short
    reply" (engine/goodhart.py), which the initial skill's replies are not."""

    def __init__(self) -> None:
        super().__init__()
        val = [Item(id=f"v{i}", inputs={"question": f"Which word is number {i}?"}, gold=w) for i, w in enumerate(WORDS)]
        self.splits = Splits(train=self.splits.train, val=val[:4], test=val[:4])

    async def run_task(self, item: Item, skill: str, student: Any, **kw: Any) -> Trajectory:
        t = await super().run_task(item, skill, student, **kw)
        k = int(t.question.rstrip("?").rsplit(" ", 1)[-1])
        if item.id.startswith("t"):
            t.answer, t.hard = f"Word {k} is {item.gold}", 1.0
        else:
            t.answer, t.hard = ("Words: all of them", 1.0) if find_examples(skill) else (f"I do not know word {k}", 0.0)
        t.soft, t.fail_reason = t.hard, "" if t.hard else "wrong"
        return t


class GoldAlikeToy(AlikeToy):
    async def verify_example(self, item: Item, reply: str, student: Any) -> float:
        return 1.0 if item.gold in reply else 0.0


def _start_gate(run_dir: Path) -> dict[str, Any]:
    return next(e for e in events(run_dir) if e["event"] == "gate" and e.get("origin") == "fewshot_baseline")


def test_a_gold_few_shot_start_the_guard_flags_is_judged_on_its_score(tmp_path: Path) -> None:
    """All its examples are gold answers: the guard is waived for the start (the reason kept on the verdict, in
    summary.json and the report), the strict rule and gate_test still judge it."""
    from skillgrad.runs.report_data import RunData
    from skillgrad.runs.report_honest import honest_blocks
    from skillgrad.runs.report_render import render_markdown

    run_dir, summary = run_env(tmp_path, GoldAlikeToy(), "optimizer.start_from=fewshot")
    fs = FewShot.from_json(json.loads((run_dir / FEWSHOT_FILE).read_text()))
    assert fs.sources() == {"gold": 4}
    gate = _start_gate(run_dir)
    assert gate["action"] == "accept_new_best" and gate["decided_by"] != "degenerate"
    assert "same short reply for 4 of 4" in gate["guard_waived"]
    assert summary["guard_waived"] == [{"origin": "fewshot_baseline", "action": "accept_new_best",
                                        "reason": gate["guard_waived"]}]
    state = json.loads((run_dir / "runtime_state.json").read_text())
    assert list(state["guard_waived"].values()) == [gate["guard_waived"]] and state["best_skill"] == fs.skill
    md = render_markdown("run", honest_blocks(RunData(tmp_path, summary=summary), []), "assets")
    assert "Goodhart guard waived for" in md and "fewshot_baseline" in md and "Words: all of them" in md


def test_a_few_shot_start_of_the_students_own_replies_stays_guarded(tmp_path: Path) -> None:
    """Bootstrapped from the student's passing replies (no verifier): flagged, the start is blocked as before."""
    run_dir, summary = run_env(tmp_path, AlikeToy(), "optimizer.start_from=fewshot")
    fs = FewShot.from_json(json.loads((run_dir / FEWSHOT_FILE).read_text()))
    assert fs.sources() == {"student_reply": 2}
    gate = _start_gate(run_dir)
    assert gate["action"] == "blocked" and gate["decided_by"] == "degenerate" and "guard_waived" not in gate
    assert summary["guard_waived"] == [] and not find_examples((run_dir / "best_skill.md").read_text())
