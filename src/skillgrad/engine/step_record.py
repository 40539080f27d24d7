"""The end of one step: its buffer entry, appendix notes, step record, history and checkpoint.

Written once a step's action is known (skipped, accepted, rejected, blocked); after it the step counts as done
and a resumed run starts at the next.
"""

from __future__ import annotations

import time
from typing import Any

from skillgrad.engine.appendix import flush_appendix
from skillgrad.engine.buffer import BufferEntry, failure_patterns, summarize_edit
from skillgrad.engine.context import RunContext
from skillgrad.engine.refusals import candidate_replies, gate_reason, refused_edits
from skillgrad.engine.stages.rollout import RolloutResult


async def finish_step(ctx: RunContext, g: int, epoch: int, action: str, record: dict[str, Any], ro: RolloutResult,
                      analyst_summaries: list[dict[str, Any]], selected: list[dict[str, Any]],
                      cand_score: float | None, notes: list[str], t_start: float) -> None:
    st, d = ctx.state, f"steps/step_{g:04d}"
    patterns = failure_patterns([(t.item_id, t.fail_reason or "failed") for t in ro.trajectories if t.failed],
                                analyst_summaries)
    entry = BufferEntry(step=g, epoch=epoch, action=action, n_total=ro.n, n_fail=ro.n_fail,
                        failure_patterns=patterns)
    if "reject" in action or action == "blocked":
        entry.rejected_edits = [summarize_edit(i) for i in selected]
        entry.score_before, entry.score_after = record.get("score_before"), cand_score
        entry.score_after_max = record.get("candidate_gate_score_upper_bound")  # the gate stopped early
        entry.reason = gate_reason(action, record.get("gate_rule"))
        entry.replies = candidate_replies(ctx.store, d)
    entry.untried = str(record.get("rules_untried") or "")
    entry.refused_edits = refused_edits(ctx.store.read_json(f"{d}/edit_apply_report.json", default=None))
    ctx.buffer.add(entry)
    ctx.store.write_json(f"{d}/trajectory_digest.json", entry.model_dump(mode="json"))
    if notes and ctx.cfg.optimizer.use_skill_aware_reflection:
        await flush_appendix(ctx, d, record, notes)
    if action.startswith("skip"):
        ctx.emit("step_skipped", step=g, epoch=epoch, action=action)
    record.update(action=action, current_score=st.current_score, best_score=st.best_score,
                  best_step=st.best_step, current_origin=st.current_origin, best_origin=st.best_origin,
                  skill_len=len(st.current_skill), timing={k: round(v, 3) for k, v in ctx.timing.items()},
                  wall_time_s=round(time.monotonic() - t_start, 3))
    ctx.history = [h for h in ctx.history if h.get("step") != g] + [record]
    ctx.store.write_json(f"{d}/step_record.json", record)
    ctx.store.write_json("history.json", ctx.history)
    ctx.store.save_skill_version(g, st.current_skill)
    ctx.store.write_text("best_skill.md", st.best_skill)
    st.last_completed_step = g
    ctx.save_state()
