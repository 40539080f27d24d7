"""Meta reflect applies its edits through the same Goodhart guard as a step (issue 17): an edit that copies the
checker's wording is refused and counted, a legitimate one is applied. The teacher is scripted: what is under test
is the plumbing from the epoch-end review into the guarded update, not what a model writes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from skillgrad.engine.goodhart import Guard, checker_texts_of_items
from skillgrad.engine.meta_reflect import propose
from skillgrad.engine.prompts import PromptLibrary
from skillgrad.engine.teacher import TeacherCall
from skillgrad.envs.tasks.contract import item_contract
from skillgrad.envs.tasks.env import to_item
from skillgrad.envs.tasks.records import TaskRecord
from skillgrad.models.base import Completion, Usage

# the check as the teacher reads it ("the reply contains 'Recommendation' then one of ':', '='"), pasted as a rule
COPIED = "Always check that the reply contains 'Recommendation' then one of ':', '='."
FAIR = "End every review with one line naming your recommendation."


class ScriptedMetaTeacher:
    name, context_window, supports_vision, is_agent = "scripted:teacher", 100_000, False, False

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    async def complete(self, messages: list[dict[str, Any]], *, schema: Any = None, **_: Any) -> Completion:
        edits = [{"op": "append", "content": c} for c in (COPIED, FAIR)]
        doc = {"edits": edits, "meta_summary": "two rules"}
        return Completion(text=json.dumps(doc), parsed=schema.model_validate(doc), usage=Usage(10, 10))


def _guard() -> Guard:
    items = [to_item(TaskRecord.model_validate({"task_id": f"t{i}", "task": f"Review change {i}.", "judge": {
        "kind": "rule", "checks": [{"op": "regex", "arg": r"[Rr]ecommendation\s*[:=]"}]}})) for i in range(3)]
    texts, regexes = checker_texts_of_items(items, item_contract)
    return Guard.build(checker_texts=texts, regexes=regexes)


def _propose(guard: Guard | None) -> Any:
    teacher = TeacherCall(ScriptedMetaTeacher(), PromptLibrary([]), max_tokens=256)  # type: ignore[arg-type]
    return asyncio.run(propose("# Reviews\n\nReview code changes.\n", ["### Step 1: REJECT"], teacher, budget=2,
                               max_chars=400, prev_summary="", guard=guard))


def test_meta_reflect_refuses_checker_text() -> None:
    res = _propose(_guard())
    assert res.report["refused_checker_text"] == 1
    assert res.candidate is not None and FAIR in res.candidate and COPIED not in res.candidate
    # without a guard the same reply would have pasted the checker's description into the skill
    assert COPIED in _propose(None).candidate
