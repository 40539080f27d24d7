"""The three skill update modes and what differs between them (payload key, prompts, schemas)."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from skillgrad.engine import schemas


@dataclass(frozen=True)
class UpdateMode:
    name: str
    payload_key: str  # key holding the items in analyst / merge output
    analyst_suffix: str  # template name suffix: "", "_rewrite", "_full_rewrite"
    merge_template: str  # per-group merge template ("merge_{group}" for patch)
    ranking_template: str | None
    edit_budget: bool = True  # items are edits/suggestions under the scheduled budget (not whole skills)
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
        if self.name == "patch":
            return schemas.analyst_model(budget, max_chars, appendix=appendix)
        if self.name == "rewrite_from_suggestions":
            return schemas.suggestions_model(budget)
        return schemas.skill_document_model(max(max_chars * 20, 4000))

    def merge_schema(self, max_items: int, max_chars: int) -> type[BaseModel]:
        if self.name == "patch":
            return schemas.merge_model(max_items, max_chars)
        if self.name == "rewrite_from_suggestions":
            return schemas.merged_suggestions_model(max_items)
        return schemas.skill_document_model(max(max_chars * 20, 4000))


MODES = {
    "patch": UpdateMode("patch", "edits", "", "merge_{group}", "ranking", skip_action="skip_no_edits"),
    "rewrite_from_suggestions": UpdateMode(
        "rewrite_from_suggestions", "revise_suggestions", "_rewrite", "merge_suggestions", "ranking_rewrite",
        rewrite_file="rewrite_result.json",
    ),
    "full_rewrite_minibatch": UpdateMode(
        "full_rewrite_minibatch", "skill_candidates", "_full_rewrite", "merge_full_rewrite", None,
        edit_budget=False, rewrite_file="full_rewrite_result.json",
    ),
}


def items_from_output(mode: UpdateMode, data: dict) -> list[dict]:
    """The payload items of one analyst/merge output, as plain dicts."""
    if mode.name == "full_rewrite_minibatch":
        if data.get("new_skill"):
            return [{"new_skill": data["new_skill"], "change_summary": list(data.get("change_summary", []))}]
        return []
    return [dict(x) for x in data.get(mode.payload_key, [])]
