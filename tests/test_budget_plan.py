"""A run sized to a small call budget (engine/budget_plan.py): the probe shrinks or is skipped, batches shrink,
and the run takes a step where it used to spend its budget on start-up; a step that cannot finish is not started."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from train_helpers import TINY, cli, events, provider_keys, tiny_config

from skillgrad.config.loader import packaged_config_path
from skillgrad.config.schema import BudgetSection
from skillgrad.engine.budget_plan import affordable, plan_start, step_calls, step_items, total
from skillgrad.models.budget import Budget


def test_plan_sizes_the_probe_and_the_batch_to_the_calls_left() -> None:
    cfg = tiny_config("optimizer.demonstrations=10")  # the head-to-head `facts` setting: batch 5, 10 val items
    assert total(step_calls(cfg, 5, 10)) == 5 + 5 + 5 + 1 + 1 + 10
    roomy = plan_start(cfg, Budget(BudgetSection(max_calls=200)), n_batch=5, n_val=10, n_train=10,
                       baseline_done=False, probe_on=True)
    assert (roomy.probe_questions, roomy.n_val, roomy.reason) == (2, None, "")
    forty = plan_start(cfg, Budget(BudgetSection(max_calls=40)), n_batch=5, n_val=10, n_train=10,
                       baseline_done=False, probe_on=True)
    assert forty.probe_questions == 1 and "1 question" in forty.reason  # 3 + 10 + 26 = 39 <= 40
    tight = plan_start(cfg, Budget(BudgetSection(max_calls=30)), n_batch=5, n_val=10, n_train=10,
                       baseline_done=False, probe_on=True)
    assert tight.probe_questions == 0 and tight.n_val is None and "skipped" in tight.reason
    few = plan_start(cfg, Budget(BudgetSection(max_calls=20)), n_batch=5, n_val=10, n_train=10,
                     baseline_done=False, probe_on=True)
    assert few.n_val == 7 and "validation cut to 7 of 10" in few.reason  # 7 + 1+1+1+1+1+7 = 19
    # a resumed run whose baseline is done keeps its validation set, whatever the budget
    assert plan_start(cfg, Budget(BudgetSection(max_calls=20)), n_batch=5, n_val=10, n_train=10,
                      baseline_done=True, probe_on=False).n_val is None
    # no limit: nothing planned
    assert not plan_start(cfg, Budget(), n_batch=5, n_val=10, n_train=10, baseline_done=False, probe_on=True).limited

    b = Budget(BudgetSection(max_calls=40))
    b.calls = 13
    assert step_items(cfg, b, n_batch=5, n_val=10) == (5, "")
    b.calls = 22
    n, why = step_items(cfg, b, n_batch=5, n_val=10)
    assert n == 2 and "batch cut to 2 of 5" in why  # 2+2+2+1+1+10 = 18 <= 18
    b.calls = 30
    n, why = step_items(cfg, b, n_batch=5, n_val=10)
    assert n == 0 and "needs about 15 calls even with one item" in why and "10 left" in why


def test_token_budget_uses_the_mean_call_once_there_is_one() -> None:
    b = Budget(BudgetSection(max_tokens=1000))
    assert affordable(b) == float("inf")  # nothing measured yet
    b.calls, b.tokens = 4, 400
    assert affordable(b) == 6.0


@pytest.mark.slow
def test_a_tiny_budget_run_takes_a_step(tmp_path: Path, gguf_path: Path) -> None:
    """30 calls on the 10-fact demo: the 6-call probe, the 10-item baseline and a 26-call step did not fit
    (no step at all); sized, the probe is skipped and one step runs, and the next is not started."""
    run_dir = tmp_path / "run"
    opts = [x for o in [*TINY, "train.num_epochs=1", "optimizer.use_slow_update=false",
                        "optimizer.use_meta_skill=false", "budget.max_calls=30"] for x in ("-o", o)]
    r = cli("train", "--config", str(packaged_config_path("demo.yaml")), *opts, "--out", str(run_dir), "--quiet",
            cwd=tmp_path)
    assert r.returncode == 4, r.stderr  # stopped by its budget, after a step
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["total_steps"] >= 1, summary["stop_reason"]
    assert "step 2 not started" in summary["stop_reason"] and "budget.max_calls" in summary["stop_reason"]
    assert not summary["student_probe"]["probed"] and "budget" in summary["student_probe"]["reason"]
    plan = json.loads((run_dir / "budget_plan.json").read_text())
    assert plan["limited"] and plan["probe_questions"] == 0
    assert any(e["event"] == "budget_plan" for e in events(run_dir))
    assert len(provider_keys(run_dir)) <= 30
