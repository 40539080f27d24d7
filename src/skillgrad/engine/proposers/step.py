"""One step's proposals: which proposers run for this student and run configuration, and which of their edits
can still be selected. The trainer's "propose" box (DESIGN.md section 1) in one call.

Three shapes, by `optimizer.analysts` and the student's strategy (sources.py):
- demonstrations only (`optimizer.analysts: false`, an ablation): no analyst call;
- both, side by side: the analysts read the same rollouts as demonstrate (one handoff round for an agent teacher);
- the small-student shortcut: verified examples first, and the analysts are asked only when no example was
  verified or the step has no fixed edit budget to fill.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skillgrad.core.gather import gather_pair
from skillgrad.engine.proposers.result import DemoResult
from skillgrad.engine.proposers.rules import rules
from skillgrad.engine.proposers.sources import Strategy, examples_fill_budget
from skillgrad.engine.proposers.stage import demonstrate_stage
from skillgrad.engine.stages.reflect import RawPatch
from skillgrad.engine.stages.rollout import RolloutResult
from skillgrad.engine.step_stages import StepInput, record_patches
from skillgrad.envs.base import Item


@dataclass
class StepProposals:
    demos: DemoResult
    patches: list[RawPatch] = field(default_factory=list)
    record: dict[str, Any] = field(default_factory=dict)  # why a proposer was not asked (the step's record)

    def analyst_items(self, source_type: str) -> list[list[dict[str, Any]]]:
        return [p.items for p in self.patches if p.source_type == source_type and p.items]


async def propose_step(ctx: Any, s: StepInput, ro: RolloutResult, batch: list[Item], strategy: Strategy, *,
                       analyst_budget: int, shortcuts: bool) -> StepProposals:
    """The step's verified worked examples and the analysts' patches (each patch written to the run folder)."""
    opt = ctx.cfg.optimizer
    demo_call = demonstrate_stage(ctx, s, ro, batch, strategy)
    out = StepProposals(DemoResult())
    if not opt.analysts:
        out.demos = await demo_call
        out.record["reflect_skipped"] = "optimizer.analysts=false"
    elif not shortcuts:
        out.demos, out.patches = await gather_pair(demo_call, rules(ctx, s, ro, analyst_budget))
    elif (demos := await demo_call).items and s.mode.edit_budget and opt.lr_control_mode != "autonomous":
        out.demos = demos  # examples fill the budget of a student that ignores rules: the analysts' calls are not made
        out.record["reflect_skipped"] = "verified examples for a student measured to follow them and ignore rules"
    else:
        out.demos, out.patches = demos, await rules(ctx, s, ro, analyst_budget)
    record_patches(ctx, s, out.patches)
    return out


def selectable_rules(fail_p: list[list[dict[str, Any]]], succ_p: list[list[dict[str, Any]]], demos: DemoResult,
                     slots: int | None) -> tuple[list[list[dict[str, Any]]], list[list[dict[str, Any]]], str | None]:
    """The analysts' edits that the select stage can still pick, and a note when none can: worked examples that
    take slots ahead of the rules filled the step's edit budget, so merging the rules is a call nothing uses."""
    if (fail_p or succ_p) and examples_fill_budget(demos.items, slots):
        return [], [], (f"{sum(map(len, fail_p + succ_p))} analyst edit(s) not tried: worked examples "
                        f"filled the step's edit budget of {slots}")
    return fail_p, succ_p, None
