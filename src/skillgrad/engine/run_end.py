"""The run-end test stage: the one read of the (sealed) test split. Each distinct skill of initial, best, final
and the few-shot baseline (engine/baselines.py) is scored once on the test items; the per-item results give the
intervals (the gain over each baseline, paired) and the sample replies.
"""

from __future__ import annotations

from typing import Any

from skillgrad.core.gather import gather_all
from skillgrad.engine.baselines import fewshot_stage, fewshot_test_fields
from skillgrad.engine.context import RunContext
from skillgrad.engine.gate.intervals import final_test_intervals
from skillgrad.engine.goodhart import sample_replies
from skillgrad.engine.sealed import open_test
from skillgrad.engine.stages.rollout import RolloutResult
from skillgrad.envs.base import Item, Trajectory
from skillgrad.skill import skill_hash


async def _test_run(ctx: RunContext, rel: str, items: list[Item], skill: str, stage: str) -> RolloutResult:
    return await ctx.stage(stage, ctx.state.last_completed_step, 0,
                           lambda: ctx.run_items(rel, items, skill, stage=stage, train=False))


async def score_test_split(ctx: RunContext) -> tuple[dict[str, Any], Any, Any]:
    """(test results per skill name, their intervals, sample replies before/after); empty when not scored."""
    st, ev = ctx.state, ctx.cfg.evaluation
    tests: dict[str, Any] = {}
    per_item: dict[str, dict[str, float]] = {}
    replies: dict[str, list[Trajectory]] = {}
    if ev.eval_test and ctx.splits.test:
        test = open_test(ctx.splits)  # the only read of the sealed test split
        items = test[: ev.test_env_num] if ev.test_env_num else test
        runs = [("initial", "test_eval_baseline", st.initial_skill), ("best", "test_eval", st.best_skill),
                ("final", "test_eval_final", st.current_skill)]
        fs = await fewshot_stage(ctx) if ev.fewshot_baseline else None  # the zero-call baseline (engine/baselines.py)
        fewshot = fs.to_json() if fs is not None else None
        if fs is not None and fs.examples:
            runs.append(("fewshot", "test_eval_fewshot", fs.skill))
        seen: dict[str, dict[str, Any]] = {}
        first: dict[str, tuple[str, str, str]] = {}  # skill hash -> its first (name, rel, skill)
        for run in runs:
            first.setdefault(skill_hash(run[2]), run)
        # The distinct skills are scored together: a handoff student answers both in one round.
        scored = dict(zip(first, await gather_all(*(_test_run(ctx, rel, items, skill, f"test_{name}")
                                                        for name, rel, skill in first.values())), strict=True))
        for name, rel, skill in runs:
            h = skill_hash(skill)
            if h in seen:
                tests[name] = seen[h]
            else:
                res = scored[h]
                per_item[h] = {t.item_id: t.hard for t in res.scored}  # an error is no score (exec/pool.py)
                replies[h] = res.trajectories
                tests[name] = seen[h] = {"hard": res.hard, "soft": res.soft, "n": res.n,
                                         "n_env_errors": res.n_env_errors, "by_task_type": res.by_task_type()}
                ctx.store.write_json(f"{rel}/summary.json", tests[name])
            if name == "fewshot":  # how the baseline was built, beside its score
                tests[name] = {**tests[name], **fewshot_test_fields(fewshot)}
            ctx.emit("eval", split="test", skill=name, hard=tests[name]["hard"], soft=tests[name]["soft"],
                     n=tests[name]["n"])
            per_item[name] = per_item.get(h, {})
    intervals = final_test_intervals({k: v for k, v in per_item.items() if k in tests})
    samples = sample_replies(replies.get(skill_hash(st.initial_skill), []), replies.get(skill_hash(st.best_skill), []))
    return tests, intervals, samples


async def finish_run(ctx: RunContext) -> tuple[dict[str, Any], Any, Any]:
    """Run end: the last skill must beat the best one through the same gate to be promoted, every line of the best
    skill must earn its place (edit credit), then the test split is scored (`score_test_split`)."""
    from skillgrad.engine.candidate import judge_candidate
    from skillgrad.engine.credit import credit_best

    st = ctx.state
    if not st.finished:
        if skill_hash(st.current_skill) != skill_hash(st.best_skill):
            v = await ctx.stage("final_validation", st.last_completed_step, 0, lambda: judge_candidate(
                ctx, st.current_skill, st.current_origin, folder="final_selection_eval",
                eval_rel="final_selection_eval", stage="final_validation", step=st.last_completed_step, epoch=0,
                target="best"))
            ctx.emit("final_promotion", promoted=v.is_new_best, final_score=None if v.upper_bound else v.score,
                     **({"final_score_upper_bound": v.score} if v.upper_bound else {}), best_score=st.best_score,
                     origin=v.origin, decided_by=v.rule.get("decided_by"), p_value=v.rule.get("p_value"),
                     reason=v.rule.get("reason"))
        if ctx.cfg.evaluation.edit_credit:
            st.final_edit_credit = await credit_best(ctx)
        ctx.store.write_text("best_skill.md", st.best_skill)
        st.finished = True
        ctx.save_state()
    out = await score_test_split(ctx)
    ctx.save_state()
    return out
