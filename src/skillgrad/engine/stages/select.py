"""Select: cap the merged pool at the step's edit budget (the learning rate).

The budget comes from the schedule, or from one teacher call in autonomous mode (a decision of 0
applies 0 edits; SkillOpt lets one slip through). The ranking call is made only when the pool
exceeds the budget; a failed ranking keeps the first `budget` items.

Verified demonstrations (worked examples, `source_type: "demonstration"`, engine/proposers/) are
never ranked by the teacher: those marked `first` (the student follows examples) take budget slots ahead of
the rules, the others fill the slots the rules leave free. Rewrite modes take none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skillgrad.engine.buffer import summarize_edit
from skillgrad.engine.modes import UpdateMode
from skillgrad.engine.schemas import LearningRateDecision, Ranking
from skillgrad.engine.teacher import TeacherCall


@dataclass
class SelectResult:
    selected: list[dict[str, Any]]
    budget: int | None
    ranked: bool = False
    fallback: str | None = None
    ranking_details: dict[str, Any] = field(default_factory=dict)
    lr_decision: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SelectResult:
        return cls(**d)


def render_pool(items: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"[{i}] ({it.get('source_type', '?')}, support={it.get('support_count', 1)}) {summarize_edit(it)}"
        for i, it in enumerate(items)
    )


async def decide_autonomous_budget(
    items: list[dict[str, Any]], skill: str, teacher: TeacherCall, *, rollout_n: int, rollout_hard: float,
    rollout_soft: float, buffer_text: str, meta_text: str,
) -> dict[str, Any]:
    reply = await teacher.ask(
        "lr_autonomous", LearningRateDecision, stage="select",
        values={"skill": skill, "rollout_n": rollout_n, "rollout_hard": f"{rollout_hard:.3f}",
                "rollout_soft": f"{rollout_soft:.3f}", "n_items": len(items),
                "buffer": f"\n{buffer_text}\n" if buffer_text else "",
                "meta": f"## Optimizer meta skill\n{meta_text}\n\n" if meta_text else ""},
        evidence_key="pool", evidence=[render_pool(items)],
    )
    if reply.parsed is None:
        # an unparseable decision applies nothing rather than guessing a size
        return {"learning_rate": 0, "parsed": False, "reply": reply.to_json()}
    lr = max(0, min(int(reply.parsed.learning_rate), len(items)))  # type: ignore[attr-defined]
    return {"learning_rate": lr, "parsed": True, "reply": reply.to_json()}


async def select(
    items: list[dict[str, Any]],
    skill: str,
    teacher: TeacherCall,
    *,
    mode: UpdateMode,
    budget: int | None,
    meta_text: str = "",
    buffer_text: str = "",
    lr_decision: dict[str, Any] | None = None,
) -> SelectResult:
    demos = [it for it in items if it.get("source_type") == "demonstration"]
    items = [it for it in items if it.get("source_type") != "demonstration"]
    if demos and budget is not None and mode.ranking_template is not None:
        first = [d for d in demos if d.get("first")][:max(budget, 0)]
        res = await select(items, skill, teacher, mode=mode, budget=max(budget, 0) - len(first), meta_text=meta_text,
                           buffer_text=buffer_text, lr_decision=lr_decision)
        later = [d for d in demos if not d.get("first")][:max(0, budget - len(first) - len(res.selected))]
        res.selected, res.budget = first + res.selected + later, budget
        return res
    if budget is None or mode.ranking_template is None:  # full rewrite: no budget, no ranking
        return SelectResult(selected=list(items), budget=None, lr_decision=lr_decision)
    if budget <= 0:
        return SelectResult(selected=[], budget=0, lr_decision=lr_decision)
    if len(items) <= budget:
        return SelectResult(selected=list(items), budget=budget, lr_decision=lr_decision)
    reply = await teacher.ask(
        mode.ranking_template, Ranking, stage="select",
        values={"skill": skill, "budget": budget,
                "meta": f"## Optimizer meta skill\n{meta_text}\n\n" if meta_text else "",
                "buffer": f"\n{buffer_text}\n" if buffer_text else ""},
        evidence_key="pool", evidence=[render_pool(items)],
    )
    chosen: list[int] = []
    if reply.parsed is not None:
        for i in reply.parsed.selected_indices:  # type: ignore[attr-defined]
            if 0 <= i < len(items) and i not in chosen:
                chosen.append(i)
            if len(chosen) >= budget:
                break
    fallback = None
    if not chosen:
        fallback = reply.error or "ranking selected no valid index"
        chosen = list(range(budget))
    return SelectResult(
        selected=[items[i] for i in chosen], budget=budget, ranked=True, fallback=fallback,
        ranking_details={"selected_indices": chosen, "reply": reply.to_json()}, lr_decision=lr_decision,
    )
