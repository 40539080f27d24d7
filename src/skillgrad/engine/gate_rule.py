"""The statistical part of the candidate gate (engine/candidate.py): `evaluation.gate_test` on per-item
selection scores.

The strict rule (SkillOpt's: candidate score > incumbent score) decides first. A candidate it accepts is
then tested on the per-item scores of the same selection items against the incumbent (the current skill, or
the best one for a promotion) with `gate_test` (strict | paired_bootstrap | mcnemar, min_delta,
no_regression); a failed test turns the accept into a reject. The record says which rule decided and why.

Incumbent re-evaluation (`evaluation.incumbent_reeval`): evaluation runs at temperature 0, so scoring the
incumbent again on the same items repeats the same answers; its lucky draw is the *items*: the current
skill won its place by scoring high on exactly these. So before a candidate replaces it, both are scored
on the validation items outside the selection slice (`val[sel_env_num:]`, never seen by the gate) and the
test runs on all items together. With no spare items and `eval_temperature` > 0, both are scored on a
second sample of the selection items instead and the two samples are averaged per item. With neither,
nothing fresh exists and the record says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skillgrad.engine.gate import gate_score, gate_test
from skillgrad.skill import semantic_density, skill_hash

if TYPE_CHECKING:
    from skillgrad.engine.context import RunContext
    from skillgrad.envs.base import Item


def item_scores(ctx: RunContext, skill: str, items: list[Item], key: str = "") -> list[float] | None:
    """Per-item gate scores of `skill` in `items` order, from the run's per-item cache (None if absent)."""
    per = ctx.state.sel_items.get(skill_hash(skill) + key)
    if per is None or any(it.id not in per for it in items):
        return None
    ev = ctx.cfg.evaluation
    bonus = ev.semantic_density_weight * semantic_density(skill, ev.leading_words) if ev.use_semantic_density else 0.0
    return [gate_score(per[it.id][0], per[it.id][1], ev.gate_metric, ev.gate_mixed_weight, bonus) for it in items]


async def _fresh_scores(ctx: RunContext, rel: str, skill: str, items: list[Item], sample: int) -> list[float] | None:
    key = f":reeval{sample}"
    if item_scores(ctx, skill, items, key) is None:
        res = await ctx.run_items(rel, items, skill, stage="incumbent_reeval", train=False, sample=sample)
        ctx.state.sel_items[skill_hash(skill) + key] = {t.item_id: [t.hard, t.soft] for t in res.trajectories}
    return item_scores(ctx, skill, items, key)


async def statistical_test(ctx: RunContext, d: str, incumbent: str, cand: str) -> tuple[bool, dict[str, Any]]:
    """Whether a candidate the strict rule accepted also passes `gate_test` against `incumbent`; its record."""
    ev = ctx.cfg.evaluation
    info: dict[str, Any] = {"rule": ev.gate_test, "alpha": ev.gate_alpha, "min_delta": ev.gate_min_delta,
                            "no_regression": ev.gate_no_regression, "incumbent_reeval": ev.incumbent_reeval}
    sel = ctx.val_items()
    inc_v, cand_v = item_scores(ctx, incumbent, sel), item_scores(ctx, cand, sel)
    if inc_v is None or cand_v is None:  # a run resumed from a version that kept no per-item scores
        return True, {**info, "decided_by": "strict", "reason": "no per-item scores for the incumbent: strict only"}
    if ev.incumbent_reeval:
        spare = ctx.splits.val[len(sel):]
        if spare:
            a = await _fresh_scores(ctx, f"{d}/reeval_incumbent", incumbent, spare, 0)
            b = await _fresh_scores(ctx, f"{d}/reeval_candidate", cand, spare, 0)
            info["reeval"] = f"{len(spare)} validation items outside the selection slice"
            inc_v, cand_v = inc_v + (a or []), cand_v + (b or [])
        elif ev.eval_temperature > 0:
            a = await _fresh_scores(ctx, f"{d}/reeval_incumbent", incumbent, sel, 1)
            b = await _fresh_scores(ctx, f"{d}/reeval_candidate", cand, sel, 1)
            info["reeval"] = "a second sample of the selection items (averaged per item)"
            inc_v = [(x + y) / 2 for x, y in zip(inc_v, a or inc_v, strict=True)]
            cand_v = [(x + y) / 2 for x, y in zip(cand_v, b or cand_v, strict=True)]
        else:
            info["reeval"] = "none: no validation items outside the selection slice and temperature 0"
    test = gate_test(ev.gate_test, inc_v, cand_v, alpha=ev.gate_alpha, min_delta=ev.gate_min_delta,
                     no_regression=ev.gate_no_regression, seed=ctx.cfg.train.seed)
    info.update(test.to_json(), n_items=len(cand_v))
    if test.passed or test.p_value is not None:
        info["decided_by"] = ev.gate_test
    elif test.lost and ev.gate_no_regression and "no_regression" in test.reason:
        info["decided_by"] = "no_regression"
    else:  # the mean gain itself failed: on the fresh items, or against min_delta
        info["decided_by"] = "incumbent_reeval" if ev.incumbent_reeval else "min_delta"
    return test.passed, info
