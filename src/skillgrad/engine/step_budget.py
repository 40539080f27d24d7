"""The start-up and each step sized to what a small budget has left (engine/budget_plan.py), for the trainer.

The plan is saved (`budget_plan.json`) so that a resumed run keeps it; a step that cannot finish is not started.
"""

from __future__ import annotations

from collections.abc import Callable

from skillgrad.engine.budget_plan import PLAN_FILE, BudgetPlan, plan_start, step_calls, step_items, total
from skillgrad.engine.context import RunContext
from skillgrad.engine.student_probe import PROBE_FILE
from skillgrad.engine.token_plan import (
    TokenCosts,
    counter_of,
    size_fewshot,
    step_tokens_fit,
    student_reply_cap,
    teacher_fixed_tokens,
)
from skillgrad.envs.base import Item, Splits
from skillgrad.envs.trajectory import question_text
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
            probe_on=ctx.cfg.optimizer.student_probe != "off" and ctx.store.read_json(PROBE_FILE) is None,
            fewshot_start=ctx.cfg.optimizer.start_from == "fewshot" and not ctx.state.baseline_done)
        if saved is None and plan.limited:
            ctx.store.write_json(PLAN_FILE, plan.to_json())
            if plan.reason:
                ctx.emit("budget_plan", **plan.to_json())
        if plan.n_val is not None:
            splits.val = splits.val[:plan.n_val]
        self.plan = plan
        return plan

    def token_costs(self, batch: list[Item]) -> TokenCosts:
        """The run's per-call token estimates (engine/token_plan.py) for the validation set and `batch`."""
        ctx = self.ctx
        student, teacher = ctx.models.student, ctx.teacher
        caps = lambda items: [(question_text(it), student_reply_cap(ctx.env, it, student)) for it in items]  # noqa: E731
        role_reply = int(getattr(getattr(teacher.llm, "role_cfg", None), "max_tokens", 0) or 0)
        t_count = counter_of(teacher.llm)
        return TokenCosts(count=counter_of(student), teacher_count=t_count, val=caps(ctx.val_items()),
                          batch=caps(batch), teacher_reply=role_reply or teacher.max_tokens,
                          teacher_fixed=teacher_fixed_tokens(teacher.prompts, t_count),
                          teacher_window=int(getattr(teacher.llm, "context_window", 4096) or 4096))

    def fewshot_sizer(self, batch: list[Item]) -> Callable[[list[str]], tuple[int, str]] | None:
        """For `budget.max_tokens`: cuts the few-shot start's examples (and its optional passes) so that its passes
        and one step with `batch` (step 1's) fit the tokens left (engine/token_plan.py); the choice is saved in
        the plan. None without a token limit; the saved choice where the plan holds one (a resumed run)."""
        ctx, plan = self.ctx, self.plan
        lim = ctx.cfg.budget.max_tokens
        if not lim:
            return None
        if plan.fewshot_k is not None:
            saved = plan.fewshot_k
            return lambda skills: (min(saved, len(skills) - 1), f"kept to {saved} by the saved {PLAN_FILE}")
        opt = ctx.cfg.optimizer

        def size(skills: list[str]) -> tuple[int, str]:
            from skillgrad.engine.example_search import reference_list

            initial = ctx.state.initial_skill
            ref_on = opt.reference_list if plan.reference_list is None else plan.reference_list
            es = opt.example_search if plan.example_search is None else plan.example_search
            left = lim - ctx.models.budget.tokens
            fit = size_fewshot(ctx.cfg, self.token_costs(batch), skills, left, n_val=len(ctx.val_items()),
                               n_batch=len(batch), baseline=None if ctx.state.baseline_done else initial,
                               reference=(lambda s: reference_list(initial, s)) if ref_on else None,
                               example_search=es)
            plan.limited, plan.fewshot_k = True, fit.k
            plan.reference_list = fit.reference_list if opt.reference_list else None
            plan.example_search = fit.example_search
            if fit.reason:
                plan.reason = "; ".join(x for x in (plan.reason, fit.reason) if x)
                ctx.emit("budget_plan", **plan.to_json())
            ctx.store.write_json(PLAN_FILE, plan.to_json())
            return fit.k, fit.reason

        return size

    def size(self, g: int, batch: list[Item]) -> list[Item]:
        """The step's batch cut to what the budget has left; a step that cannot finish is not started."""
        ctx, plan = self.ctx, self.plan
        n_val = len(ctx.val_items())
        n, why = plan.step_items.get(str(g), len(batch)), ""
        if str(g) not in plan.step_items and not ctx.store.exists(f"steps/step_{g:04d}"):  # a started step stays
            n, why = step_items(ctx.cfg, ctx.models.budget, n_batch=len(batch), n_val=n_val, extra=self.extra)
            n, why = self._fit_tokens(batch, n, why)
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

    def _fit_tokens(self, batch: list[Item], n: int, why: str) -> tuple[int, str]:
        """`budget.max_tokens`: the batch cut further, to the items whose step fits the tokens left by the estimate
        (engine/token_plan.py), not only by the mean call so far; never below one item: the start-up was sized so
        that a one-item step fits, and whether a step starts at all stays the calls' and the mean call's decision
        (the estimate's reply caps make it an upper bound on what a step spends)."""
        ctx = self.ctx
        lim = ctx.cfg.budget.max_tokens
        if not lim or n <= 1:
            return n, why
        left, n_val, skill = lim - ctx.models.budget.tokens, len(ctx.val_items()), ctx.state.current_skill
        b = max(1, step_tokens_fit(ctx.cfg, self.token_costs(batch), skill, left, n_batch=n, n_val=n_val))
        return (n, why) if b == n else (b, f"batch cut to {b} of {len(batch)} items: {left} tokens left")

    def step_done(self) -> None:
        """Calls the step made past its estimate, for the next step's size."""
        self.extra = max(0, self.ctx.models.budget.calls - self._calls_before - self.estimate)

