"""The statistical part of the step gate: `evaluation.gate_test` on per-item selection scores.

The strict rule (SkillOpt's: candidate score > current score) decides first. A candidate it accepts is
then tested on the per-item scores of the same selection items (incumbent = the current skill) with
`gate_test` (strict | paired_bootstrap | mcnemar, min_delta, no_regression); a failed test turns the
accept into a reject. The record says which rule decided and why.

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

from skillgrad.engine.gate import GateDecision, gate_score, gate_test
from skillgrad.skill import semantic_density, skill_hash

if TYPE_CHECKING:
    from skillgrad.engine.trainer import Trainer
    from skillgrad.envs.base import Item


def item_scores(tr: Trainer, skill: str, items: list[Item], key: str = "") -> list[float] | None:
    """Per-item gate scores of `skill` in `items` order, from the trainer's per-item cache (None if absent)."""
    per = tr.state.sel_items.get(skill_hash(skill) + key)
    if per is None or any(it.id not in per for it in items):
        return None
    ev = tr.cfg.evaluation
    bonus = ev.semantic_density_weight * semantic_density(skill, ev.leading_words) if ev.use_semantic_density else 0.0
    return [gate_score(per[it.id][0], per[it.id][1], ev.gate_metric, ev.gate_mixed_weight, bonus) for it in items]


async def _fresh_scores(tr: Trainer, rel: str, skill: str, items: list[Item], sample: int) -> list[float] | None:
    key = f":reeval{sample}"
    if item_scores(tr, skill, items, key) is None:
        res = await tr._run_items(rel, items, skill, stage="incumbent_reeval", train=False, sample=sample)
        tr.state.sel_items[skill_hash(skill) + key] = {t.item_id: [t.hard, t.soft] for t in res.trajectories}
    return item_scores(tr, skill, items, key)


async def apply_gate_rule(tr: Trainer, d: str, cand: str, dec: GateDecision) -> tuple[GateDecision, dict[str, Any]]:
    """The strict decision `dec`, possibly turned into a reject by the configured test; and its record."""
    ev, st = tr.cfg.evaluation, tr.state
    info: dict[str, Any] = {"rule": ev.gate_test, "alpha": ev.gate_alpha, "min_delta": ev.gate_min_delta,
                            "no_regression": ev.gate_no_regression, "incumbent_reeval": ev.incumbent_reeval}
    if not ev.use_gate:
        return dec, {**info, "decided_by": "use_gate=false", "reason": "gate off: force accepted"}
    if not dec.accepted:
        return dec, {**info, "decided_by": "strict", "reason": "candidate score is not above the current score"}
    sel = tr._val_items(tr._splits)
    inc_v, cand_v = item_scores(tr, st.current_skill, sel), item_scores(tr, cand, sel)
    if inc_v is None or cand_v is None:  # a run resumed from a version that kept no per-item scores
        return dec, {**info, "decided_by": "strict", "reason": "no per-item scores for the incumbent: strict only"}
    if ev.incumbent_reeval:
        spare = tr._splits.val[len(sel):]
        if spare:
            a = await _fresh_scores(tr, f"{d}/reeval_incumbent", st.current_skill, spare, 0)
            b = await _fresh_scores(tr, f"{d}/reeval_candidate", cand, spare, 0)
            info["reeval"] = f"{len(spare)} validation items outside the selection slice"
            inc_v, cand_v = inc_v + (a or []), cand_v + (b or [])
        elif ev.eval_temperature > 0:
            a = await _fresh_scores(tr, f"{d}/reeval_incumbent", st.current_skill, sel, 1)
            b = await _fresh_scores(tr, f"{d}/reeval_candidate", cand, sel, 1)
            info["reeval"] = "a second sample of the selection items (averaged per item)"
            inc_v = [(x + y) / 2 for x, y in zip(inc_v, a or inc_v, strict=True)]
            cand_v = [(x + y) / 2 for x, y in zip(cand_v, b or cand_v, strict=True)]
        else:
            info["reeval"] = "none: no validation items outside the selection slice and temperature 0"
    test = gate_test(ev.gate_test, inc_v, cand_v, alpha=ev.gate_alpha, min_delta=ev.gate_min_delta,
                     no_regression=ev.gate_no_regression, seed=tr.cfg.train.seed)
    info.update(test.to_json(), n_items=len(cand_v))
    if test.passed or test.p_value is not None:
        info["decided_by"] = ev.gate_test
    elif test.lost and ev.gate_no_regression and "no_regression" in test.reason:
        info["decided_by"] = "no_regression"
    else:  # the mean gain itself failed: on the fresh items, or against min_delta
        info["decided_by"] = "incumbent_reeval" if ev.incumbent_reeval else "min_delta"
    if test.passed:
        return dec, info
    return GateDecision("reject", st.current_score, st.best_score, False), info
