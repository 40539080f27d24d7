"""The stages of one training step as checkpointed calls: each binds a stage function (engine/stages/) to the
step's inputs and declares the file its result is saved in, so that `Trainer._step` is one line per stage and
a resumed run reuses every finished stage from the step folder instead of running it again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skillgrad.engine.context import RunContext
from skillgrad.engine.modes import UpdateMode
from skillgrad.engine.schedule import EditBudgetSchedule
from skillgrad.engine.stages.aggregate import MergeResult, aggregate
from skillgrad.engine.stages.deep_reflect import Probe, deep_reflect
from skillgrad.engine.stages.reflect import RawPatch, reflect
from skillgrad.engine.stages.rollout import RolloutResult
from skillgrad.engine.stages.select import SelectResult, decide_autonomous_budget, select
from skillgrad.engine.stages.update import UpdateResult, guard_for, own_answers, update
from skillgrad.envs.base import Item


@dataclass(frozen=True)
class StepInput:
    """What every stage of one step reads: where it is, the skill it starts from, the text it is shown."""

    g: int
    epoch: int
    seed: int
    skill: str
    buffer_text: str
    meta_text: str
    mode: UpdateMode
    compact: bool  # a small teacher context window: shorter prompts

    @property
    def d(self) -> str:
        return f"steps/step_{self.g:04d}"


async def rollout_stage(ctx: RunContext, s: StepInput, batch: list[Item]) -> RolloutResult:
    return await ctx.stage("rollout", s.g, s.epoch,
                           lambda: ctx.run_items(f"{s.d}/rollout", batch, s.skill, stage="rollout", train=True),
                           lambda r: {"n": r.n, "n_fail": r.n_fail, "hard": r.hard})


def record_patches(ctx: RunContext, s: StepInput, patches: list[RawPatch]) -> None:
    """One file per analyst patch; a rejected teacher reply is evented with its file."""
    counters: dict[str, int] = {}
    for p in patches:  # minibatch_fail_000.json ..., deep_fail_000.json ... (deep reflect's patches)
        kind = ("deep_" if p.origin == "deep" else "minibatch_") + ("fail" if p.source_type == "failure" else "succ")
        counters[kind] = counters.get(kind, -1) + 1
        file = f"{s.d}/patches/{kind}_{counters[kind]:03d}.json"
        ctx.store.write_json(file, p.to_json())
        if not p.ok:
            ctx.emit("teacher_output_rejected", stage="reflect", step=s.g, epoch=s.epoch,
                 reason=p.reply.get("error"), file=file)


async def reflect_stage(ctx: RunContext, s: StepInput, ro: RolloutResult, budget: int) -> list[RawPatch]:
    g, opt = ctx.cfg.gradient, ctx.cfg.optimizer
    return await ctx.checkpointed(
        "reflect", s.g, s.epoch, f"{s.d}/patches/reflect.json",
        lambda: reflect(ro.trajectories, s.skill, ctx.teacher, mode=s.mode, minibatch_size=g.minibatch_size,
                        workers=g.analyst_workers, seed=s.seed, budget=budget, max_chars=g.max_edit_chars,
                        failure_only=g.failure_only, buffer_text=s.buffer_text, meta_text=s.meta_text,
                        skill_aware=opt.use_skill_aware_reflection, appendix_source=opt.skill_aware_appendix_source,
                        compact=s.compact, sample=s.epoch - 1),
        lambda x: [RawPatch.from_json(p) for p in x], lambda r: [p.to_json() for p in r],
        lambda r: {"calls": len(r), "ok": sum(p.ok for p in r), "items": sum(len(p.items) for p in r)})


async def deep_reflect_stage(ctx: RunContext, s: StepInput, ro: RolloutResult, budget: int) -> list[RawPatch]:
    """More patches, from multi-turn probing of a few chosen trajectories (`gradient.use_deep_reflect`)."""
    g = ctx.cfg.gradient
    if not g.use_deep_reflect:
        return []
    probes = await ctx.checkpointed(
        "deep_reflect", s.g, s.epoch, f"{s.d}/patches/deep_reflect.json",
        lambda: deep_reflect(ro.trajectories, s.skill, ctx.teacher, mode=s.mode, n_failures=g.deep_reflect_failures,
                             n_successes=0 if g.failure_only else g.deep_reflect_successes, seed=s.seed,
                             budget=budget, max_chars=g.max_edit_chars, workers=g.analyst_workers,
                             buffer_text=s.buffer_text, meta_text=s.meta_text, compact=s.compact,
                             sample=s.epoch - 1),
        lambda x: [Probe.from_json(p) for p in x], lambda r: [p.to_json() for p in r],
        lambda r: {"probed": len(r), "turns": sum(len(p.turns) for p in r)})
    return [p.patch for p in probes if p.patch is not None]


async def aggregate_stage(ctx: RunContext, s: StepInput, fail_p: list[list[dict[str, Any]]],
                          succ_p: list[list[dict[str, Any]]]) -> MergeResult:
    g = ctx.cfg.gradient
    return await ctx.checkpointed(
        "aggregate", s.g, s.epoch, f"{s.d}/merged_patch.json",
        lambda: aggregate(fail_p, succ_p, s.skill, ctx.teacher, mode=s.mode, merge_batch_size=g.merge_batch_size,
                          merge_mode=g.merge_mode, meta_text=s.meta_text,
                          max_items=max(16, 2 * ctx.cfg.optimizer.learning_rate), max_chars=g.max_edit_chars),
        MergeResult.from_json, lambda r: r.to_json(), lambda r: {"items": len(r.items), "fallbacks": len(r.fallbacks)})


async def select_stage(ctx: RunContext, s: StepInput, items: list[dict[str, Any]], ro: RolloutResult,
                       schedule: EditBudgetSchedule) -> SelectResult:
    async def compute() -> SelectResult:
        if not s.mode.ranks_with_budget:  # a full rewrite: the candidates are whole skills, no edit budget
            return await select(items, s.skill, ctx.teacher, mode=s.mode, budget=None)
        decision = None
        if ctx.cfg.optimizer.lr_control_mode == "autonomous":
            decision = await decide_autonomous_budget(items, s.skill, ctx.teacher, rollout_n=ro.n,
                                                      rollout_hard=ro.hard, rollout_soft=ro.soft,
                                                      buffer_text=s.buffer_text, meta_text=s.meta_text)
            budget = int(decision["learning_rate"])
        else:
            budget = schedule.lr_at(ctx.state.lr_steps + 1)
        return await select(items, s.skill, ctx.teacher, mode=s.mode, budget=budget, meta_text=s.meta_text,
                            buffer_text=s.buffer_text, lr_decision=decision)

    return await ctx.checkpointed("select", s.g, s.epoch, f"{s.d}/ranked_edits.json", compute,
                                  SelectResult.from_json, lambda r: r.to_json(),
                                  lambda r: {"selected": len(r.selected), "budget": r.budget, "ranked": r.ranked})


async def update_stage(ctx: RunContext, s: StepInput, selected: list[dict[str, Any]]) -> UpdateResult:
    m = ctx.cfg.model
    return await ctx.checkpointed(
        "update", s.g, s.epoch, f"{s.d}/update_result.json",
        lambda: update(s.skill, selected, ctx.teacher, mode=s.mode, lenient_anchors=ctx.cfg.optimizer.lenient_anchors,
                       buffer_text=s.buffer_text,
                       rewrite_max_tokens=m.rewrite_max_completion_tokens if ctx.teacher.max_tokens > 4096 else None,
                       rewrite_reasoning_effort=m.rewrite_reasoning_effort,
                       guard=guard_for([*ctx.splits.train, *ctx.splits.val], ctx.teacher.prompts, ctx.env),
                       allow_checker_text=ctx.cfg.evaluation.allow_checker_text,
                       own=own_answers([*ctx.splits.train, *ctx.splits.val], ctx.env)),
        UpdateResult.from_json, lambda r: r.to_json(),
        lambda r: {"applied": r.report.get("applied", 0), "candidate": r.candidate is not None})
