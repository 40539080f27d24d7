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

The pruned skill is a new candidate: it goes through the same gate (engine/candidate.py) against the same
incumbent as the skill it was cut from (the step's starting skill; the initial skill at run end); where it
fails, the uncut skill stays.

Files: `<rel>.json` (the checkpoint: every decision with the scores it was made on) and
`<rel>/without_NN/results.jsonl` (the per-item selection results of each trial).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from skillgrad.engine.candidate import Incumbent, Verdict, adopt, judge_candidate
from skillgrad.skill import skill_hash
from skillgrad.skill.units import edit_units, revert_units

if TYPE_CHECKING:
    from skillgrad.engine.context import RunContext


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


async def run_edit_credit(ctx: RunContext, rel: str, before: str, after: str, score: float, *, step: int,
                          epoch: int) -> CreditResult:
    """The credit stage inside a run: checkpointed in `<rel>.json`, timed and evented like every stage."""
    max_units = ctx.cfg.evaluation.edit_credit_max_units

    async def score_fn(skill: str, unit: int) -> float:
        return (await ctx.evaluate(f"{rel}/without_{unit:02d}", skill, stage="edit_credit")).score

    result = await ctx.checkpointed(
        "edit_credit", step, epoch, f"{rel}.json", lambda: credit_edits(before, after, score, score_fn, max_units=max_units),
        CreditResult.from_json, lambda r: r.to_json(),
        lambda r: {"units": r.n_units, "dropped": r.n_dropped, "evaluations": r.evaluations})
    for d in result.decisions:
        ctx.emit("edit_credit", step=step, epoch=epoch, unit=d.unit, action=d.action, text=d.text,
                 score_with=d.score_with, score_without=d.score_without)
    return result


def credit_summary(result: CreditResult, verdict: Verdict | None = None) -> dict[str, Any]:
    """What a step record and the report keep of a credit pass (and the gate's verdict on the pruned skill)."""
    out = {"units": result.n_units, "dropped": result.n_dropped, "evaluations": result.evaluations,
           "score_before_credit": result.base_score, "score_after_credit": result.score,
           "dropped_text": [d.text for d in result.decisions if d.action == "dropped"],
           "kept_text": [d.text for d in result.decisions if d.action != "dropped"]}
    if verdict is not None:
        out.update(pruned_action=verdict.action, pruned_decided_by=verdict.rule.get("decided_by"))
    return out


async def credit_accepted_step(ctx: RunContext, d: str, g: int, epoch: int, before: str, cand: str,
                               verdict: Verdict) -> tuple[str, Verdict, dict[str, Any]]:
    """Credit an accepted step's edits; the pruned candidate takes its place if it passes the same gate."""
    result = await run_edit_credit(ctx, f"{d}/edit_credit", before, cand, verdict.score, step=g, epoch=epoch)
    if result.skill == cand:
        return cand, verdict, credit_summary(result)
    ctx.store.write_text(f"{d}/candidate_after_credit.md", result.skill)
    pruned = await judge_candidate(ctx, result.skill, f"{verdict.origin}+edit_credit", folder=f"{d}/edit_credit",
                                   stage="edit_credit", step=g, epoch=epoch, apply=False)
    if pruned.accepted:
        return result.skill, pruned, credit_summary(result, pruned)
    return cand, verdict, credit_summary(result, pruned)


async def credit_best(ctx: RunContext) -> dict[str, Any]:
    """Run end: credit everything the best skill learned since the initial skill; the pruned skill is best
    if it beats the initial skill through the same gate the uncut one passed."""
    st = ctx.state
    result = await run_edit_credit(ctx, "edit_credit_final", st.initial_skill, st.best_skill, st.best_score,
                                   step=st.last_completed_step, epoch=0)
    if result.skill == st.best_skill:
        return credit_summary(result)
    initial = Incumbent(st.initial_skill, st.baseline_score if st.baseline_score is not None else -1.0, "initial")
    v = await judge_candidate(ctx, result.skill, f"{st.best_origin}+edit_credit", folder="edit_credit_final",
                              stage="edit_credit", step=st.last_completed_step, epoch=0, target="best",
                              incumbent=initial, apply=False)
    if v.accepted:
        adopt(ctx, v, result.skill, st.best_step)
    return credit_summary(result, v)
