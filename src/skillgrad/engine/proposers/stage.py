"""The demonstrate stage of one step, checkpointed: verified worked examples for the select stage.

The step's binding of the proposers (engine/proposers/sources.py), like engine/step_stages.py for the other stages.
"""

from __future__ import annotations

from typing import Any

from skillgrad.engine.demo_limits import earlier_refusals, settled_by_tie
from skillgrad.engine.proposers.result import DemoResult
from skillgrad.engine.proposers.sources import Strategy, propose_examples
from skillgrad.engine.proposers.text import norm_text
from skillgrad.engine.stages.rollout import RolloutResult
from skillgrad.envs.base import Item
from skillgrad.skill.examples import find_examples


async def demonstrate_stage(ctx: Any, s: Any, ro: RolloutResult, batch: list[Item], strategy: Strategy) -> DemoResult:
    """`optimizer.demonstrations` examples at most from each source, by the student's strategy; patch mode only (a
    rewrite has no edits)."""
    opt = ctx.cfg.optimizer
    if opt.demonstrations <= 0 or s.mode.update_kind != "apply_edits":  # examples are edits
        return DemoResult()

    async def compute() -> DemoResult:
        # A teacher that is another model than the student (an agent through handoff, an API model) writes the
        # corrections a small student cannot: it corrects twice as many failures, and its verified corrections
        # lead. Measured in a Sleep night with the handoff teacher: two agent corrections per step (neither on a
        # pnpm task) beside two mechanical repairs of the student's replies, which 5 of 8 later replies copied.
        distinct = getattr(ctx.models.teacher, "name", "") != getattr(ctx.models.student, "name", "")
        res = await propose_examples(ro.trajectories, {it.id: it for it in batch}, s.skill, ctx.teacher, ctx.env,
                                     ctx.models.student, strategy=strategy, limit=opt.demonstrations,
                                     max_chars=opt.max_example_chars, seed=s.seed, compact=s.compact,
                                     sample=s.epoch - 1, refused=refused_examples(ctx.store, ctx.history, s.g),
                                     n_corrections=2 * opt.demonstrations if distinct else None,
                                     teacher_first=distinct,
                                     earlier=earlier_refusals(ctx.store, ctx.history, s.g),
                                     settled=settled_by_tie(ctx.store, ctx.history, s.g))
        for it in res.items:  # a student that follows examples gets them ahead of the rules (stages/select.py)
            it["first"] = strategy.examples_first
        for d in res.rejected:
            ctx.emit("demonstration_rejected", step=s.g, epoch=s.epoch, item=d["item_id"], source=d["source"],
                     why=d["why"])
        return res

    return await ctx.checkpointed("demonstrate", s.g, s.epoch, f"{s.d}/patches/demonstrations.json", compute,
                                  DemoResult.from_json, lambda r: r.to_json(),
                                  lambda r: {"verified": len(r.items), "rejected": len(r.rejected)})


def refused_examples(store: Any, history: list[dict[str, Any]], before: int) -> dict[tuple[str, str], int]:
    """The worked examples that earlier steps' demonstrate stage put into a candidate the gate refused (rejected or
    blocked): (item id, reply) -> step. With a train split no larger than the batch, a step whose skill did not
    change rolls out the same replies and proposed the same examples again: review-sections steps 2-4 were one
    candidate, blocked three times (6 of 6 validation replies near-duplicates)."""
    out: dict[tuple[str, str], int] = {}
    for h in history:
        g = h.get("step")
        if not isinstance(g, int) or g >= before or str(h.get("action", "")).startswith(("accept", "skip")):
            continue
        d, cand = f"steps/step_{g:04d}", None
        if store.exists(f"{d}/candidate_skill.md"):
            cand = (store.root / f"{d}/candidate_skill.md").read_text(encoding="utf-8")
        demos = store.read_json(f"{d}/patches/demonstrations.json", default=None)
        if not cand or not isinstance(demos, dict):
            continue
        shown = {(norm_text(e.question), norm_text(e.reply)) for e in find_examples(cand)}
        for it in demos.get("items", []):
            if (norm_text(str(it.get("target", ""))), norm_text(str(it.get("content", "")))) in shown:
                out[(str((it.get("demonstration") or {}).get("item_id", "")), norm_text(str(it["content"])))] = g
    return out


def demo_counts(demos: DemoResult, report: dict[str, Any]) -> dict[str, int]:
    """The step record's demonstration counts: verified, rejected, and applied to the candidate."""
    applied = sum(o.get("op") == "example" and str(o.get("status", "")).startswith("applied")
                  for o in report.get("outcomes", []))
    return {"n_demonstrations": len(demos.items), "n_demonstrations_rejected": len(demos.rejected),
            "n_examples_applied": applied}
