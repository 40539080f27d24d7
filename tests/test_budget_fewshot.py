"""A budgeted run with the few-shot start (engine/budget_plan.py, engine/token_plan.py): the plan counts the
start's validation pass, drops its optional passes first, and under `budget.max_tokens` keeps only as many
examples as leave room for one step; with no limit nothing changes, and a resumed run keeps the saved k."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_baselines import VerifyingToy, run_env
from train_helpers import TINY, cli, events, tiny_config

from skillgrad.config.loader import packaged_config_path
from skillgrad.config.schema import BudgetSection
from skillgrad.engine.baselines import FEWSHOT_FILE, FewShot
from skillgrad.engine.budget_plan import PLAN_FILE, BudgetPlan, plan_start
from skillgrad.engine.step_budget import StepBudget
from skillgrad.engine.token_plan import TokenCosts, size_fewshot
from skillgrad.models.budget import Budget
from skillgrad.models.tokens import estimate
from skillgrad.skill.examples import add_example, find_examples


def _plan(cfg: object, calls: int, fewshot: bool = True) -> BudgetPlan:
    return plan_start(cfg, Budget(BudgetSection(max_calls=calls)), n_batch=5, n_val=10, n_train=10,  # type: ignore[arg-type]
                      baseline_done=False, probe_on=True, fewshot_start=fewshot)


def test_the_plan_counts_the_fewshot_start_and_drops_its_optional_passes_first() -> None:
    # the head-to-head `facts` shape: batch 5 (a 27-call step), 10 validation items, 2 example-search candidates
    cfg = tiny_config("optimizer.demonstrations=10", "optimizer.start_from=fewshot", "optimizer.example_search=2")
    roomy = _plan(cfg, 200)
    assert (roomy.reference_list, roomy.example_search, roomy.probe_questions, roomy.reason) == (True, 2, 2, "")
    # probe 6 + initial and few-shot passes 20 + step 27 = 53; the reference list (10) fits beside it, not a search
    mid = _plan(cfg, 70)
    assert (mid.reference_list, mid.example_search, mid.probe_questions) == (True, 0, 2)
    assert mid.reason.startswith("example search cut to 0 of 2 candidates")
    # 40 calls: both optional passes go first; then the probe, as it does beside the baseline alone (47 > 40)
    short = _plan(cfg, 40)
    assert (short.reference_list, short.example_search, short.probe_questions, short.n_val) == (False, 0, 0, None)
    assert "reference list dropped" in short.reason and "baseline and few-shot start" in short.reason
    # not counted (optimizer.start_from: initial): the old plan, word for word
    old = _plan(cfg, 40, fewshot=False)
    assert (old.reference_list, old.example_search, old.probe_questions) == (None, None, 1)
    # 30 calls: a one-item step (5 + the gate's pass) beside both passes needs fewer items: 2 * 8 + 5 + 8 = 29
    assert _plan(cfg, 30).n_val == 8
    # no limit: nothing planned
    unlimited = plan_start(cfg, Budget(), n_batch=5, n_val=10, n_train=10, baseline_done=False, probe_on=True,
                           fewshot_start=True)
    assert unlimited == BudgetPlan()


def _costs() -> TokenCosts:
    val = [(f"Where is item {i}?", 16) for i in range(4)]
    return TokenCosts(count=estimate, teacher_count=estimate, val=val, batch=val[:2], teacher_reply=64,
                      teacher_fixed=200, teacher_window=4096)


def _prefixes(n: int) -> list[str]:
    skills = [s := "# Skill\n\nAnswer with the item's shelf.\n"]
    for i in range(n):
        s, _ = add_example(s, f"Where is item number {i} kept in the store?", f"Shelf {i}, left side.")
        skills.append(s)
    return skills


def test_tokens_cut_the_fewshot_examples_so_that_one_step_fits() -> None:
    cfg = tiny_config("optimizer.start_from=fewshot")
    costs, skills = _costs(), _prefixes(12)

    def need(k: int) -> int:  # the initial skill's pass, the few-shot pass and a one-item step, by the estimate
        return costs.val_pass(skills[0]) + costs.val_pass(skills[k]) + costs.step(cfg, skills[k], 1, 4)

    assert costs.student(skills[3], "q", 16) > costs.student(skills[2], "q", 16)  # an example is not free
    left = (need(5) + need(6)) // 2
    fit = size_fewshot(cfg, costs, skills, left, n_val=4, n_batch=2, baseline=skills[0], reference=None,
                       example_search=0)
    assert fit.k == 5 and need(5) <= left < need(6)
    assert "few-shot examples cut to 5 of 12" in fit.reason and f"{left} tokens left" in fit.reason
    # the reference list goes before any example: its pass does not fit beside all examples and a full step
    listed = lambda s: s + "\n## Reference answers\n" + "- a → b\n" * 40  # noqa: E731
    full = costs.val_pass(skills[0]) + costs.val_pass(skills[12]) + costs.step(cfg, skills[12], 2, 4)
    ref = size_fewshot(cfg, costs, skills, full + costs.val_pass(listed(skills[12])) - 1, n_val=4, n_batch=2,
                       baseline=skills[0], reference=listed, example_search=0)
    assert (ref.k, ref.reference_list) == (12, False) and ref.reason.startswith("reference list dropped")
    kept = size_fewshot(cfg, costs, skills, full + costs.val_pass(listed(skills[12])), n_val=4, n_batch=2,
                        baseline=skills[0], reference=listed, example_search=0)
    assert (kept.k, kept.reference_list, kept.reason) == (12, True, "")
    # room for everything: nothing cut; no room at all: the few-shot start stays, with one example
    assert size_fewshot(cfg, costs, skills, 10 * need(12), n_val=4, n_batch=2, baseline=skills[0], reference=None,
                        example_search=0).reason == ""
    assert size_fewshot(cfg, costs, skills, 10, n_val=4, n_batch=2, baseline=None, reference=None,
                        example_search=0).k == 1


def test_without_a_token_limit_the_fewshot_start_is_not_sized(tmp_path: Path) -> None:
    run_dir, _ = run_env(tmp_path, VerifyingToy(), "optimizer.start_from=fewshot")
    fs = FewShot.from_json(json.loads((run_dir / FEWSHOT_FILE).read_text()))
    assert (fs.k, fs.k_asked, len(fs.examples)) == (32, 0, 4) and "cut" not in fs.k_reason
    assert not (run_dir / PLAN_FILE).exists()
    assert any(e["event"] == "stage_end" and e["stage"] == "reference_list" for e in
               [json.loads(ln) for ln in (run_dir / "events.jsonl").read_text().splitlines()])
    ctx = SimpleNamespace(cfg=tiny_config("optimizer.start_from=fewshot"))
    assert StepBudget(ctx).fewshot_sizer([]) is None  # type: ignore[arg-type]


def test_a_resumed_run_keeps_the_saved_k() -> None:
    ctx = SimpleNamespace(cfg=tiny_config("optimizer.start_from=fewshot", "budget.max_tokens=10000000"))
    steps = StepBudget(ctx)  # type: ignore[arg-type]
    steps.plan = BudgetPlan(limited=True, fewshot_k=3)
    size = steps.fewshot_sizer([])
    assert size is not None
    n, why = size(_prefixes(12))  # whatever the tokens left now, the saved choice
    assert n == 3 and PLAN_FILE in why


@pytest.mark.slow
def test_a_token_budget_run_takes_a_step_after_the_fewshot_start(tmp_path: Path, gguf_path: Path) -> None:
    """40 calls and 6,000 tokens on the 10-fact demo with the few-shot start. Before this plan (measured on the
    same options): probe 3 calls, initial and few-shot passes and the reference list, 6,310 tokens and no step.
    Sized, the reference list and probe go, the start keeps the examples that leave room, one step runs; a resumed
    run with a larger budget keeps the saved few-shot skill and plan."""
    run_dir = tmp_path / "run"
    opts = [x for o in [*TINY, "train.num_epochs=1", "optimizer.use_slow_update=false",
                        "optimizer.use_meta_skill=false", "optimizer.start_from=fewshot", "evaluation.eval_test=false",
                        "budget.max_calls=40", "budget.max_tokens=6000"] for x in ("-o", o)]
    r = cli("train", "--config", str(packaged_config_path("demo.yaml")), *opts, "--out", str(run_dir), "--quiet",
            cwd=tmp_path)
    assert r.returncode == 4, r.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["total_steps"] >= 1, summary["stop_reason"]
    fs_text = (run_dir / FEWSHOT_FILE).read_text()
    fs = FewShot.from_json(json.loads(fs_text))
    plan = json.loads((run_dir / PLAN_FILE).read_text())
    assert fs.k_asked == 16 and 1 <= fs.k < 16 and len(fs.examples) == fs.k == plan["fewshot_k"]
    assert "few-shot examples cut to" in fs.k_reason and "tokens left" in fs.k_reason
    assert plan["reference_list"] is False and "reference list dropped" in plan["reason"]
    assert len(find_examples((run_dir / "baselines/fewshot_skill.md").read_text())) == fs.k
    assert summary["token_summary"]["total"]["total_tokens"] <= 6000
    assert any(e["event"] == "stage_end" and e["stage"] == "rollout" and e["step"] == 1 for e in events(run_dir))

    r2 = cli("resume", str(run_dir), "-o", "budget.max_calls=60", "-o", "budget.max_tokens=12000", "--quiet",
             cwd=tmp_path)
    assert r2.returncode in (0, 4), r2.stderr
    assert (run_dir / FEWSHOT_FILE).read_text() == fs_text
    assert json.loads((run_dir / PLAN_FILE).read_text())["fewshot_k"] == fs.k
