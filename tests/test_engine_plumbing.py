"""Trainer plumbing with a scripted teacher and a deterministic toy environment (no model): update modes,
protected regions after rewrites, autonomous budget 0, malformed outputs, merge fallback, schedules, buffer.

The system-level evidence (real embedded model, real servers) is in test_train_integration.py and friends;
these tests pin the mechanics that a tiny model cannot be relied on to exercise."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any, ClassVar

from skillgrad.config.loader import load_config
from skillgrad.core.events import EventLog
from skillgrad.engine.buffer import BufferEntry, StepBuffer
from skillgrad.engine.trainer import Trainer
from skillgrad.envs.base import EnvOptions, Item, Splits, Trajectory
from skillgrad.models.base import Completion, Usage
from skillgrad.models.budget import Budget
from skillgrad.models.factory import Models
from skillgrad.models.meter import Meter
from skillgrad.runs.store import RunStore
from skillgrad.skill import get_region, set_region

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]


class ToyEnv:
    """Task k is solved iff the skill contains WORDS[k]; the student names the words the skill holds."""

    name: ClassVar[str] = "toy"
    scorer: ClassVar[str] = "word in skill"
    Options: ClassVar[type[EnvOptions]] = EnvOptions

    def __init__(self) -> None:
        items = [Item(id=f"t{i}", inputs={"question": f"What is word {i}?"}, gold=w) for i, w in enumerate(WORDS)]
        self.splits = Splits(train=items[:4], val=items[:4], test=items[:4])

    def data_status(self) -> str:
        return "ready"

    def load_splits(self) -> Splits:
        return self.splits

    def initial_skill(self) -> str:
        return "# Toy skill\n\nKnown words:\n"

    def prompt_dirs(self) -> list[Path]:
        return []

    async def run_task(self, item: Item, skill: str, student: Any, *, sample: int = 0, temperature: float = 0.0,
                       feedback: bool = True) -> Trajectory:
        msgs = [{"role": "system", "content": skill}, {"role": "user", "content": item.inputs["question"]}]
        c = await student.complete(msgs, max_tokens=16, stage="rollout")
        hard = 1.0 if item.gold in c.text else 0.0
        return Trajectory(item_id=item.id, messages=msgs, answer=c.text, gold=item.gold, hard=hard, soft=hard,
                          question=item.inputs["question"],
                          fail_reason="" if hard else "missing_knowledge: word absent")


class Scripted:
    """A scripted LLM: replies by schema name; records every prompt."""

    def __init__(self, role: str, overrides: dict[str, Any] | None = None) -> None:
        self.role, self.name, self.supports_vision, self.is_agent = role, f"scripted:{role}", False, False
        self.context_window = 100_000
        self.overrides = overrides or {}
        self.prompts: list[tuple[str, str]] = []

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    async def complete(self, messages: list[dict[str, Any]], *, schema: Any = None, max_tokens: int = 512,
                       temperature: float | None = 0.0, stage: str = "", sample: int = 0,
                       extra: dict[str, Any] | None = None) -> Completion:
        user = str(messages[-1]["content"])
        if schema is None:  # student: the known words the skill holds, and the task (a reply restating the whole
            # skill, or one identical reply for every item, is degenerate and blocked by the gate: engine/goodhart.py)
            known = " ".join(w for w in WORDS if w in str(messages[0]["content"]))
            return Completion(text=f"Words: {known}\nTask: {user}", usage=Usage(5, 5))
        name = schema.__name__
        self.prompts.append((name, user))
        reply = self.overrides.get(name)
        if callable(reply):
            reply = reply(user)
        if reply is None:
            reply = self._default(name, user)
        text = reply if isinstance(reply, str) else json.dumps(reply)
        from skillgrad.errors import StructuredOutputError

        try:
            parsed = schema.model_validate_json(text)
        except Exception as e:  # noqa: BLE001
            raise StructuredOutputError(f"bad reply: {e}", raw=text) from None
        return Completion(text=text, parsed=parsed, usage=Usage(10, 10))

    @staticmethod
    def _default(name: str, user: str) -> Any:
        golds = re.findall(r"expected: (\w+)", user) or re.findall(r"Expected answer: (\w+)", user)
        skill = user.split("## Current skill\n", 1)[-1].split("\n## ", 1)[0] if "## Current skill" in user else ""
        if name == "AnalystOutput":
            return {"edits": [{"op": "append", "content": f"- {g}"} for g in golds[:1]],
                    "failure_summary": [{"failure_type": "missing_knowledge", "count": 1, "description": "no word"}]}
        if name == "SuggestionOutput":
            return {"revise_suggestions": [{"type": "add_rule", "title": f"add {g}", "instruction": f"add {g}"}
                                           for g in golds[:1]]}
        if name == "SkillDocument":  # a rewrite that (wrongly) drops the protected blocks
            words = re.findall(r"add (\w+)", user) + golds
            body = skill.split("<!--", 1)[0].rstrip()
            return {"new_skill": body + "\n" + "\n".join(f"- {w}" for w in dict.fromkeys(words)) + "\n",
                    "change_summary": ["added words"]}
        if name in ("MergeOutput",):
            edits = re.findall(r'"content": "([^"]+)"', user)
            return {"edits": [{"op": "append", "content": c} for c in dict.fromkeys(edits)]}
        if name == "MergedSuggestions":
            return {"revise_suggestions": [{"type": "add_rule", "title": t, "instruction": t}
                                           for t in dict.fromkeys(re.findall(r'"title": "([^"]+)"', user))]}
        if name == "Ranking":
            return {"selected_indices": [0]}
        if name == "LearningRateDecision":
            return {"learning_rate": 1}
        if name == "SlowUpdate":
            return {"slow_update_content": "Check the word list first."}
        if name == "MetaSkill":
            return {"meta_skill_content": "Appending words works."}
        return {}


def run(tmp_path: Path, *overrides: str, teacher: Scripted | None = None,
        student: Scripted | None = None) -> tuple[Path, dict, Scripted]:
    cfg = load_config(None, ["env.name=toy", "train.batch_size=2", "train.num_epochs=2", "env.workers=1",
                             "optimizer.slow_update_samples=2", *overrides])
    teacher = teacher or Scripted("teacher")
    models = Models(teacher=teacher, student=student or Scripted("student"), meter=Meter(), budget=Budget(),
                    cache=None)
    run_dir = tmp_path / "run"
    store = RunStore(run_dir)
    trainer = Trainer(cfg, ToyEnv(), models, store, EventLog(run_dir / "events.jsonl"))
    summary = asyncio.run(trainer.run())
    return run_dir, summary, teacher


def events(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run_dir / "events.jsonl").read_text().splitlines()]


def test_patch_mode_learns_the_words(tmp_path: Path) -> None:
    run_dir, summary, _ = run(tmp_path)
    assert summary["status"] == "completed"
    assert summary["baseline_test_hard"] == 0.0 and summary["test_hard"] == 1.0
    best = (run_dir / "best_skill.md").read_text()
    assert all(w in best for w in WORDS[:4])
    actions = [h["action"] for h in json.loads((run_dir / "history.json").read_text())]
    # one word per step (one minibatch, one edit): each step strictly improves validation
    assert actions == ["accept_new_best"] * 4
    scores = [h["candidate_gate_score"] for h in json.loads((run_dir / "history.json").read_text())]
    assert scores == [0.25, 0.5, 0.75, 1.0]


def test_rewrite_modes_restore_protected_regions(tmp_path: Path) -> None:
    for mode in ("rewrite_from_suggestions", "full_rewrite_minibatch"):
        d = tmp_path / mode
        run_dir, summary, _ = run(d, f"optimizer.skill_update_mode={mode}", "gradient.failure_only=true")
        assert summary["test_hard"] == 1.0, mode
        name = "rewrite_result.json" if mode == "rewrite_from_suggestions" else "full_rewrite_result.json"
        assert (run_dir / "steps/step_0001" / name).exists()
        # step 3 rewrote a skill that held the epoch-1 SLOW_UPDATE block; the rewrite dropped it, code restored it
        for cand in run_dir.glob("steps/step_*/candidate_skill.md"):
            if int(cand.parent.name[-4:]) > 2:
                assert get_region(cand.read_text(), "SLOW_UPDATE") is not None, cand
        if mode == "full_rewrite_minibatch":
            h = json.loads((run_dir / "history.json").read_text())[0]
            assert h["edit_budget"] is None


def test_autonomous_budget_zero_applies_nothing(tmp_path: Path) -> None:
    teacher = Scripted("teacher", {"LearningRateDecision": {"learning_rate": 0}})
    run_dir, summary, _ = run(tmp_path, "optimizer.lr_control_mode=autonomous", "train.num_epochs=1",
                              teacher=teacher)
    history = json.loads((run_dir / "history.json").read_text())
    assert [h["action"] for h in history] == ["skip_no_edits", "skip_no_edits"]
    assert all(h["n_edits_ranked"] == 0 for h in history)
    assert json.loads((run_dir / "steps/step_0001/lr_decision.json").read_text())["learning_rate"] == 0
    assert summary["total_skips"] == {"skip_no_edits": 2}


def test_malformed_teacher_output_is_recorded_not_applied(tmp_path: Path) -> None:
    teacher = Scripted("teacher", {"AnalystOutput": '{"edits": [{"op": "append", "content": "trunc'})
    run_dir, summary, _ = run(tmp_path, "train.num_epochs=1", teacher=teacher)
    assert [h["action"] for h in json.loads((run_dir / "history.json").read_text())] == ["skip_no_patches"] * 2
    patch = json.loads((run_dir / "steps/step_0001/patches/minibatch_fail_000.json").read_text())
    assert patch["reply"]["ok"] is False and "trunc" in patch["reply"]["raw"]
    rejected = [e for e in events(run_dir) if e["event"] == "teacher_output_rejected"]
    assert rejected and rejected[0]["file"].endswith("minibatch_fail_000.json")
    assert (run_dir / "best_skill.md").read_text() == ToyEnv().initial_skill()


def test_failed_merge_falls_back_to_concatenation(tmp_path: Path) -> None:
    teacher = Scripted("teacher", {"MergeOutput": "not json"})
    run_dir, _, _ = run(tmp_path, "train.num_epochs=1", "gradient.minibatch_size=1", "gradient.merge_mode=llm",
                        teacher=teacher)
    fallbacks = [e for e in events(run_dir) if e["event"] == "merge_fallback"]
    assert fallbacks and fallbacks[0]["group"] == "failure"
    merged = json.loads((run_dir / "steps/step_0001/merged_patch.json").read_text())
    assert len(merged["items"]) == 2 and merged["fallbacks"]


def test_analyst_budget_follows_schedule_unless_compat(tmp_path: Path) -> None:
    base = ["train.num_epochs=2", "train.batch_size=1", "optimizer.learning_rate=4", "optimizer.min_learning_rate=2",
            "optimizer.lr_scheduler=linear", "optimizer.use_slow_update=false"]
    _, _, t1 = run(tmp_path / "a", *base, teacher=Scripted("teacher", {"AnalystOutput": {"edits": []}}))
    budgets = [int(re.search(r"at most (\d+) edits", u).group(1)) for n, u in t1.prompts if n == "AnalystOutput"]
    # skip steps never reach select, so the schedule index stays at 1: the budget is the step-1 value
    assert budgets and set(budgets) == {4}
    _, _, t2 = run(tmp_path / "b", *base)
    budgets = [int(re.search(r"at most (\d+) edits", u).group(1)) for n, u in t2.prompts if n == "AnalystOutput"]
    assert budgets[:4] == [4, 4, 3, 3]
    _, _, t3 = run(tmp_path / "c", *base, "compat.skillopt_analyst_budget=true")
    budgets = [int(re.search(r"at most (\d+) edits", u).group(1)) for n, u in t3.prompts if n == "AnalystOutput"]
    assert set(budgets) == {4}


def test_rejections_reach_later_epochs_with_run_scoped_buffer(tmp_path: Path) -> None:
    # the analyst proposes a useless word: every candidate is rejected
    teacher = Scripted("teacher", {"AnalystOutput": {"edits": [{"op": "append", "content": "- zulu"}]}})
    run(tmp_path / "run_scope", "train.batch_size=4", teacher=teacher)
    second_epoch = [u for n, u in teacher.prompts if n == "AnalystOutput"][-1]
    assert "REJECT" in second_epoch and "zulu" in second_epoch
    teacher2 = Scripted("teacher", {"AnalystOutput": {"edits": [{"op": "append", "content": "- zulu"}]}})
    run(tmp_path / "epoch_scope", "train.batch_size=4", "optimizer.buffer_scope=epoch", teacher=teacher2)
    second_epoch = [u for n, u in teacher2.prompts if n == "AnalystOutput"][-1]
    assert "REJECT" not in second_epoch


def test_force_accepted_slow_update_is_rescored(tmp_path: Path) -> None:
    run_dir, _, _ = run(tmp_path, "train.batch_size=4", "optimizer.slow_update_gate_with_selection=false")
    action = json.loads((run_dir / "slow_update/epoch_02/slow_action.json").read_text())
    assert action["action"] == "force_accept"
    state = json.loads((run_dir / "runtime_state.json").read_text())
    assert get_region(state["current_skill"], "SLOW_UPDATE") == "Check the word list first."
    h = state["sel_cache"]
    from skillgrad.skill import skill_hash

    assert skill_hash(state["current_skill"]) in h  # the score comes from a real evaluation
    assert set_region(state["current_skill"], "SLOW_UPDATE", "x") != state["current_skill"]


class LongToyEnv(ToyEnv):
    def __init__(self) -> None:
        super().__init__()
        for it in self.splits.train:
            it.inputs["question"] = it.inputs["question"] + " context " * 400


def test_long_trajectories_are_trimmed_for_the_teacher_and_recorded(tmp_path: Path) -> None:
    cfg = load_config(None, ["env.name=toy", "train.batch_size=2", "train.num_epochs=1", "env.workers=1",
                             "env.max_trajectory_tokens=200", "optimizer.use_slow_update=false"])
    teacher = Scripted("teacher")
    models = Models(teacher=teacher, student=Scripted("student"), meter=Meter(), budget=Budget(), cache=None)
    run_dir = tmp_path / "run"
    asyncio.run(Trainer(cfg, LongToyEnv(), models, RunStore(run_dir), EventLog(run_dir / "events.jsonl")).run())
    rows = [json.loads(x) for x in (run_dir / "steps/step_0001/rollout/results.jsonl").read_text().splitlines()]
    assert rows and all(r["trimmed"] and r["trimmed"]["tokens_before"] > r["trimmed"]["tokens_after"] for r in rows)
    assert all(r["trimmed"]["tokens_after"] <= 200 for r in rows)
    analyst = [u for n, u in teacher.prompts if n == "AnalystOutput"][0]
    assert analyst.count("context") < 400


def test_skill_aware_notes_go_to_the_appendix_of_current_only(tmp_path: Path) -> None:
    def analyst(user: str) -> dict:
        gold = re.findall(r"expected: (\w+)", user)[:1]
        return {"edits": [{"op": "append", "content": f"- {g}"} for g in gold],
                "appendix_notes": ["Read the whole word list before answering.", "read the WHOLE word list  before answering."]}

    teacher = Scripted("teacher", {"AnalystOutput": analyst})
    run_dir, _, _ = run(tmp_path, "optimizer.use_skill_aware_reflection=true", "train.num_epochs=1",
                        "optimizer.use_slow_update=false", teacher=teacher)
    prompts = [u for n, u in teacher.prompts if n == "AnalystOutput"]
    assert prompts  # the failure analysts got the skill-aware suffix in their system prompt (schema has notes)
    state = json.loads((run_dir / "runtime_state.json").read_text())
    from skillgrad.skill import appendix_notes

    assert appendix_notes(state["current_skill"]) == ["Read the whole word list before answering."]  # deduplicated
    notes = json.loads((run_dir / "steps/step_0001/appendix_notes.json").read_text())
    assert notes["added"] == ["Read the whole word list before answering."]
    h = json.loads((run_dir / "history.json").read_text())[0]
    assert h["n_appendix_notes_total"] == 1


def test_ranking_sees_the_buffer_and_keeps_its_budget(tmp_path: Path) -> None:
    # two minibatches of one failure each -> two edits for a budget of one -> one ranking call per step
    teacher = Scripted("teacher", {"Ranking": {"selected_indices": [1, 1, 9]}})
    run_dir, _, _ = run(tmp_path, "train.num_epochs=1", "train.batch_size=2", "gradient.minibatch_size=1",
                        "gradient.failure_only=true", "optimizer.learning_rate=1", "optimizer.min_learning_rate=1",
                        "optimizer.use_slow_update=false", teacher=teacher)
    ranked = json.loads((run_dir / "steps/step_0001/ranked_edits.json").read_text())
    assert ranked["ranked"] and ranked["ranking_details"]["selected_indices"] == [1]
    assert len(ranked["selected"]) == 1
    rankings = [u for n, u in teacher.prompts if n == "Ranking"]
    assert len(rankings) == 2
    assert "Step 1" in rankings[1] and "Step 1" not in rankings[0]


def test_epoch_scoped_buffer_survives_resume_within_an_epoch(tmp_path: Path) -> None:
    """Stop after step 1 of epoch 1 (budget), resume: step 2 still sees step 1 in an epoch-scoped buffer."""
    teacher = Scripted("teacher", {"AnalystOutput": {"edits": [{"op": "append", "content": "- zulu"}]}})
    cfg = load_config(None, ["env.name=toy", "train.batch_size=2", "train.num_epochs=1", "env.workers=1",
                             "optimizer.buffer_scope=epoch", "optimizer.use_slow_update=false"])
    run_dir = tmp_path / "run"

    def trainer() -> Trainer:
        models = Models(teacher=teacher, student=Scripted("student"), meter=Meter(), budget=Budget(), cache=None)
        return Trainer(cfg, ToyEnv(), models, RunStore(run_dir), EventLog(run_dir / "events.jsonl"))

    t1 = trainer()
    original = t1._step

    async def stop_after_first(g: int, *a: Any, **kw: Any) -> None:
        if g == 2:
            raise KeyboardInterrupt
        await original(g, *a, **kw)

    t1._step = stop_after_first  # type: ignore[method-assign]
    try:
        asyncio.run(t1.run())
    except KeyboardInterrupt:
        pass
    assert json.loads((run_dir / "runtime_state.json").read_text())["last_completed_step"] == 1
    teacher.prompts.clear()
    asyncio.run(trainer().run())
    step2 = [u for n, u in teacher.prompts if n == "AnalystOutput"][0]
    assert "Step 1" in step2 and "REJECT" in step2


def test_training_stops_once_the_best_skill_is_at_the_ceiling(tmp_path: Path) -> None:
    # validation reaches 1.0 at step 4 of 8: no candidate can pass the strict gate after it, so steps 5-8 only
    # spend calls; they are skipped (validation decides, never the test split), and the summary says why
    run_dir, summary, teacher = run(tmp_path / "stop", "train.num_epochs=4", "train.tiebreak=false")
    assert summary["planned_steps"] == 8 and summary["total_steps"] == 4 and summary["test_hard"] == 1.0
    assert summary["early_stop"]["after_step"] == 4 and summary["early_stop"]["best_score"] == 1.0
    assert [e for e in events(run_dir) if e["event"] == "early_stop"]
    # by default a tie at 1.0 is decided on training tasks (test_gate_tiebreak.py): step 5's rollout shows them all
    # passed, so the run stops there, before that step's other stages
    tie_dir, tie, _ = run(tmp_path / "tie", "train.num_epochs=4")
    assert tie["total_steps"] == 5 and tie["early_stop"]["after_step"] == 4 and tie["test_hard"] == 1.0
    assert json.loads((tie_dir / "history.json").read_text())[-1]["action"] == "skip_at_ceiling"
    _, full, full_teacher = run(tmp_path / "full", "train.num_epochs=4", "train.stop_at_ceiling=false")
    assert full["total_steps"] == 8 and full["early_stop"] is None
    assert len(teacher.prompts) < len(full_teacher.prompts)


class VerifiedToyEnv(ToyEnv):
    """The toy tasks with a verifier: a reply that names the task's word passes (demonstrations can be checked)."""

    async def verify_example(self, item: Item, reply: str, student: Any) -> float:
        return 1.0 if item.gold in reply else 0.0


class ExampleStudent(Scripted):
    """Copies the reply of a worked example given as a chat turn (the probe's example_turns form), else as Scripted."""

    async def complete(self, messages: list[dict[str, Any]], **kw: Any) -> Completion:
        shown = [m["content"] for m in messages[:-1] if m["role"] == "assistant"]
        if shown and kw.get("stage") == "student_probe":
            return Completion(text=shown[-1], usage=Usage(5, 5))
        return await super().complete(messages, **kw)


def _example_run(tmp_path: Path, name: str, *overrides: str) -> tuple[Path, Scripted]:
    """One epoch on four verified toy tasks, up to four worked examples a step, a student that copies examples."""
    cfg = load_config(None, ["env.name=toy", "train.batch_size=4", "train.num_epochs=1", "env.workers=1",
                             "optimizer.demonstrations=4", "optimizer.use_meta_skill=false",
                             "optimizer.start_from=initial", *overrides])  # step 1's examples, not the few-shot start
    teacher = Scripted("teacher", {"Demonstration": {"reply": ""}})
    models = Models(teacher=teacher, student=ExampleStudent("student"), meter=Meter(), budget=Budget(), cache=None)
    run_dir = tmp_path / name
    asyncio.run(Trainer(cfg, VerifiedToyEnv(), models, RunStore(run_dir), EventLog(run_dir / "events.jsonl")).run())
    return run_dir, teacher


def test_reflection_is_skipped_when_verified_examples_fill_the_budget(tmp_path: Path) -> None:
    # the probe found a student that follows examples and ignores rules, and four verified examples (the expected
    # answers) take all four budget slots: the analysts are not asked, and no slow-update rule block is written;
    # nor when fewer verified examples leave slots free (a student that ignores rules gains nothing from them)
    def go(name: str, *overrides: str) -> tuple[Path, Scripted]:
        return _example_run(tmp_path, name, *overrides)

    run_dir, teacher = go("skip")
    record = json.loads((run_dir / "steps/step_0001/step_record.json").read_text())
    assert "AnalystOutput" not in [n for n, _ in teacher.prompts] and record["reflect_skipped"]
    assert record["n_examples_applied"] == 4 and record["action"] == "accept_new_best"
    assert [e for e in events(run_dir) if e["event"] == "slow_update" and e["action"] == "skipped"]
    assert not (run_dir / "slow_update").exists()
    run_dir, teacher = go("one", "optimizer.demonstrations=1")  # fewer examples than slots: rules would fill them
    record = json.loads((run_dir / "steps/step_0001/step_record.json").read_text())
    assert "AnalystOutput" not in [n for n, _ in teacher.prompts] and 0 < record["n_examples_applied"] < 4
    run_dir, teacher = go("probe-off", "optimizer.student_probe=off")  # nothing measured: the analysts run
    assert "AnalystOutput" in [n for n, _ in teacher.prompts]
    assert "reflect_skipped" not in json.loads((run_dir / "steps/step_0001/step_record.json").read_text())
    _, teacher = go("shortcuts-off", "optimizer.example_shortcuts=false")  # the demo configs' path
    assert "AnalystOutput" in [n for n, _ in teacher.prompts]
    # the demonstrations-only ablation: no analyst call even where the probe measured nothing
    run_dir, teacher = go("no-analysts", "optimizer.student_probe=off", "optimizer.analysts=false")
    record = json.loads((run_dir / "steps/step_0001/step_record.json").read_text())
    assert "AnalystOutput" not in [n for n, _ in teacher.prompts] and record["n_examples_applied"] > 0
    assert record["reflect_skipped"] == "optimizer.analysts=false"


def test_no_merge_call_when_worked_examples_fill_the_budget(tmp_path: Path) -> None:
    # the analysts ran beside demonstrate (nothing measured the student), then four verified examples took all four
    # slots ahead of the rules: merging the analysts' edits would be a call nothing uses (a handoff teacher answered
    # two such merges on support-signoff), and the next step's history says why the edits were not tried
    def go(name: str, *overrides: str) -> tuple[Path, Scripted]:
        return _example_run(tmp_path, name, "optimizer.student_probe=off", "gradient.minibatch_size=2", *overrides)

    run_dir, teacher = go("full")
    record = json.loads((run_dir / "steps/step_0001/step_record.json").read_text())
    asked = [n for n, _ in teacher.prompts]
    assert asked.count("AnalystOutput") == 2 and not [n for n in asked if "Merge" in n]
    assert record["n_examples_applied"] == 4
    assert record["rules_untried"] == "2 analyst edit(s) not tried: worked examples filled the step's edit budget of 4"
    digest = json.loads((run_dir / "steps/step_0001/trajectory_digest.json").read_text())
    assert "Not tried: 2 analyst edit(s) not tried" in StepBuffer._render_entry(BufferEntry(**digest))
    run_dir, teacher = go("room", "optimizer.demonstrations=1")  # a slot left for a rule: the merge is asked
    assert [n for n, _ in teacher.prompts if "Merge" in n]
    assert "rules_untried" not in json.loads((run_dir / "steps/step_0001/step_record.json").read_text())
