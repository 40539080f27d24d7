"""Rules from the analysts: reflect and deep reflect read the step's rollouts and write rule edits (one call per
minibatch each), side by side. The merge and rank stages (engine/stages/aggregate.py, select.py) take them on.

Entry point: `rules`.
"""

from __future__ import annotations

from skillgrad.core.gather import gather_all
from skillgrad.engine.context import RunContext
from skillgrad.engine.stages.reflect import RawPatch
from skillgrad.engine.stages.rollout import RolloutResult
from skillgrad.engine.step_stages import StepInput, deep_reflect_stage, reflect_stage


async def rules(ctx: RunContext, s: StepInput, ro: RolloutResult, budget: int) -> list[RawPatch]:
    """Reflect's and deep reflect's patches (the two read the same rollouts, so they run side by side)."""
    shallow, deep = await gather_all(reflect_stage(ctx, s, ro, budget), deep_reflect_stage(ctx, s, ro, budget))
    return shallow + deep
