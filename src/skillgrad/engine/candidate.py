"""One candidate pipeline: every way a skill can become the current or the best skill goes through
`judge_candidate`, so that no path (an epoch-end review, a slow update, a credit pass, the run-end promotion)
can be accepted on a weaker rule than a step.

Origins: `step_NNNN` (a training step), `step_NNNN+edit_credit` (its edits after credit), `appendix_step_NNNN`
(skill-aware execution notes), `meta_reflect_epoch_EE`, `slow_update_epoch_EE` and
`slow_update_placeholder_epoch_EE`, `<origin>+edit_credit` (run-end credit of the best skill), and the current
skill's own origin for the run-end promotion. Sleep judges its held-out per-task scores with `judge_scores`.

A judgement, in order:
1. the candidate is scored on the selection split (cached by skill hash; the test split is never read); scoring
   stops once the items scored cap its score where the strict rule rejects it (`evaluation.gate_early_stop`,
   engine/gate/early.py: a reject whatever the other items score, recorded with `decided_by: early_stop`);
2. a candidate whose selection replies are degenerate (engine/goodhart.py: one short reply for most items,
   or replies that restate the instruction) while the incumbent's were not is blocked, whatever its score
   (an environment whose replies are like that from the start is not blocked on every candidate); a caller may
   waive the guard for a candidate the optimizer did not write (`guard_waiver`: the few-shot start whose examples
   are all gold answers, engine/baselines.py), which then faces the rest of the gate with the guard's reason on
   its verdict (`rule["guard_waived"]`); a waived incumbent excuses no later candidate (`RunState.guard_waived`);
3. `force` (SkillOpt's force-accepted slow update, appendix notes) or `evaluation.use_gate: false` makes it
   current without a comparison; it still becomes best only through the gate;
4. otherwise the strict rule (score > the incumbent's score; ties reject), then `evaluation.gate_test` with
   `gate_min_delta` and `gate_no_regression` on the per-item scores against the incumbent (engine/gate/rule.py);
   a step's tie with the incumbent on validation must pass the same tests with a gain of zero (so never with
   `gate_min_delta` above 0) and is then decided on the step's training tasks (`train.tiebreak`,
   engine/gate/tiebreak.py);
5. an accepted candidate is the new best only if the tests it passed were against the best skill, or it passes
   them against the best skill too (after a forced update the current skill sits below the best); a forced
   candidate never becomes best (engine/gate/__init__.py lists every rule).

The incumbent is the current skill for target "current" and the best skill for target "best" (promotion),
unless the caller names another (run-end credit judges the pruned best against the initial skill). Every
verdict is emitted as a `gate` event with its origin and kept in `RunState.judgements`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from skillgrad.engine.gate import GateTest, gate_score, gate_test
from skillgrad.engine.gate.rule import statistical_test
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
    n_items: int = 0  # selection items
    n_scored: int = 0  # of them scored: fewer when the gate stopped early
    upper_bound: bool = False  # the gate stopped early: hard, soft and score are upper bounds, not measured means
    n_errors: int = 0  # selection items that ended in an error (exec/pool.py): outside its score

    @property
    def accepted(self) -> bool:
        return self.action in ACCEPTED

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "accepted": self.accepted}

    def scores_json(self) -> dict[str, Any]:
        """The selection scores as a record keeps them: measured means, or (an early stop) None beside the upper
        bounds, so that no reader takes a bound for the candidate's score."""
        if not self.upper_bound:
            return {"selection_hard": self.hard, "selection_soft": self.soft, "gate_score": self.score,
                    "selection_n_scored": self.n_scored, "selection_n_items": self.n_items,
                    "selection_errors": self.n_errors}
        return {"selection_hard": None, "selection_soft": None, "gate_score": None,
                "gate_score_upper_bound": self.score, "selection_hard_upper_bound": self.hard,
                "selection_soft_upper_bound": self.soft, "selection_n_scored": self.n_scored,
                "selection_n_items": self.n_items, "gate_early_stop": True}


async def judge_candidate(ctx: RunContext, candidate: str, origin: str, *, folder: str, stage: str, step: int,
                          epoch: int, eval_rel: str | None = None, target: Target = "current",
                          incumbent: Incumbent | None = None, force: bool = False, apply: bool = True,
                          tiebreak: TieBreak | None = None, guard_waiver: str = "") -> Verdict:
    """Score `candidate` on the selection split and judge it against the incumbent; apply the verdict to the
    run state unless `apply` is False (then call `adopt`). `folder` holds its selection results and re-evals.
    `tiebreak` decides a tie with the incumbent's validation score (engine/gate/tiebreak.py). `guard_waiver`
    (why the candidate is not the optimizer's work) lets degenerate replies through to the rest of the gate."""
    st, ev = ctx.state, ctx.cfg.evaluation
    if incumbent is None:
        incumbent = (Incumbent(st.current_skill, st.current_score, "current") if target == "current"
                     else Incumbent(st.best_skill, st.best_score, "best"))
    forced = force or (not ev.use_gate and target == "current")  # the verdict needs the whole score
    stop = None if forced else ctx.stop_rule(candidate, incumbent.score, ties_lose=tiebreak is None,
                                             incumbent_skill=incumbent.skill)
    scored = await ctx.evaluate(eval_rel or f"{folder}/selection_eval", candidate, stage=stage, stop=stop)
    flagged = scored.degenerate if scored.degenerate and not _excuses(ctx, incumbent.skill) else None
    rule: dict[str, Any]
    if scored.early_stop is not None:  # the items scored already cap it where the strict rule rejects it
        action, rule = "reject", {"decided_by": "early_stop", "rule": ev.gate_test, **scored.early_stop}
    elif flagged and not guard_waiver:
        action, rule = "blocked", {"decided_by": "degenerate", "reason": f"replies became degenerate: {flagged}"}
    elif forced:
        action = "force_accept"
        rule = {"decided_by": "force" if force else "use_gate=false",
                "reason": "force-accepted into current with its measured score" if force
                else "gate off: force accepted"}
    elif tiebreak is not None and scored.score == incumbent.score and ev.use_gate:
        # validation cannot rank the two: a tie that passes every other test of the gate goes to the tie-break
        passed, rule = await statistical_test(ctx, folder, incumbent.skill, candidate, tie=True)
        if passed:
            passed, rule = await tiebreak(incumbent.skill, candidate)
        action = "accept" if passed else "reject"
    elif not scored.score > incumbent.score:  # a NaN score never wins
        action, rule = "reject", {"decided_by": "strict", "rule": ev.gate_test,
                                  "reason": f"candidate score is not above the {incumbent.name} score"}
    elif not ev.use_gate:  # a promotion with the gate off: the strict rule alone
        action, rule = "accept", {"decided_by": "use_gate=false", "reason": "gate off: strict rule only"}
    else:
        passed, rule = await statistical_test(ctx, folder, incumbent.skill, candidate)
        action = "accept" if passed else "reject"
    if flagged and guard_waiver and scored.early_stop is None:
        rule = {**rule, "guard_waived": flagged, "guard_waived_why": guard_waiver}
    new_best = await _new_best(ctx, folder, action, target, incumbent, candidate, scored.score, force, rule)
    if new_best and target == "current" and action == "accept":
        action = "accept_new_best"
    verdict = Verdict(origin, action, target, scored.hard, scored.soft, scored.score, incumbent.name,
                      incumbent.score, st.best_score, new_best, rule, scored.n_items, scored.n_scored,
                      scored.early_stop is not None, scored.n_errors)
    where = {} if stage == "gate" else {"stage": stage}  # a step's own gate event carries no stage (readers rely on it)
    sj = verdict.scores_json()
    ctx.emit("gate", step=step, epoch=epoch, **where, origin=origin, action=action, target=target,
             candidate_score=sj["gate_score"], score_before=incumbent.score, incumbent=incumbent.name,
             current_score=scored.score if verdict.accepted and target == "current" else st.current_score,
             best_score=scored.score if verdict.is_new_best else st.best_score, selection_hard=sj["selection_hard"],
             selection_soft=sj["selection_soft"], decided_by=rule.get("decided_by"), p_value=rule.get("p_value"),
             reason=rule.get("reason"), n_scored=scored.n_scored, n_items=scored.n_items,
             **({"guard_waived": rule["guard_waived"]} if rule.get("guard_waived") else {}),
             **({"early_stop": True, "candidate_score_upper_bound": scored.score} if verdict.upper_bound else {}))
    st.judgements.append({"step": step, "epoch": epoch, "origin": origin, "action": action, "target": target,
                          "score": sj["gate_score"], "score_before": incumbent.score,
                          "decided_by": rule.get("decided_by"), "p_value": rule.get("p_value"),
                          **({"guard_waived": rule["guard_waived"]} if rule.get("guard_waived") else {}),
                          **({"score_upper_bound": scored.score, "n_scored": scored.n_scored,
                              "n_items": scored.n_items} if verdict.upper_bound else {})})
    if apply:
        adopt(ctx, verdict, candidate, step)
    return verdict


def _excuses(ctx: RunContext, incumbent: str) -> bool:
    """The incumbent's own selection replies were named degenerate and that was not waived: replies like that are
    the environment's from the start, not a candidate's doing. A waived incumbent (a gold few-shot start) is the
    baseline, not the optimizer's standard: a candidate against it must pass the guard itself."""
    h = skill_hash(incumbent)
    return bool(ctx.state.sel_degenerate.get(h)) and h not in ctx.state.guard_waived


async def _new_best(ctx: RunContext, folder: str, action: str, target: Target, incumbent: Incumbent, candidate: str,
                    score: float, force: bool, rule: dict[str, Any]) -> bool:
    """Whether an accepted candidate is the new best: it passed the gate's tests against the best skill. A forced
    candidate (slow update, appendix notes) never is; the promotion waits for it. Against a current skill below
    the best (after a forced update), the candidate must pass the same tests against the best too (`rule`
    gets their record under `vs_best`), so a forced update never lowers the bar for the best."""
    st = ctx.state
    if action == "force_accept":
        return not force and score > st.best_score  # the gate turned off (use_gate: false): strict only
    if action != "accept":
        return False
    if target == "best" or incumbent.skill == st.best_skill:
        return True  # the tests it passed were against the best skill
    if not score > st.best_score:
        return False
    if not ctx.cfg.evaluation.use_gate:
        return True
    passed, rule["vs_best"] = await statistical_test(ctx, f"{folder}/vs_best", st.best_skill, candidate)
    return passed


def adopt(ctx: RunContext, verdict: Verdict, candidate: str, step: int) -> None:
    """Apply a verdict: an accepted candidate becomes current (target current) or best (target best)."""
    st = ctx.state
    if verdict.accepted and verdict.rule.get("guard_waived"):  # it may now be an incumbent: it excuses nothing
        st.guard_waived[skill_hash(candidate)] = str(verdict.rule["guard_waived"])
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
