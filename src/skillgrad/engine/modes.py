"""The three skill update modes as strategy objects: each answers what differs between them (payload key,
prompts, schemas, whether items are budgeted edits, what an empty update is called), so no stage switches on
a mode's name.

- `patch`: analysts propose edits; merged, ranked under the edit budget and applied to the skill directly.
- `rewrite_from_suggestions`: analysts propose suggestions; merged and ranked like edits, then one rewrite
  call turns the selected suggestions into a new skill document.
- `full_rewrite_minibatch`: each analyst writes a whole skill document; merging picks or fuses documents and
  there is no edit budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from skillgrad.engine import schemas

UpdateKind = Literal["apply_edits", "rewrite_call", "take_document"]


@dataclass(frozen=True)
class UpdateMode:
    name: str
    payload_key: str  # key holding the items in analyst / merge output
    analyst_suffix: str  # template name suffix: "", "_rewrite", "_full_rewrite"
    merge_template: str  # per-group merge template ("merge_{group}" for patch)
    ranking_template: str | None
    final_merge_template: str | None  # the failure group merged with the success group (None: like a group)
    update_kind: UpdateKind  # how the update stage makes the candidate (engine/stages/update.py)
    edit_budget: bool = True  # items are edits/suggestions under the scheduled budget (not whole skills)
    appendix_notes: bool = False  # analysts may report execution-lapse notes (skill-aware reflection)
    skip_action: str = "skip_no_rewrite"  # the step action when the update produced no new skill
    rewrite_file: str | None = None  # the step file that keeps the rewrite call's reply

    @property
    def ranks_with_budget(self) -> bool:
        return self.edit_budget

    @property
    def counts_lr_step(self) -> bool:
        """Whether a step that reached select advances the edit-budget schedule."""
        return self.edit_budget

    def analyst_schema(self, budget: int, max_chars: int, appendix: bool) -> type[BaseModel]:
        raise NotImplementedError

    def merge_schema(self, max_items: int, max_chars: int) -> type[BaseModel]:
        raise NotImplementedError

    def items_from_output(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        """The payload items of one analyst/merge output, as plain dicts."""
        return [dict(x) for x in data.get(self.payload_key, [])]


class PatchMode(UpdateMode):
    def analyst_schema(self, budget: int, max_chars: int, appendix: bool) -> type[BaseModel]:
        return schemas.analyst_model(budget, max_chars, appendix=appendix)

    def merge_schema(self, max_items: int, max_chars: int) -> type[BaseModel]:
        return schemas.merge_model(max_items, max_chars)


class SuggestionsMode(UpdateMode):
    def analyst_schema(self, budget: int, max_chars: int, appendix: bool) -> type[BaseModel]:
        return schemas.suggestions_model(budget)

    def merge_schema(self, max_items: int, max_chars: int) -> type[BaseModel]:
        return schemas.merged_suggestions_model(max_items)


class DocumentMode(UpdateMode):
    def analyst_schema(self, budget: int, max_chars: int, appendix: bool) -> type[BaseModel]:
        return schemas.skill_document_model(max(max_chars * 20, 4000))

    def merge_schema(self, max_items: int, max_chars: int) -> type[BaseModel]:
        return schemas.skill_document_model(max(max_chars * 20, 4000))

    def items_from_output(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        if data.get("new_skill"):
            return [{"new_skill": data["new_skill"], "change_summary": list(data.get("change_summary", []))}]
        return []


MODES: dict[str, UpdateMode] = {
    "patch": PatchMode("patch", "edits", "", "merge_{group}", "ranking", "merge_final", "apply_edits",
                       appendix_notes=True, skip_action="skip_no_edits"),
    "rewrite_from_suggestions": SuggestionsMode(
        "rewrite_from_suggestions", "revise_suggestions", "_rewrite", "merge_suggestions", "ranking_rewrite",
        "merge_suggestions", "rewrite_call", rewrite_file="rewrite_result.json",
    ),
    "full_rewrite_minibatch": DocumentMode(
        "full_rewrite_minibatch", "skill_candidates", "_full_rewrite", "merge_full_rewrite", None,
        None, "take_document", edit_budget=False, rewrite_file="full_rewrite_result.json",
    ),
}


def items_from_output(mode: UpdateMode, data: dict[str, Any]) -> list[dict[str, Any]]:
    """The payload items of one analyst/merge output, as plain dicts."""
    return mode.items_from_output(data)
