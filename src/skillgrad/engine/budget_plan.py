"""A run sized to a small budget (`budget.max_calls`; tokens and USD once calls have a measured mean).

Why: a 40-call run on `facts` spent 6 calls on the student probe and 10 on the baseline, then ran out inside
its first step (26 calls): no step at all. So before the probe the run plans what it can afford:
- the baseline stays (the gate needs it) and one step must fit beside it; with `optimizer.start_from: fewshot`
  so does the few-shot start's validation pass (the start itself stays);
- the few-shot start's optional passes (`optimizer.example_search` candidates, then the reference list) are
  dropped first, when they and a full step do not fit beside the rest;
- with `budget.max_tokens`, the few-shot skill's examples are cut from the end so that its passes and a one-item
  step fit the tokens left (engine/token_plan.py, estimated from the texts once the skill is built);
- the probe shrinks to one question (3 calls) or is skipped, recorded as such, when it would not leave room;
- when not even a one-item step fits, the validation set shrinks (never below `evaluation.min_val_items`);
- before every step the batch shrinks to what is left; a step that cannot finish is not started, and the run
  stops on its budget saying why;
- an accepted step's edit credit (one validation pass per edit) is skipped when it would not fit.
The plan (`budget_plan.json`), the few-shot skill (`baselines/fewshot.json`, its k and `k_reason`) and each
step's batch size are saved, so a resumed run keeps them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from skillgrad.config.schema import Config

PLAN_FILE = "budget_plan.json"
PROBE_CALLS_PER_QUESTION = 3  # one call per form (student_probe.FORMS)


@dataclass
class BudgetPlan:
    limited: bool = False
    probe_questions: int = 2  # 0: skipped
    n_val: int | None = None  # validation items kept (None: all)
    reason: str = ""  # what was cut and why (empty: nothing)
    step_items: dict[str, int] = field(default_factory=dict)  # step -> batch items it ran with (when cut)
    # the few-shot start's passes (optimizer.start_from: fewshot; None: as configured)
    reference_list: bool | None = None
    example_search: int | None = None
    fewshot_k: int | None = None  # examples the few-shot skill kept under budget.max_tokens (None: not sized)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> BudgetPlan:
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


def step_calls(cfg: Config, n_items: int, n_val: int) -> dict[str, int]:
    """Provider calls one step can make at most with `n_items` batch items (one call per item and turn; every
    item failing), by stage; the gate's validation pass included, edit credit not (it is sized on its own)."""
    g, opt = cfg.gradient, cfg.optimizer
    analysts = math.ceil(n_items / max(1, g.minibatch_size)) + (0 if g.failure_only else 1)
    if g.use_deep_reflect:
        analysts += 2 * min(n_items, g.deep_reflect_failures)
    return {"rollout": n_items, "reflect": analysts, "demonstrate": min(n_items, opt.demonstrations),
            "aggregate": 1, "select": 1, "gate": n_val}


def total(calls: dict[str, int]) -> int:
    return sum(calls.values())


def affordable(budget: Any) -> float:
    """Provider calls the budget has left: max_calls minus calls made, and for max_tokens / max_usd what is left
    divided by the mean of the calls made so far (unknown before the first call). math.inf: no limit."""
    lim, left = budget.limits, math.inf
    if lim.max_calls:
        left = lim.max_calls - budget.calls
    if budget.calls:
        if lim.max_tokens:
            left = min(left, (lim.max_tokens - budget.tokens) / max(1.0, budget.tokens / budget.calls))
        if lim.max_usd and budget.usd > 0:
            left = min(left, (lim.max_usd - budget.usd) / (budget.usd / budget.calls))
    return max(0.0, left)


def plan_start(cfg: Config, budget: Any, *, n_batch: int, n_val: int, n_train: int, baseline_done: bool,
               probe_on: bool, fewshot_start: bool = False) -> BudgetPlan:
    """Size the start-up (optional passes, probe, validation set) so that the baseline, the few-shot start
    (`fewshot_start`: its validation pass is still to come) and one step fit the budget."""
    left = affordable(budget)
    if math.isinf(left):
        return BudgetPlan()
    base = (0 if baseline_done else 1) + (1 if fewshot_start else 0)  # validation passes the start-up must make
    need = lambda v, b: base * v + total(step_calls(cfg, b, v))  # noqa: E731
    full = need(n_val, n_batch)
    plan = BudgetPlan(limited=True, probe_questions=2 if probe_on else 0)
    notes = []
    probe_ok = probe_on and n_train >= 2
    probe_max = 2 * PROBE_CALLS_PER_QUESTION if probe_ok else 0
    opt = cfg.optimizer
    ref, es = int(fewshot_start and opt.reference_list), opt.example_search if fewshot_start else 0
    while (ref or es) and probe_max + full + (ref + es) * n_val > left:  # optional passes go first
        es, ref = (es - 1, ref) if es else (0, 0)
    if fewshot_start:
        plan.reference_list, plan.example_search = bool(ref) if opt.reference_list else None, es
        dropped = ([f"example search cut to {es} of {opt.example_search} candidates"] if es < opt.example_search
                   else []) + (["reference list dropped"] if opt.reference_list and not ref else [])
        if dropped:
            notes.append(f"{', '.join(dropped)}: {left:.0f} calls left, the start-up with them and one step need "
                         f"about {probe_max + full + (int(opt.reference_list) + opt.example_search) * n_val}")
    extra = (ref + es) * n_val
    if probe_ok:
        for q in (2, 1, 0):
            if q == 0 or q * PROBE_CALLS_PER_QUESTION + full + extra <= left:
                plan.probe_questions = q
                break
        if plan.probe_questions < 2:
            notes.append(f"student probe {'cut to 1 question' if plan.probe_questions else 'skipped'}: "
                         f"{left:.0f} calls left, the {'baseline and few-shot start' if fewshot_start else 'baseline'}"
                         f" and one step need about {full}")
    if need(n_val, 1) > left:  # not even a one-item step beside the full validation set: fewer validation items
        fits = [v for v in range(n_val - 1, cfg.evaluation.min_val_items - 1, -1) if need(v, 1) <= left]
        if fits:
            plan.n_val = fits[0]
            notes.append(f"validation cut to {fits[0]} of {n_val} items: {left:.0f} calls left, a one-item step "
                         f"beside all {n_val} needs about {need(n_val, 1)}")
    plan.reason = "; ".join(notes)
    return plan


def step_items(cfg: Config, budget: Any, *, n_batch: int, n_val: int, extra: int = 0) -> tuple[int, str]:
    """Batch items the next step can afford (0: the step cannot finish, so it is not started) and why.
    `extra`: calls earlier steps made beyond the estimate (multi-turn tasks, edit credit)."""
    left = affordable(budget)
    if math.isinf(left):
        return n_batch, ""
    for b in range(n_batch, 0, -1):
        if total(step_calls(cfg, b, n_val)) + extra <= left:
            return b, ("" if b == n_batch else f"batch cut to {b} of {n_batch} items: {left:.0f} calls left")
    calls = step_calls(cfg, 1, n_val)
    parts = ", ".join(f"{k} {v}" for k, v in calls.items() if v)
    return 0, (f"the next step needs about {total(calls) + extra} calls even with one item ({parts}), "
               f"{left:.0f} left")
