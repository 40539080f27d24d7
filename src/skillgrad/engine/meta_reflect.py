"""Meta reflect (`optimizer.use_meta_reflect`): an epoch-end review of the epoch's steps.

The per-step loop fixes what one batch showed; it adds rules one case at a time and never looks
back. At epoch end the teacher sees every step of the epoch (what it tried, whether the gate took
it, scores before and after, the failures it saw) and proposes a few higher-level edits (merge
duplicate rules, drop rules that did not help, generalise repeated fixes). The edits are applied
with the skill's ordinary edit functions to a *meta candidate*, which passes the same gate as a
step (engine/candidate.py). A short `meta_summary` carries over to the next epoch's review.

Files under `meta_reflect/epoch_EE/`: `meta_reflect_result.json` (the teacher's reply, items,
apply report, summary: the checkpoint), `candidate_skill.md`, `edit_apply_report.json`,
`selection_eval/`, `gate_result.json`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skillgrad.engine.buffer import BufferEntry, summarize_edit
from skillgrad.engine.candidate import judge_candidate
from skillgrad.engine.goodhart import Guard
from skillgrad.engine.modes import MODES
from skillgrad.engine.schemas import meta_reflect_model
from skillgrad.engine.stages.update import guard_for, update
from skillgrad.engine.teacher import TeacherCall
from skillgrad.skill import skill_hash

if TYPE_CHECKING:
    from skillgrad.engine.context import RunContext


def step_blocks(records: list[dict[str, Any]], selected: dict[int, list[dict[str, Any]]],
                entries: list[BufferEntry]) -> list[str]:
    """One evidence block per step of the epoch, oldest first."""
    by_step = {e.step: e for e in entries}
    blocks = []
    for r in sorted(records, key=lambda r: int(r["step"])):
        g = int(r["step"])
        action = str(r.get("action", "?"))
        before, after = r.get("score_before"), r.get("candidate_gate_score")
        cap = r.get("candidate_gate_score_upper_bound")  # the gate stopped scoring it early (engine/gate/early.py)
        scores = f"; gate {before:.3f} -> {after:.3f}" if isinstance(before, float | int) and isinstance(
            after, float | int) else f"; gate {before:.3f} -> at most {cap:.3f}" if isinstance(
            before, float | int) and isinstance(cap, float | int) else ""
        lines = [f"### Step {g}: {action.upper()}{scores} (batch: {r.get('rollout_n', '?')} tasks, "
                 f"hard {float(r.get('rollout_hard') or 0):.2f})"]
        tried = selected.get(g, [])
        if tried:
            verb = "Kept" if "accept" in action else "Tried"
            lines.append(f"{verb} edits:")
            lines.extend(f"- {summarize_edit(it)}" for it in tried)
        e = by_step.get(g)
        if e is not None and e.failure_patterns:
            lines.append(f"Failures ({e.n_fail}/{e.n_total}):")
            lines.extend(f"- {p.label} ({p.count}x)" for p in e.failure_patterns[:4])
        blocks.append("\n".join(lines))
    return blocks


@dataclass
class MetaReflectResult:
    items: list[dict[str, Any]]
    candidate: str | None
    report: dict[str, Any] = field(default_factory=dict)
    meta_summary: str = ""
    reply: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> MetaReflectResult:
        return cls(**d)


async def propose(skill: str, blocks: list[str], teacher: TeacherCall, *, budget: int, max_chars: int,
                  prev_summary: str, lenient_anchors: bool = False, guard: Guard | None = None,
                  allow_checker_text: bool = False) -> MetaReflectResult:
    """One teacher call over the epoch's steps, then the proposed edits applied to a meta candidate, through the
    same Goodhart guard as a step's edits (an edit copying checker or prompt text is refused, not applied)."""
    reply = await teacher.ask(
        "meta_reflect", meta_reflect_model(budget, max_chars), stage="meta_reflect",
        values={"skill": skill, "budget": budget, "prev_summary": prev_summary or "(first review)"},
        evidence_key="steps", evidence=blocks,
    )
    if reply.parsed is None:
        return MetaReflectResult(items=[], candidate=None, reply=reply.to_json())
    data = reply.parsed.model_dump()
    items = [dict(x, source_type="failure", support_count=1) for x in data.get("edits", [])][: max(budget, 0)]
    upd = await update(skill, items, teacher, mode=MODES["patch"], lenient_anchors=lenient_anchors, guard=guard,
                       allow_checker_text=allow_checker_text)
    cand = upd.candidate if upd.candidate != skill else None
    return MetaReflectResult(items=items, candidate=cand, report=upd.report,
                             meta_summary=str(data.get("meta_summary") or "").strip(), reply=reply.to_json())


async def run_meta_reflect(ctx: RunContext, epoch: int) -> None:
    """The epoch-end stage: propose (checkpointed), write the candidate, judge it like a step."""
    st, opt = ctx.state, ctx.cfg.optimizer
    base = f"meta_reflect/epoch_{epoch:02d}"
    records = [h for h in ctx.history if int(h.get("epoch", 0)) == epoch]
    selected = {}
    for r in records:
        ranked = ctx.store.read_json(f"steps/step_{int(r['step']):04d}/ranked_edits.json") or {}
        selected[int(r["step"])] = list(ranked.get("selected") or [])
    entries = [e for e in ctx.buffer.entries if e.epoch == epoch]
    prev = ctx.store.read_json(f"meta_reflect/epoch_{epoch - 1:02d}/meta_reflect_result.json") or {}
    skill = st.current_skill

    async def compute() -> MetaReflectResult:
        return await propose(skill, step_blocks(records, selected, entries), ctx.teacher,
                             budget=max(opt.learning_rate, 1), max_chars=ctx.cfg.gradient.max_edit_chars,
                             prev_summary=str(prev.get("meta_summary") or ""), lenient_anchors=opt.lenient_anchors,
                             guard=guard_for([*ctx.splits.train, *ctx.splits.val], ctx.teacher.prompts, ctx.env),
                             allow_checker_text=ctx.cfg.evaluation.allow_checker_text)

    res = await ctx.checkpointed(
        "meta_reflect", st.last_completed_step, epoch, f"{base}/meta_reflect_result.json", compute,
        MetaReflectResult.from_json, lambda r: r.to_json(),
        lambda r: {"items": len(r.items), "applied": r.report.get("applied", 0), "candidate": r.candidate is not None})
    if res.report:
        ctx.store.write_json(f"{base}/edit_apply_report.json", res.report)
    if not res.reply.get("ok"):
        ctx.emit("teacher_output_rejected", stage="meta_reflect", step=st.last_completed_step, epoch=epoch,
                reason=res.reply.get("error"), file=f"{base}/meta_reflect_result.json")
    if res.candidate is None:
        action = "skip_no_edits"
        ctx.store.write_json(f"{base}/gate_result.json", {"action": action, "n_items": len(res.items)})
        ctx.emit("meta_reflect", epoch=epoch, action=action)
        return
    cand = res.candidate
    ctx.store.write_text(f"{base}/candidate_skill.md", cand)
    v = await judge_candidate(ctx, cand, f"meta_reflect_epoch_{epoch:02d}", folder=base, stage="meta_reflect",
                              step=st.last_completed_step, epoch=epoch)
    ctx.store.write_json(f"{base}/gate_result.json", {
        "action": v.action, "origin": v.origin, **v.scores_json(), "score_before": v.score_before,
        "best_before": v.best_before, "rule": v.rule,
        "candidate_hash": skill_hash(cand), "n_items": len(res.items), "applied": res.report.get("applied", 0)})
