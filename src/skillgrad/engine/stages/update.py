"""Update: turn the selected items into a candidate skill.

patch: string edits with an apply report. rewrite_from_suggestions: one teacher rewrite call.
full_rewrite_minibatch: the first merged candidate document. In both rewrite modes the protected
regions are restored in code afterwards (SkillOpt leaves that to the prompt).

With a Goodhart guard (engine/goodhart.py), an edit that copies checker or prompt text is refused
(`refused_checker_text` in the apply report; a rewrite that adds such text yields no candidate) unless
`allow_checker_text` lets it through, flagged. A worked example of a task whose reply carries that task's own
answer (`own_answers`) is the task's gold, verified on it, not a copy: only the other tasks' checker texts guard it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from skillgrad.engine.goodhart import (
    Guard,
    checker_text_hits,
    checker_texts_of_items,
    fixed_texts_of_items,
    says_nothing,
)
from skillgrad.engine.modes import UpdateMode
from skillgrad.engine.prompts import PromptLibrary, template_texts
from skillgrad.engine.schemas import skill_document_model
from skillgrad.engine.teacher import TeacherCall
from skillgrad.envs.base import GOLD_IS_CHECKER, contract_of
from skillgrad.skill import Edit, apply_edits, restore_regions
from skillgrad.skill.parse_back import parse_back


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


def guard_for(items: Iterable[Any], prompts: PromptLibrary, env: Any = None) -> Guard:
    """The Goodhart guard of a run: the checkers of the items the teacher can see (train and validation, never
    the sealed test split), as `env`'s reply contracts state them, and the fixed text of the teacher's prompts."""
    items = list(items)
    texts, regexes = checker_texts_of_items(items, lambda it: contract_of(env, it))
    return Guard.build(checker_texts=texts, regexes=regexes, prompt_texts=template_texts(prompts),
                       fixed_texts=fixed_texts_of_items(items, lambda it: contract_of(env, it)))


def own_answers(items: Iterable[Any], env: Any = None) -> dict[str, tuple[str, ...]]:
    """Item id -> the task's own answers that the guard holds as checker text (its gold, or its reply contract's gold
    values), less any that is another task's checker text too: quoting that one passes the other task's checks.
    A skill folder states no contract, so each eval's expected output is checker text for every other task."""
    items = list(items)
    per = {it.id: set(checker_texts_of_items([it], lambda x: contract_of(env, x))[0]) for it in items}
    seen = Counter(t for texts in per.values() for t in texts)
    out: dict[str, tuple[str, ...]] = {}
    for it in items:
        c = contract_of(env, it)
        golds = c.gold if c is not None else (it.gold,) if isinstance(it.gold, str) else ()
        if (getattr(it, "meta", None) or {}).get(GOLD_IS_CHECKER):
            continue  # a rubric as gold: the checker's words, never an answer
        own = tuple(g for g in golds if g in per[it.id] and seen[g] == 1)
        if own:
            out[it.id] = own
    return out


def _example_task(item: dict[str, Any]) -> str:
    """The task a worked example was verified on (the demonstrate stage names it), or ''."""
    demo = item.get("demonstration")
    return str(demo.get("item_id") or "") if item.get("op") == "example" and isinstance(demo, dict) else ""


def _guard_edits(selected: list[dict[str, Any]], guard: Guard | None, allow: bool,
                 own: dict[str, tuple[str, ...]] | None = None) -> tuple[list[Edit], list[dict[str, Any]]]:
    """(edits to apply, outcomes of the refused ones). Allowed copies are applied and flagged in `checker_text`.
    A worked example is guarded without its own task's answers (`own`: own_answers)."""
    kept: list[Edit] = []
    refused: list[dict[str, Any]] = []
    for i, (item, e) in enumerate(zip(selected, [_edit(it) for it in selected], strict=True)):
        # a rule that says nothing (`1.0.2.3.4`, `N/A`) can only enter the skill on validation noise: the facts demo
        # accepted such a line when one more validation answer came out right
        if e.op not in ("example", "delete", "delete_example") and e.content.strip() and \
                (junk := says_nothing(e.content)):
            refused.append({"index": i, "op": e.op, "status": "refused_no_content", "detail": junk, "match": None,
                            "content": e.content, "target": e.target})
            continue
        task = _example_task(item)
        mine = guard if guard is None or not task or not own else guard.without_checker(own.get(task, ()))
        hits = checker_text_hits(e.content, mine) if mine is not None else []
        if hits and not allow:
            refused.append({"index": i, "op": e.op, "status": "refused_checker_text", "detail": "; ".join(hits),
                            "match": None, "content": e.content, "target": e.target})
            continue
        if hits:
            e = e.model_copy(update={"rationale": f"checker_text: {'; '.join(hits)}"})
        kept.append(e)
    return kept, refused


def _added_text(old: str, new: str) -> str:
    before = set(old.splitlines())
    return "\n".join(line for line in new.splitlines() if line not in before)


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
    guard: Guard | None = None,
    allow_checker_text: bool = False,
    own: dict[str, tuple[str, ...]] | None = None,
) -> UpdateResult:
    if mode.update_kind == "apply_edits":
        if not selected:
            return UpdateResult(candidate=None, report={"total": 0, "applied": 0, "skipped": 0, "errors": 0,
                                                        "outcomes": []})
        edits, refused = _guard_edits(selected, guard, allow_checker_text, own)
        new_text, report = apply_edits(skill, edits, lenient_anchors=lenient_anchors)
        rep = report.to_json()
        for o, e in zip(rep.get("outcomes", []), edits, strict=False):
            o.setdefault("content", e.content)
            o.setdefault("target", e.target)
            if e.rationale.startswith("checker_text: "):
                o["checker_text"] = e.rationale.removeprefix("checker_text: ")
        if refused:
            rep["outcomes"] = refused + rep.get("outcomes", [])
            rep["total"] = rep.get("total", 0) + len(refused)
            rep["skipped"] = rep.get("skipped", 0) + len(refused)
        rep["refused_checker_text"] = sum(r["status"] == "refused_checker_text" for r in refused)
        rep["refused_no_content"] = sum(r["status"] == "refused_no_content" for r in refused)
        return UpdateResult(candidate=new_text if report.applied else None, report=rep)
    if mode.update_kind == "take_document":
        doc = next((it for it in selected if it.get("new_skill", "").strip()), None)
        if doc is None:
            return UpdateResult(candidate=None, rewrite={"error": "no candidate document"})
        hits = checker_text_hits(_added_text(skill, doc["new_skill"]), guard) if guard else []
        if hits and not allow_checker_text:
            return UpdateResult(candidate=None, rewrite={**doc, "status": "refused_checker_text", "detail": hits},
                                report={"refused_checker_text": 1})
        return _read_back(skill, restore_regions(skill, doc["new_skill"]), dict(doc))
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
    hits = checker_text_hits(_added_text(skill, new_skill), guard) if guard else []
    if hits and not allow_checker_text:
        return UpdateResult(candidate=None, rewrite={**reply.to_json(), "status": "refused_checker_text",
                                                     "detail": hits}, report={"refused_checker_text": 1})
    return _read_back(skill, restore_regions(skill, new_skill), reply.to_json())


def _read_back(skill: str, candidate: str, rewrite: dict[str, Any]) -> UpdateResult:
    """A rewritten document as the skill's parser reads it (skill/parse_back.py): repaired, or refused with the
    reason when its worked examples would be cut or misread."""
    read, note = parse_back(skill, candidate)
    if read is None:
        return UpdateResult(candidate=None, rewrite={**rewrite, "status": "skipped_misparsed", "detail": note})
    return UpdateResult(candidate=read, rewrite={**rewrite, **({"parse_back": note} if note else {})})
