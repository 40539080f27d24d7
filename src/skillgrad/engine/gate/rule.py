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

from skillgrad.engine.gate.paired import gate_score, gate_test
from skillgrad.skill import semantic_density, skill_hash

if TYPE_CHECKING:
    from skillgrad.engine.context import RunContext
    from skillgrad.envs.base import Item


# a tie's gain is zero; `gate_test` wants a gain above min_delta, so a tie is tested against this instead (every
# other requirement, the p-value and no_regression, is left as configured)
TIE_MIN_DELTA = -1e-9


def paired_items(ctx: RunContext, items: list[Item], *skills: str, key: str = "") -> list[Item] | None:
    """The items every one of `skills` has a score for, in `items` order (an item that ended in an error has none,
    exec/pool.py); None when one of them has no per-item scores at all."""
    pers = [ctx.state.sel_items.get(skill_hash(s) + key) for s in skills]
    if any(per is None for per in pers):
        return None
    return [it for it in items if all(per is not None and it.id in per for per in pers)]


def item_scores(ctx: RunContext, skill: str, items: list[Item], key: str = "") -> list[float] | None:
    """Per-item gate scores of `skill` in `items` order, from the run's per-item cache (None if absent)."""
    per = ctx.state.sel_items.get(skill_hash(skill) + key)
    if per is None or any(it.id not in per for it in items):
        return None
    ev = ctx.cfg.evaluation
    bonus = ev.semantic_density_weight * semantic_density(skill, ev.leading_words) if ev.use_semantic_density else 0.0
    return [gate_score(per[it.id][0], per[it.id][1], ev.gate_metric, ev.gate_mixed_weight, bonus) for it in items]


async def _fresh_scores(ctx: RunContext, rel: str, skill: str, items: list[Item], sample: int) -> None:
    key = f":reeval{sample}"
    if skill_hash(skill) + key not in ctx.state.sel_items:
        res = await ctx.run_items(rel, items, skill, stage="incumbent_reeval", train=False, sample=sample)
        ctx.state.sel_items[skill_hash(skill) + key] = {t.item_id: [t.hard, t.soft] for t in res.scored}


def _scores(ctx: RunContext, skill: str, items: list[Item], key: str = "") -> list[float]:
    return item_scores(ctx, skill, items, key) or []


async def statistical_test(ctx: RunContext, d: str, incumbent: str, cand: str, *,
                           tie: bool = False) -> tuple[bool, dict[str, Any]]:
    """Whether a candidate the strict rule accepted also passes `gate_test` against `incumbent`; its record.
    `tie`: the candidate ties the incumbent on validation; it must pass every test but the gain (a tie gains
    nothing: with `gate_min_delta` above 0 it fails) before a tie-break may look at it."""
    ev = ctx.cfg.evaluation
    info: dict[str, Any] = {"rule": ev.gate_test, "alpha": ev.gate_alpha, "min_delta": ev.gate_min_delta,
                            "no_regression": ev.gate_no_regression, "incumbent_reeval": ev.incumbent_reeval,
                            **({"tie": True} if tie else {})}
    if tie and ev.gate_min_delta > 0:
        return False, {**info, "decided_by": "min_delta",
                       "reason": f"a tie on validation gains 0, not above gate_min_delta {ev.gate_min_delta}"}
    sel = paired_items(ctx, ctx.val_items(), incumbent, cand)
    if sel is None:  # a run resumed from a version that kept no per-item scores
        return True, {**info, "decided_by": "strict", "reason": "no per-item scores for the incumbent: strict only"}
    inc_v, cand_v = _scores(ctx, incumbent, sel), _scores(ctx, cand, sel)
    if ev.incumbent_reeval:
        spare = ctx.splits.val[len(ctx.val_items()):]
        if spare:
            await _fresh_scores(ctx, f"{d}/reeval_incumbent", incumbent, spare, 0)
            await _fresh_scores(ctx, f"{d}/reeval_candidate", cand, spare, 0)
            both = paired_items(ctx, spare, incumbent, cand, key=":reeval0") or []
            info["reeval"] = f"{len(spare)} validation items outside the selection slice"
            inc_v, cand_v = inc_v + _scores(ctx, incumbent, both, ":reeval0"), cand_v + _scores(ctx, cand, both, ":reeval0")
        elif ev.eval_temperature > 0:
            await _fresh_scores(ctx, f"{d}/reeval_incumbent", incumbent, sel, 1)
            await _fresh_scores(ctx, f"{d}/reeval_candidate", cand, sel, 1)
            both = paired_items(ctx, sel, incumbent, cand, key=":reeval1") or []
            info["reeval"] = "a second sample of the selection items (averaged per item)"
            # averaged per item; an item without a second sample (an error) keeps its one score, for both skills
            a = dict(zip([it.id for it in both], _scores(ctx, incumbent, both, ":reeval1"), strict=True))
            b = dict(zip([it.id for it in both], _scores(ctx, cand, both, ":reeval1"), strict=True))
            inc_v = [(x + a[it.id]) / 2 if it.id in a else x for it, x in zip(sel, inc_v, strict=True)]
            cand_v = [(x + b[it.id]) / 2 if it.id in b else x for it, x in zip(sel, cand_v, strict=True)]
        else:
            info["reeval"] = "none: no validation items outside the selection slice and temperature 0"
    test = gate_test(ev.gate_test, inc_v, cand_v, alpha=ev.gate_alpha,
                     min_delta=TIE_MIN_DELTA if tie else ev.gate_min_delta,
                     no_regression=ev.gate_no_regression, seed=ctx.cfg.train.seed)
    info.update(test.to_json(), n_items=len(cand_v))
    if test.passed or test.p_value is not None:
        info["decided_by"] = ev.gate_test
    elif test.lost and ev.gate_no_regression and "no_regression" in test.reason:
        info["decided_by"] = "no_regression"
    else:  # the mean gain itself failed: on the fresh items, or against min_delta
        info["decided_by"] = "incumbent_reeval" if ev.incumbent_reeval else "min_delta"
    return test.passed, info
