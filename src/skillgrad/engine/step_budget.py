"""The start-up and each step sized to what a small budget has left (engine/budget_plan.py), for the trainer.

The plan is saved (`budget_plan.json`) so that a resumed run keeps it; a step that cannot finish is not started.
"""

from __future__ import annotations

from skillgrad.engine.budget_plan import PLAN_FILE, BudgetPlan, plan_start, step_calls, step_items, total
from skillgrad.engine.context import RunContext
from skillgrad.engine.student_probe import PROBE_FILE
from skillgrad.envs.base import Item, Splits
from skillgrad.errors import BudgetExceeded


class StepBudget:
    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.plan = BudgetPlan()
        self.estimate = self.extra = 0  # the running step's estimated calls; calls past the estimate
        self._calls_before = 0

    def plan_run(self, splits: Splits, n_batch: int) -> BudgetPlan:
        """The start-up sized to a small budget, saved so that a resumed run keeps it."""
        ctx = self.ctx
        saved = ctx.store.read_json(PLAN_FILE)
        plan = BudgetPlan.from_json(saved) if saved is not None else plan_start(
            ctx.cfg, ctx.models.budget, n_batch=n_batch, n_val=len(ctx.val_items()), n_train=len(splits.train),
            baseline_done=ctx.state.baseline_done,
            probe_on=ctx.cfg.optimizer.student_probe != "off" and ctx.store.read_json(PROBE_FILE) is None)
        if saved is None and plan.limited:
            ctx.store.write_json(PLAN_FILE, plan.to_json())
            if plan.reason:
                ctx.emit("budget_plan", **plan.to_json())
        if plan.n_val is not None:
            splits.val = splits.val[:plan.n_val]
        self.plan = plan
        return plan

    def size(self, g: int, batch: list[Item]) -> list[Item]:
        """The step's batch cut to what the budget has left; a step that cannot finish is not started."""
        ctx, plan = self.ctx, self.plan
        n_val = len(ctx.val_items())
        n, why = plan.step_items.get(str(g), len(batch)), ""
        if str(g) not in plan.step_items and not ctx.store.exists(f"steps/step_{g:04d}"):  # a started step stays
            n, why = step_items(ctx.cfg, ctx.models.budget, n_batch=len(batch), n_val=n_val, extra=self.extra)
        self.estimate = total(step_calls(ctx.cfg, n, n_val))
        self._calls_before = ctx.models.budget.calls
        if n == 0:
            lim = ctx.cfg.budget
            kind = "calls" if lim.max_calls else "tokens" if lim.max_tokens else "usd"
            raise BudgetExceeded(f"budget.max_{kind}: step {g} not started, {why}; raise it or resume later",
                                 kind=kind)
        if n < len(batch):
            plan.step_items[str(g)] = n
            ctx.store.write_json(PLAN_FILE, plan.to_json())
            ctx.emit("budget_step", step=g, items=n, of=len(batch), reason=why)
        return batch[:n]

    def step_done(self) -> None:
        """Calls the step made past its estimate, for the next step's size."""
        self.extra = max(0, self.ctx.models.budget.calls - self._calls_before - self.estimate)

