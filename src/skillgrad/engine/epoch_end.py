"""Epoch-end stages besides meta reflect: the slow update (a SLOW_UPDATE block written from comparing the
previous and the current epoch-end skill on the same train items) and the meta skill (the optimizer's own
notes for the next epoch's analysts). Both read and write only through the run context.
"""

from __future__ import annotations

import random
from typing import Any

from skillgrad.engine.candidate import judge_candidate
from skillgrad.engine.context import RunContext
from skillgrad.engine.epoch import Pair, filter_pairs, make_pairs, meta_skill_memory, slow_update_guidance
from skillgrad.engine.goodhart import junk_text
from skillgrad.engine.stages.update import guard_for
from skillgrad.skill import get_region, set_region, skill_hash


async def comparison_pairs(ctx: RunContext, epoch: int, prev_skill: str, curr_skill: str, kind: str) -> list[Pair]:
    """Train items run with the previous and the current epoch-end skill, paired (`longitudinal_pair_policy`)."""
    opt = ctx.cfg.optimizer
    base = f"{kind}/epoch_{epoch:02d}"
    pool = list(ctx.splits.train)
    random.Random(ctx.cfg.train.seed + epoch * 2000).shuffle(pool)
    n = min(opt.slow_update_samples, len(pool))
    items = pool[:n]
    prev = await ctx.run_items(f"{base}/rollout_prev", items, prev_skill, stage=kind, train=False)
    curr = await ctx.run_items(f"{base}/rollout_curr", items, curr_skill, stage=kind, train=False)
    pairs = make_pairs(prev.trajectories, curr.trajectories)
    if opt.longitudinal_pair_policy == "changed":
        rest = pool[n:]
        while len(filter_pairs(pairs, "changed")) < opt.slow_update_samples and rest:
            need = opt.slow_update_samples - len(filter_pairs(pairs, "changed"))
            chunk, rest = rest[:need], rest[need:]
            p2 = await ctx.run_items(f"{base}/topup_prev", chunk, prev_skill, stage=kind, train=False)
            c2 = await ctx.run_items(f"{base}/topup_curr", chunk, curr_skill, stage=kind, train=False)
            pairs += make_pairs(p2.trajectories, c2.trajectories)
    kept = filter_pairs(pairs, opt.longitudinal_pair_policy)
    ctx.store.write_json(f"{base}/comparison_pairs.json", [p.to_json() for p in kept])
    if len(kept) != len(pairs):
        ctx.store.write_json(f"{base}/comparison_pairs_all.json", [p.to_json() for p in pairs])
    return kept

async def slow_update_stage(ctx: RunContext, epoch: int, prev_skill: str | None) -> list[Pair] | None:
    """The SLOW_UPDATE block from comparing two epochs, judged (or forced into current) as a candidate."""
    st, opt = ctx.state, ctx.cfg.optimizer
    base = f"slow_update/epoch_{epoch:02d}"
    if prev_skill is None:  # epoch 1: an empty placeholder block, re-scored (never a made-up score)
        result = ctx.store.read_json(f"{base}/slow_result.json") or {"action": "placeholder",
                                                                      "slow_update_content": ""}
        ctx.store.write_json(f"{base}/slow_result.json", result)
        await judge_candidate(ctx, set_region(st.current_skill, "SLOW_UPDATE", ""),
                              f"slow_update_placeholder_epoch_{epoch:02d}", folder=base, stage="slow_update",
                              step=st.last_completed_step, epoch=epoch, force=True)
        return None

    async def compute() -> dict[str, Any]:
        pairs = await comparison_pairs(ctx, epoch, prev_skill, st.current_skill, "slow_update")
        text = await slow_update_guidance(ctx.teacher, pairs, prev_skill, st.current_skill,
                                          get_region(st.current_skill, "SLOW_UPDATE") or "",
                                          max_chars=max(ctx.cfg.gradient.max_edit_chars * 3, 600))
        return {"slow_update_content": text.content, "counts": text.counts, "reply": text.reply,
                "pairs": [p.to_json() for p in pairs]}

    result = await ctx.checkpointed("slow_update", st.last_completed_step, epoch, f"{base}/slow_result.json",
                                         compute, lambda d: d, lambda d: d)
    pairs = [Pair.from_json(p) for p in result.get("pairs", [])]
    content = result.get("slow_update_content")
    if not content:
        ctx.emit("slow_update", epoch=epoch, action="no_content")
        return pairs
    # `"..."`, a bare timestamp or a copy of checker text must not be force-accepted into the skill
    junk = junk_text(content, guard_for([*ctx.splits.train, *ctx.splits.val], ctx.teacher.prompts, ctx.env))
    if junk:
        ctx.emit("slow_update", epoch=epoch, action="refused_junk", reason=junk)
        ctx.store.write_json(f"{base}/slow_action.json", {"action": "refused_junk", "reason": junk})
        return pairs
    cand = set_region(st.current_skill, "SLOW_UPDATE", content)
    ctx.store.write_text(f"{base}/candidate_skill.md", cand)
    # gated like a step, or (SkillOpt's default) force-accepted into current with its real score
    v = await judge_candidate(ctx, cand, f"slow_update_epoch_{epoch:02d}", folder=base, stage="slow_update",
                              step=st.last_completed_step, epoch=epoch,
                              force=not opt.slow_update_gate_with_selection)
    ctx.store.write_json(f"{base}/slow_action.json", {
        "action": v.action, "origin": v.origin, **v.scores_json(), "score_before": v.score_before, "rule": v.rule,
        "candidate_hash": skill_hash(cand)})
    return pairs

async def meta_skill_stage(ctx: RunContext, epoch: int, prev_skill: str | None, epoch_last_skill: str,
                       pairs: list[Pair] | None, *, last: bool = False) -> None:
    """The optimizer's meta skill: what the teacher learns about editing, shown to the next epoch's analysts. Not
    asked after the last epoch (`last`): no step follows to use its answer (issue 31: a capable teacher answered a
    meta-skill prompt after the last step, for nothing)."""
    base = f"meta_skill/epoch_{epoch:02d}"
    if prev_skill is None or last:
        action = "skip_first_epoch" if prev_skill is None else "skip_last_epoch"
        ctx.store.write_json(f"{base}/meta_skill_result.json", {"action": action})
        if last:
            ctx.emit("meta_skill", epoch=epoch, action=action, reason="no step follows to use its answer")
        return

    async def compute() -> dict[str, Any]:
        ps = pairs if pairs is not None else await comparison_pairs(ctx, epoch, prev_skill, epoch_last_skill,
                                                               "meta_skill")
        text = await meta_skill_memory(ctx.teacher, ps, prev_skill, epoch_last_skill, ctx.state.meta_skill,
                                       max_chars=max(ctx.cfg.gradient.max_edit_chars * 3, 600))
        return {"action": "updated" if text.content else "no_content", "meta_skill_content": text.content,
                "reply": text.reply}

    result = await ctx.checkpointed("meta_skill", ctx.state.last_completed_step, epoch,
                                         f"{base}/meta_skill_result.json", compute, lambda d: d, lambda d: d)
    if result.get("meta_skill_content"):
        ctx.state.meta_skill = result["meta_skill_content"]


async def epoch_end(ctx: RunContext, epoch: int, *, ignores_rules: bool, last: bool = False) -> None:
    """The epoch-end stages: meta reflect, slow update (not for a student the probe saw ignore rules:
    engine/proposers/sources.py), meta skill (not after the `last` epoch); the epoch's skill is kept."""
    opt, st = ctx.cfg.optimizer, ctx.state
    if opt.use_meta_reflect:  # review the epoch's steps; a gated higher-level edit of the skill
        from skillgrad.engine.meta_reflect import run_meta_reflect

        await run_meta_reflect(ctx, epoch)
    epoch_last_skill = st.current_skill
    prev_skill = st.epoch_end_skills.get(str(epoch - 1))
    pairs: list[Pair] | None = None
    if opt.use_slow_update and ignores_rules:
        # a block of rules for a student measured to ignore rules: in the suite runs it was force-accepted at
        # a lower validation score (push-length 1.0 -> 0.83) or blocked, at two teacher-minutes an epoch
        ctx.emit("slow_update", epoch=epoch, action="skipped",
                 reason="the student probe measured a student that follows examples, not stated rules")
    elif opt.use_slow_update:
        pairs = await slow_update_stage(ctx, epoch, prev_skill)
    if opt.use_meta_skill:
        await meta_skill_stage(ctx, epoch, prev_skill, epoch_last_skill, pairs, last=last)
    st.epoch_end_skills[str(epoch)] = st.current_skill
    st.epochs_done.append(epoch)
    ctx.store.save_skill_version(st.last_completed_step, st.current_skill)
    ctx.store.write_text("best_skill.md", st.best_skill)
    ctx.save_state()
