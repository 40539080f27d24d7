"""A tie at the validation ceiling decided on the step's training tasks (engine/gate/tiebreak.py), and the run
stopping at the ceiling only once the best skill passes those too. Scripted teacher, toy tasks (plumbing)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from test_engine_plumbing import WORDS, Scripted, ToyEnv

from skillgrad.config.loader import load_config
from skillgrad.core.events import EventLog
from skillgrad.engine.gate.tiebreak import pass_rate, unseen
from skillgrad.engine.trainer import Trainer
from skillgrad.envs.base import Item, Splits, Trajectory
from skillgrad.models.budget import Budget
from skillgrad.models.factory import Models
from skillgrad.models.meter import Meter
from skillgrad.runs.store import RunStore


def _traj(i: int, passed: bool) -> Trajectory:
    return Trajectory(item_id=f"t{i}", question=f"What is  word {i}?", hard=1.0 if passed else 0.0)


def test_pass_rate_leaves_out_the_tasks_a_skill_holds_as_examples() -> None:
    skill = "# S\n\n## Examples\nQ: what is word 0?\nA: alpha\n"  # spacing and case differ from the task
    trajs = [_traj(0, True), _traj(1, False), _traj(2, True), Trajectory(item_id="t3", question="x", env_error="boom")]
    assert [t.item_id for t in unseen(trajs, skill)] == ["t1", "t2"]
    assert pass_rate(trajs, skill) == 0.5
    assert pass_rate(trajs[:1], skill) is None  # nothing left to measure


class OneValEnv(ToyEnv):
    """Validation is task 0 alone (it saturates once the skill names `alpha`); training is tasks 0-3."""

    def __init__(self) -> None:
        super().__init__()
        self.splits = Splits(train=self.splits.train, val=self.splits.train[:1], test=self.splits.train)


def _first_word(user: str) -> dict:
    """The analyst adds the failed task's word that comes first in WORDS (alpha, then bravo, ...)."""
    golds = sorted(set(re.findall(r"(?:expected|Expected answer): (\w+)", user)) & set(WORDS), key=WORDS.index)
    return {"edits": [{"op": "append", "content": f"- {g}"} for g in golds[:1]]}


def _run(tmp_path: Path, *overrides: str) -> tuple[list[dict], dict]:
    cfg = load_config(None, ["env.name=toy", "train.batch_size=4", "train.num_epochs=6", "env.workers=1",
                             "evaluation.min_val_items=1", "optimizer.learning_rate=1",
                             "optimizer.min_learning_rate=1", "optimizer.use_slow_update=false", "optimizer.demonstrations=0",
                             *overrides])
    models = Models(teacher=Scripted("teacher", {"AnalystOutput": _first_word}), student=Scripted("student"),
                    meter=Meter(), budget=Budget(), cache=None)
    summary = asyncio.run(Trainer(cfg, OneValEnv(), models, RunStore(tmp_path), EventLog(tmp_path / "e.jsonl")).run())
    return json.loads((tmp_path / "history.json").read_text()), summary


def test_a_tie_at_the_validation_ceiling_is_won_on_training_tasks(tmp_path: Path) -> None:
    history, summary = _run(tmp_path / "tie")
    # step 1 reaches 1.0 on validation; steps 2-4 tie there and pass one more training task each; step 4's skill
    # passes every training task, so the run ends there (epochs 5 and 6 never start)
    assert [h["action"] for h in history] == ["accept_new_best"] * 4
    rules = [h["gate_rule"] for h in history[1:4]]
    assert [r["decided_by"] for r in rules] == ["train_tiebreak"] * 3
    assert [(r["incumbent_passed"], r["candidate_passed"]) for r in rules] == [(1, 2), (2, 3), (3, 4)]
    assert summary["early_stop"]["after_step"] == 4 and summary["test_hard"] == 1.0

    history, summary = _run(tmp_path / "off", "train.tiebreak=false")  # validation alone: stops at once
    assert [h["action"] for h in history] == ["accept_new_best"] and summary["test_hard"] == 0.25


def test_a_tie_that_passes_no_more_training_tasks_is_rejected(tmp_path: Path) -> None:
    # the analyst repeats a word every skill already holds: the candidate ties on validation and on training
    notes = iter(range(100))

    def cfg_word(user: str) -> dict:
        return {"edits": [{"op": "append", "content": f"- alpha, note {next(notes)}"}]}

    cfg = load_config(None, ["env.name=toy", "train.batch_size=4", "train.num_epochs=2", "env.workers=1",
                             "evaluation.min_val_items=1", "optimizer.learning_rate=1",
                             "optimizer.min_learning_rate=1", "optimizer.use_slow_update=false", "optimizer.demonstrations=0"])
    models = Models(teacher=Scripted("teacher", {"AnalystOutput": cfg_word}), student=Scripted("student"),
                    meter=Meter(), budget=Budget(), cache=None)
    asyncio.run(Trainer(cfg, OneValEnv(), models, RunStore(tmp_path), EventLog(tmp_path / "e.jsonl")).run())
    history = json.loads((tmp_path / "history.json").read_text())
    assert history[0]["action"] == "accept_new_best"
    assert history[1]["action"] == "reject" and history[1]["gate_rule"]["decided_by"] == "train_tiebreak"
    # the early stop: the three tasks the incumbent failed go first, and once the candidate failed them it cannot
    # pass more than the incumbent's one; looked at after each task (a quarter of four), so always after the third
    rule = history[1]["gate_rule"]
    assert (rule["incumbent_passed"], rule["candidate_passed_at_most"], rule["n_scored"]) == (1, 1, 3)


class FarValEnv(ToyEnv):
    """Validation asks for words no training task teaches: every candidate ties there (at 0)."""

    def __init__(self) -> None:
        super().__init__()
        far = [Item(id=f"v{i}", inputs={"question": f"What is word {i}?"}, gold=w) for i, w in enumerate(WORDS)][4:]
        self.splits = Splits(train=self.splits.train, val=far, test=self.splits.train)


def test_a_tie_below_the_ceiling_is_decided_on_training_tasks_too(tmp_path: Path) -> None:
    def go(name: str, *overrides: str) -> list[dict]:
        cfg = load_config(None, ["env.name=toy", "train.batch_size=4", "train.num_epochs=2", "env.workers=1",
                                 "optimizer.learning_rate=1", "optimizer.min_learning_rate=1",
                                 "optimizer.use_slow_update=false", "optimizer.demonstrations=0", *overrides])
        models = Models(teacher=Scripted("teacher", {"AnalystOutput": _first_word}), student=Scripted("student"),
                        meter=Meter(), budget=Budget(), cache=None)
        d = tmp_path / name
        asyncio.run(Trainer(cfg, FarValEnv(), models, RunStore(d), EventLog(d / "e.jsonl")).run())
        return json.loads((d / "history.json").read_text())

    history = go("tie")
    assert [h["action"] for h in history] == ["accept_new_best", "accept_new_best"]
    assert [(h["gate_rule"]["incumbent_passed"], h["gate_rule"]["candidate_passed"]) for h in history] == [(0, 1),
                                                                                                            (1, 2)]
    assert [h["action"] for h in go("off", "train.tiebreak=false")] == ["reject", "reject"]  # ties reject
