"""One candidate pipeline: every way a skill can become the current or the best skill goes through
`judge_candidate`, so that no path (an epoch-end review, a slow update, a credit pass, the run-end promotion)
can be accepted on a weaker rule than a step.

Origins: `step_NNNN` (a training step), `step_NNNN+edit_credit` (its edits after credit), `appendix_step_NNNN`
(skill-aware execution notes), `meta_reflect_epoch_EE`, `slow_update_epoch_EE` and
`slow_update_placeholder_epoch_EE`, `<origin>+edit_credit` (run-end credit of the best skill), and the current
skill's own origin for the run-end promotion. Sleep judges its held-out per-task scores with `judge_scores`.

A judgement, in order:
1. the candidate is scored on the selection split (cached by skill hash; the test split is never read);
2. a candidate whose selection replies are degenerate (engine/goodhart.py: one short reply for most items,
   or replies that restate the instruction) while the incumbent's were not is blocked, whatever its score
   (an environment whose replies are like that from the start is not blocked on every candidate);
3. `force` (SkillOpt's force-accepted slow update, appendix notes) or `evaluation.use_gate: false` makes it
   current without a comparison; it still becomes best only through the gate;
4. otherwise the strict rule (score > the incumbent's score; ties reject), then `evaluation.gate_test` with
   `gate_min_delta` and `gate_no_regression` on the per-item scores against the incumbent (engine/gate_rule.py);
   a step's tie with the incumbent on validation is decided on the step's training tasks instead
   (`train.tiebreak`, engine/gate_tiebreak.py).

The incumbent is the current skill for target "current" and the best skill for target "best" (promotion),
unless the caller names another (run-end credit judges the pruned best against the initial skill). Every
verdict is emitted as a `gate` event with its origin and kept in `RunState.judgements`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from skillgrad.engine.gate import GateTest, gate_score, gate_test
from skillgrad.engine.gate_rule import statistical_test
from skillgrad.skill import skill_hash

if TYPE_CHECKING:
    from skillgrad.config.schema import EvaluationSection
    from skillgrad.engine.context import RunContext

Target = Literal["current", "best"]
TieBreak = Callable[[str, str], Awaitable[tuple[bool, dict[str, Any]]]]  # (incumbent, candidate) -> passed, record
ACCEPTED = ("accept", "accept_new_best", "force_accept")


@dataclass(frozen=True)
class Incumbent:
    """What a candidate must beat: a skill, its selection score, and a name for the record."""

    skill: str
    score: float
    name: str


@dataclass(frozen=True)
class Verdict:
    origin: str
    action: str  # accept | accept_new_best | reject | force_accept | blocked
    target: Target
    hard: float
    soft: float
    score: float
    incumbent: str
    score_before: float  # the incumbent's score
    best_before: float
    is_new_best: bool
    rule: dict[str, Any] = field(default_factory=dict)

    @property
    def accepted(self) -> bool:
        return self.action in ACCEPTED

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "accepted": self.accepted}


async def judge_candidate(ctx: RunContext, candidate: str, origin: str, *, folder: str, stage: str, step: int,
                          epoch: int, eval_rel: str | None = None, target: Target = "current",
                          incumbent: Incumbent | None = None, force: bool = False, apply: bool = True,
                          tiebreak: TieBreak | None = None) -> Verdict:
    """Score `candidate` on the selection split and judge it against the incumbent; apply the verdict to the
    run state unless `apply` is False (then call `adopt`). `folder` holds its selection results and re-evals.
    `tiebreak` decides a tie with the incumbent's validation score (engine/gate_tiebreak.py)."""
    st, ev = ctx.state, ctx.cfg.evaluation
    if incumbent is None:
        incumbent = (Incumbent(st.current_skill, st.current_score, "current") if target == "current"
                     else Incumbent(st.best_skill, st.best_score, "best"))
    scored = await ctx.evaluate(eval_rel or f"{folder}/selection_eval", candidate, stage=stage)
    rule: dict[str, Any]
    if scored.degenerate and not ctx.state.sel_degenerate.get(skill_hash(incumbent.skill)):
        action, rule = "blocked", {"decided_by": "degenerate", "reason": f"replies became degenerate: {scored.degenerate}"}
    elif force or (not ev.use_gate and target == "current"):
        action = "force_accept"
        rule = {"decided_by": "force" if force else "use_gate=false",
                "reason": "force-accepted into current with its measured score" if force
                else "gate off: force accepted"}
    elif tiebreak is not None and scored.score == incumbent.score:
        passed, rule = await tiebreak(incumbent.skill, candidate)  # validation cannot rank the two
        action = "accept" if passed else "reject"
    elif not scored.score > incumbent.score:  # a NaN score never wins
        action, rule = "reject", {"decided_by": "strict", "rule": ev.gate_test,
                                  "reason": f"candidate score is not above the {incumbent.name} score"}
    elif not ev.use_gate:  # a promotion with the gate off: the strict rule alone
        action, rule = "accept", {"decided_by": "use_gate=false", "reason": "gate off: strict rule only"}
    else:
        passed, rule = await statistical_test(ctx, folder, incumbent.skill, candidate)
        action = "accept" if passed else "reject"
    # best only through a comparison: a forced candidate (slow update, appendix notes) waits for the promotion
    # a tie won against the best skill on training tasks is the new best too
    tie_won = rule.get("decided_by") == "train_tiebreak" and incumbent.skill == st.best_skill
    new_best = action == "accept" and (target == "best" or scored.score > st.best_score or tie_won) or (
        action == "force_accept" and not force and scored.score > st.best_score)
    if new_best and target == "current" and action == "accept":
        action = "accept_new_best"
    verdict = Verdict(origin, action, target, scored.hard, scored.soft, scored.score, incumbent.name,
                      incumbent.score, st.best_score, new_best, rule)
    where = {} if stage == "gate" else {"stage": stage}  # a step's own gate event carries no stage (readers rely on it)
    ctx.emit("gate", step=step, epoch=epoch, **where, origin=origin, action=action, target=target,
             candidate_score=scored.score, score_before=incumbent.score, incumbent=incumbent.name,
             current_score=scored.score if verdict.accepted and target == "current" else st.current_score,
             best_score=scored.score if verdict.is_new_best else st.best_score, selection_hard=scored.hard,
             selection_soft=scored.soft, decided_by=rule.get("decided_by"), p_value=rule.get("p_value"),
             reason=rule.get("reason"))
    st.judgements.append({"step": step, "epoch": epoch, "origin": origin, "action": action, "target": target,
                          "score": scored.score, "score_before": incumbent.score,
                          "decided_by": rule.get("decided_by"), "p_value": rule.get("p_value")})
    if apply:
        adopt(ctx, verdict, candidate, step)
    return verdict


def adopt(ctx: RunContext, verdict: Verdict, candidate: str, step: int) -> None:
    """Apply a verdict: an accepted candidate becomes current (target current) or best (target best)."""
    st = ctx.state
    if verdict.target == "current" and verdict.accepted:
        st.current_skill, st.current_score, st.current_origin = candidate, verdict.score, verdict.origin
    if verdict.is_new_best:
        if verdict.target == "best" and st.current_skill == st.best_skill:  # current was the old best: follows
            st.current_skill, st.current_score, st.current_origin = candidate, verdict.score, verdict.origin
        st.best_skill, st.best_score, st.best_origin, st.best_step = candidate, verdict.score, verdict.origin, step


def judge_scores(ev: EvaluationSection, incumbent: list[float], candidate: list[float], *, seed: int = 0,
                 no_regression: bool | None = None) -> GateTest:
    """The same gate on per-item scores measured elsewhere (Sleep's held-out tasks): `ev.gate_test` with
    `gate_alpha`, `gate_min_delta` and `gate_no_regression` (overridable), same items in the same order."""
    return gate_test(ev.gate_test, incumbent, candidate, alpha=ev.gate_alpha, min_delta=ev.gate_min_delta,
                     no_regression=ev.gate_no_regression if no_regression is None else no_regression, seed=seed)


def item_gate_scores(ev: EvaluationSection, per_item: list[tuple[float, float]]) -> list[float]:
    """(hard, soft) per item -> gate scores under `ev.gate_metric` (for `judge_scores`)."""
    return [gate_score(h, s, ev.gate_metric, ev.gate_mixed_weight) for h, s in per_item]
