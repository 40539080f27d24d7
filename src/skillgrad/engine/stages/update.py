"""Update: turn the selected items into a candidate skill.

patch: string edits with an apply report. rewrite_from_suggestions: one teacher rewrite call.
full_rewrite_minibatch: the first merged candidate document. In both rewrite modes the protected
regions are restored in code afterwards (SkillOpt leaves that to the prompt).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from skillgrad.engine.modes import UpdateMode
from skillgrad.engine.schemas import skill_document_model
from skillgrad.engine.teacher import TeacherCall
from skillgrad.skill import Edit, apply_edits, restore_regions


@dataclass
class UpdateResult:
    candidate: str | None  # None: nothing to apply / rewrite produced nothing
    report: dict[str, Any] = field(default_factory=dict)
    rewrite: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> UpdateResult:
        return cls(**d)


def _edit(item: dict[str, Any]) -> Edit:
    known = {k: item[k] for k in ("op", "target", "content", "support_count", "source_type", "merge_level",
                                  "failure_kind") if k in item}
    return Edit(**known)


async def update(
    skill: str,
    selected: list[dict[str, Any]],
    teacher: TeacherCall,
    *,
    mode: UpdateMode,
    lenient_anchors: bool = False,
    buffer_text: str = "",
    max_skill_chars: int = 20000,
    rewrite_max_tokens: int | None = None,
    rewrite_reasoning_effort: str = "",
) -> UpdateResult:
    if mode.name == "patch":
        if not selected:
            return UpdateResult(candidate=None, report={"total": 0, "applied": 0, "skipped": 0, "errors": 0,
                                                        "outcomes": []})
        edits = [_edit(it) for it in selected]
        new_text, report = apply_edits(skill, edits, lenient_anchors=lenient_anchors)
        rep = report.to_json()
        for o, e in zip(rep.get("outcomes", []), edits, strict=False):
            o.setdefault("content", e.content)
            o.setdefault("target", e.target)
        return UpdateResult(candidate=new_text if report.applied else None, report=rep)
    if mode.name == "full_rewrite_minibatch":
        doc = next((it for it in selected if it.get("new_skill", "").strip()), None)
        if doc is None:
            return UpdateResult(candidate=None, rewrite={"error": "no candidate document"})
        return UpdateResult(candidate=restore_regions(skill, doc["new_skill"]), rewrite=dict(doc))
    if not selected:
        return UpdateResult(candidate=None, rewrite={"error": "no suggestions selected"})
    reply = await teacher.ask(
        "rewrite_skill", skill_document_model(max_skill_chars), stage="update",
        values={"skill": skill, "buffer": f"\n{buffer_text}\n" if buffer_text else "",
                "suggestions": json.dumps(selected, ensure_ascii=False, indent=1)},
        max_tokens=rewrite_max_tokens,
        extra={"reasoning_effort": rewrite_reasoning_effort} if rewrite_reasoning_effort else None,
    )
    if reply.parsed is None:
        return UpdateResult(candidate=None, rewrite=reply.to_json())
    new_skill = reply.parsed.new_skill  # type: ignore[attr-defined]
    return UpdateResult(candidate=restore_regions(skill, new_skill), rewrite=reply.to_json())
