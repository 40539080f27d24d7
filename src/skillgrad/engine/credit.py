"""Edit-level credit (`evaluation.edit_credit`): keep only the edits that earn their place.

The gate accepts a step as a whole, so an edit that rode along with a helpful one would stay forever.
After an accepted step (units: the step's changes) and once more at run end (units: everything the best
skill learned since the initial skill) each unit is tested by removing it and re-scoring on the
selection split: a unit whose removal does not lower the score is dropped.

Scheme: sequential backward elimination, a leave-one-out that removes each unit from the skill as it
stands after the previous decisions. It costs one selection evaluation per unit, like plain leave-one-
out, but the skill it ends with is the one it last scored (no extra evaluation, and never a combination
of removals that was not measured), and its score never falls below the accepted candidate's. Group
testing would be cheaper only when most units are useless and do not interact, which we cannot assume
for facts that share items. Evaluations are cached by skill hash, so a unit-free revert costs nothing.

Files: `<rel>.json` (the checkpoint: every decision with the scores it was made on) and
`<rel>/without_NN/results.jsonl` (the per-item selection results of each trial).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from skillgrad.skill import skill_hash
from skillgrad.skill.units import edit_units, revert_units

if TYPE_CHECKING:
    from skillgrad.engine.gate import GateDecision
    from skillgrad.engine.trainer import Trainer


@dataclass
class CreditDecision:
    unit: int
    kind: str
    text: str
    action: str               # dropped | kept | untested
    score_with: float | None  # the skill as it stood when the unit was tested
    score_without: float | None
    reason: str


@dataclass
class CreditResult:
    skill: str
    score: float
    base_score: float
    n_units: int
    n_dropped: int
    evaluations: int
    decisions: list[CreditDecision] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["skill_hash"] = skill_hash(self.skill)
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> CreditResult:
        decisions = [CreditDecision(**x) for x in d.get("decisions", [])]
        known = {k: d[k] for k in ("skill", "score", "base_score", "n_units", "n_dropped", "evaluations")}
        return cls(**known, decisions=decisions)


async def credit_edits(before: str, after: str, base_score: float,
                       score_fn: Callable[[str, int], Awaitable[float]], *, max_units: int = 0) -> CreditResult:
    """Drop each unit of `after` (vs `before`) whose removal does not lower `score_fn`'s score."""
    units = edit_units(before, after)
    tested = units[:max_units] if max_units else units
    dropped: set[int] = set()
    skill, score, evaluations = after, base_score, 0
    decisions = []
    for u in tested:
        trial = revert_units(before, after, dropped | {u.index})
        without = await score_fn(trial, u.index)
        evaluations += 1
        if without >= score:
            decisions.append(CreditDecision(u.index, u.kind, u.label(), "dropped", score, without,
                                            f"removing it does not lower the score ({without:.4f} >= {score:.4f})"))
            dropped.add(u.index)
            skill, score = trial, without
        else:
            decisions.append(CreditDecision(u.index, u.kind, u.label(), "kept", score, without,
                                            f"removing it lowers the score ({without:.4f} < {score:.4f})"))
    for u in units[len(tested):]:
        decisions.append(CreditDecision(u.index, u.kind, u.label(), "untested", None, None,
                                        "over evaluation.edit_credit_max_units: kept untested"))
    return CreditResult(skill, score, base_score, len(units), len(dropped), evaluations, decisions)


async def run_edit_credit(tr: Trainer, rel: str, before: str, after: str, score: float, *, step: int,
                          epoch: int) -> CreditResult:
    """The credit stage inside a run: checkpointed in `<rel>.json`, timed and evented like every stage."""
    max_units = tr.cfg.evaluation.edit_credit_max_units

    async def score_fn(skill: str, unit: int) -> float:
        return (await tr._evaluate(f"{rel}/without_{unit:02d}", skill, tr._splits, stage="edit_credit"))[2]

    result = await tr._stage("edit_credit", step, epoch, lambda: tr._reuse(
        f"{rel}.json", lambda: credit_edits(before, after, score, score_fn, max_units=max_units),
        CreditResult.from_json, lambda r: r.to_json()),
        lambda r: {"units": r.n_units, "dropped": r.n_dropped, "evaluations": r.evaluations})
    for d in result.decisions:
        tr.emit("edit_credit", step=step, epoch=epoch, unit=d.unit, action=d.action, text=d.text,
                score_with=d.score_with, score_without=d.score_without)
    return result


def credit_summary(result: CreditResult) -> dict[str, Any]:
    """What a step record and the report keep of a credit pass."""
    return {"units": result.n_units, "dropped": result.n_dropped, "evaluations": result.evaluations,
            "score_before_credit": result.base_score, "score_after_credit": result.score,
            "dropped_text": [d.text for d in result.decisions if d.action == "dropped"],
            "kept_text": [d.text for d in result.decisions if d.action != "dropped"]}


async def credit_accepted_step(tr: Trainer, d: str, g: int, epoch: int, before: str, cand: str, score: float,
                               dec: GateDecision) -> tuple[str, float, GateDecision, dict[str, Any]]:
    """Credit an accepted step's edits; the pruned candidate takes its place with the score it was measured at."""
    result = await run_edit_credit(tr, f"{d}/edit_credit", before, cand, score, step=g, epoch=epoch)
    if result.skill != cand:
        tr.store.write_text(f"{d}/candidate_after_credit.md", result.skill)
    best = result.score if dec.is_new_best else dec.best_score
    return result.skill, result.score, replace(dec, current_score=result.score, best_score=best), credit_summary(result)


async def credit_best(tr: Trainer) -> dict[str, Any]:
    """Run end: credit everything the best skill learned since the initial skill; the pruned skill is best."""
    st = tr.state
    result = await run_edit_credit(tr, "edit_credit_final", st.initial_skill, st.best_skill, st.best_score,
                                   step=st.last_completed_step, epoch=0)
    if result.skill != st.best_skill:
        if st.current_skill == st.best_skill:
            st.current_skill, st.current_score = result.skill, result.score
        st.best_skill, st.best_score = result.skill, result.score
        st.best_origin = f"{st.best_origin}+edit_credit"
    return credit_summary(result)
