"""The edit-budget schedule: exact sequences, and its index persisted across a resume."""

import asyncio
import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_engine_plumbing import Scripted, ToyEnv

from skillgrad.config.loader import load_config
from skillgrad.core.events import EventLog
from skillgrad.engine.schedule import EditBudgetSchedule
from skillgrad.engine.trainer import Trainer
from skillgrad.errors import ConfigError
from skillgrad.models.budget import Budget
from skillgrad.models.factory import Models
from skillgrad.models.meter import Meter
from skillgrad.runs.store import RunStore


def test_cosine_matches_skillopt_default_sequence():
    assert EditBudgetSchedule("cosine", 4, 2, 8).sequence() == [4, 4, 3, 3, 3, 2, 2, 2]


def test_cosine_searchqa_sequence():
    seq = EditBudgetSchedule("cosine", 4, 2, 40).sequence()
    assert seq == [4] * 13 + [3] * 13 + [2] * 14


def test_linear_half_to_even_and_clamp():
    s = EditBudgetSchedule("linear", 4, 2, 4)
    # t = 1/4, 2/4, 3/4, 1 -> 3.5, 3.0, 2.5, 2.0 -> round half to even: 4, 3, 2, 2
    assert s.sequence() == [4, 3, 2, 2]
    assert s.lr_at(100) == 2  # past the end: min


def test_constant_autonomous_and_short_runs():
    assert EditBudgetSchedule("constant", 5, 1, 10).sequence() == [5] * 10
    assert EditBudgetSchedule("autonomous", 6, 2, 10).lr_at(7) == 6
    assert EditBudgetSchedule("cosine", 4, 2, 1).lr_at(1) == 4
    assert EditBudgetSchedule("linear", 4, 2, 0).lr_at(3) == 4


def test_unknown_kind():
    with pytest.raises(ConfigError, match="lr_scheduler"):
        EditBudgetSchedule("step", 4, 2, 8)


@given(st.sampled_from(["constant", "linear", "cosine"]), st.integers(0, 20), st.integers(0, 20),
       st.integers(0, 60))
def test_bounds_and_monotone(kind, a, b, total):
    lo, hi = min(a, b), max(a, b)
    full = EditBudgetSchedule(kind, hi, lo, total).sequence()
    assert all(lo <= x <= hi for x in full)
    assert full == sorted(full, reverse=True)  # never increases


class KilledAfterStep(Trainer):
    """Stops the process-equivalent right after step `kill_at` is checkpointed (as a SIGKILL would)."""

    kill_at = 2

    async def _finish_step(self, g, *args, **kwargs):
        await super()._finish_step(g, *args, **kwargs)
        if g == self.kill_at:
            raise KeyboardInterrupt("killed after the step-2 checkpoint")


def _skip_alpha(user):
    # no edits for the item whose gold is 'alpha': that step is skip_no_patches and does not advance
    # the schedule, so the schedule index (steps that reached select) lags the step number
    if "alpha" in user:
        return {"edits": []}
    return {"edits": [{"op": "append", "content": f"- {w}"} for w in re.findall(r"expected: (\w+)", user)[:1]]}


def _train(run_dir, trainer_cls=Trainer):
    cfg = load_config(None, ["env.name=toy", "train.batch_size=1", "train.num_epochs=1", "env.workers=1",
                             "optimizer.use_slow_update=false", "optimizer.lr_scheduler=linear",
                             "optimizer.learning_rate=4", "optimizer.min_learning_rate=1", "train.seed=3"])
    teacher = Scripted("teacher", {"AnalystOutput": _skip_alpha})
    models = Models(teacher=teacher, student=Scripted("student"), meter=Meter(), budget=Budget(), cache=None)
    return asyncio.run(trainer_cls(cfg, ToyEnv(), models, RunStore(run_dir), EventLog(run_dir / "events.jsonl")).run())


def test_persisted_schedule_index_gives_the_same_budgets_after_a_resume(tmp_path):
    _train(tmp_path / "full")
    full = json.loads((tmp_path / "full/history.json").read_text())
    with pytest.raises(KeyboardInterrupt):
        _train(tmp_path / "resumed", KilledAfterStep)
    assert json.loads((tmp_path / "resumed/runtime_state.json").read_text())["last_completed_step"] == 2
    _train(tmp_path / "resumed")
    resumed = json.loads((tmp_path / "resumed/history.json").read_text())

    seq = EditBudgetSchedule("linear", 4, 1, 4).sequence()
    actions = [h["action"] for h in full]
    assert "skip_no_patches" in actions[:2] and len(actions) == 4  # the index lags the step after the kill
    index, expected = 0, []
    for a in actions:
        expected.append(None if a == "skip_no_patches" else seq[index])
        index += a != "skip_no_patches"
    assert [h.get("edit_budget") for h in full] == expected
    assert [h.get("edit_budget") for h in resumed] == expected
    assert expected[2:] != seq[2:]  # not the step number: a schedule indexed by step would differ here
    state = json.loads((tmp_path / "resumed/runtime_state.json").read_text())
    assert state["lr_steps"] == index


def test_load_state_dict_rejects_changed_schedule():
    s = EditBudgetSchedule("cosine", 4, 2, 8)
    with pytest.raises(ConfigError):
        s.load_state_dict({"kind": "linear", "max_lr": 4, "min_lr": 2, "total_steps": 8})
