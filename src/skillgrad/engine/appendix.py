"""Skill-aware reflection's APPENDIX: the execution-lapse notes the analysts report go into the current skill's
appendix unvalidated (SkillOpt's behaviour), consolidated by the teacher past a threshold, and the changed
skill is force-accepted through the candidate pipeline so it carries its own measured score.
"""

from __future__ import annotations

from typing import Any

from skillgrad.engine.candidate import judge_candidate
from skillgrad.engine.context import RunContext
from skillgrad.engine.schemas import AppendixConsolidation
from skillgrad.skill import add_appendix_notes, appendix_notes, replace_appendix_notes


async def flush_appendix(ctx: RunContext, d: str, record: dict[str, Any], notes: list[str]) -> None:
    """Skill-aware reflection: execution-lapse notes go into the APPENDIX of current (unvalidated)."""
    st = ctx.state
    before = st.current_skill
    cand, added = add_appendix_notes(st.current_skill, notes)
    all_notes = appendix_notes(cand)
    consolidated = 0
    thr = ctx.cfg.optimizer.skill_aware_consolidate_threshold
    if thr and len(all_notes) > thr:
        reply = await ctx.teacher.ask("appendix_consolidate", AppendixConsolidation, stage="appendix",
                                      values={"notes": "\n".join(f"- {n}" for n in all_notes)})
        if reply.parsed is not None:
            new = [n for n in reply.parsed.appendix_notes if n.strip()]  # type: ignore[attr-defined]
            if new and len(new) < len(all_notes):
                cand = replace_appendix_notes(cand, new)
                consolidated = len(all_notes) - len(new)
    if cand != before:  # unvalidated (SkillOpt): forced into current, with its own score, never the old one's
        v = await judge_candidate(ctx, cand, f"appendix_step_{record['step']:04d}", folder=d,
                                  eval_rel=f"{d}/appendix_eval", stage="appendix", step=record["step"],
                                  epoch=record["epoch"], force=True)
        record.update(appendix_rescore={"selection_hard": v.hard, "selection_soft": v.soft,
                                        "gate_score": v.score, "action": v.action})
    ctx.store.write_json(f"{d}/appendix_notes.json", {"proposed": notes, "added": added,
                                                        "consolidated": consolidated})
    record.update(n_execution_lapse_notes=len(notes), n_appendix_notes_added=len(added),
                  n_appendix_notes_total=len(appendix_notes(st.current_skill)),
                  n_appendix_notes_consolidated=consolidated)
