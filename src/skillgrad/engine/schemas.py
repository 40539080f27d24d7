"""Pydantic models for every teacher output.

String lengths and list sizes are bounded (builders take the bounds from the config); a reply over a
bound is rejected as malformed, never truncated. On `local` a bound up to 1,000 is also enforced while
decoding (`models/grammar.py`); longer ones only after parsing, since a deep grammar crashes llama.cpp.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, Field, create_model

FailureKind = Literal["missing_knowledge", "wrong_procedure", "format", "other"]
SuggestionType = Literal["add_rule", "remove_rule", "merge_rules", "reorganize", "compress", "clarify"]


class FailureSummary(BaseModel):
    failure_type: str = Field(max_length=48)
    count: int = Field(1, ge=0, le=999)
    description: str = Field("", max_length=240)


@lru_cache(maxsize=None)
def edit_proposal_model(max_chars: int) -> type[BaseModel]:
    return create_model(
        "EditProposal",
        op=(Literal["append", "insert_after", "replace", "delete"], ...),
        content=(str, Field(..., max_length=max_chars)),
        target=(str, Field("", max_length=min(max_chars, 400))),
        failure_kind=(FailureKind, "other"),
    )


@lru_cache(maxsize=None)
def analyst_model(max_edits: int, max_chars: int, *, appendix: bool = False) -> type[BaseModel]:
    fields: dict = {
        "edits": (list[edit_proposal_model(max_chars)], Field(default_factory=list, max_length=max(max_edits, 0))),  # type: ignore[valid-type]
        "failure_summary": (list[FailureSummary], Field(default_factory=list, max_length=4)),
    }
    if appendix:
        fields["appendix_notes"] = (list[str], Field(default_factory=list, max_length=3))
    return create_model("AnalystOutput", **fields)


@lru_cache(maxsize=None)
def merged_edit_model(max_chars: int) -> type[BaseModel]:
    return create_model(
        "MergedEdit",
        op=(Literal["append", "insert_after", "replace", "delete"], ...),
        content=(str, Field(..., max_length=max_chars)),
        target=(str, Field("", max_length=min(max_chars, 400))),
        support_count=(int, Field(1, ge=1, le=999)),
        source_type=(Literal["failure", "success"], "failure"),
    )


@lru_cache(maxsize=None)
def merge_model(max_items: int, max_chars: int) -> type[BaseModel]:
    return create_model(
        "MergeOutput",
        edits=(list[merged_edit_model(max_chars)], Field(default_factory=list, max_length=max_items)),  # type: ignore[valid-type]
    )


class Suggestion(BaseModel):
    type: SuggestionType
    title: str = Field(max_length=80)
    instruction: str = Field(max_length=600)
    motivation: str = Field("", max_length=240)
    priority_hint: Literal["high", "medium", "low"] = "medium"


@lru_cache(maxsize=None)
def suggestions_model(max_items: int) -> type[BaseModel]:
    return create_model(
        "SuggestionOutput",
        revise_suggestions=(list[Suggestion], Field(default_factory=list, max_length=max(max_items, 0))),
        failure_summary=(list[FailureSummary], Field(default_factory=list, max_length=4)),
    )


@lru_cache(maxsize=None)
def merged_suggestions_model(max_items: int) -> type[BaseModel]:
    return create_model(
        "MergedSuggestions",
        revise_suggestions=(list[Suggestion], Field(default_factory=list, max_length=max_items)),
    )


@lru_cache(maxsize=None)
def skill_document_model(max_chars: int) -> type[BaseModel]:
    return create_model(
        "SkillDocument",
        new_skill=(str, Field(..., min_length=1, max_length=max_chars)),
        change_summary=(list[str], Field(default_factory=list, max_length=6)),
    )


@lru_cache(maxsize=None)
def demonstration_model(max_chars: int) -> type[BaseModel]:
    """The teacher's corrected reply to one failed task (a worked example once the environment verified it)."""
    return create_model("Demonstration", reply=(str, Field(..., min_length=1, max_length=max_chars)))


class Ranking(BaseModel):
    selected_indices: list[int] = Field(default_factory=list, max_length=64)


class LearningRateDecision(BaseModel):
    learning_rate: int = Field(ge=0, le=999)
    confidence: Literal["low", "medium", "high"] = "medium"
    reasoning: str = Field("", max_length=300)


@lru_cache(maxsize=None)
def slow_update_model(max_chars: int) -> type[BaseModel]:
    return create_model("SlowUpdate", slow_update_content=(str, Field(..., max_length=max_chars)))


@lru_cache(maxsize=None)
def meta_skill_model(max_chars: int) -> type[BaseModel]:
    return create_model("MetaSkill", meta_skill_content=(str, Field(..., max_length=max_chars)))


class AppendixConsolidation(BaseModel):
    appendix_notes: list[str] = Field(default_factory=list, max_length=12)


@lru_cache(maxsize=None)
def meta_reflect_model(max_edits: int, max_chars: int) -> type[BaseModel]:
    """Epoch-end meta reflect: higher-level edits over the epoch's steps, plus a summary for the next epoch."""
    return create_model(
        "MetaReflect",
        edits=(list[edit_proposal_model(max_chars)], Field(default_factory=list, max_length=max(max_edits, 0))),  # type: ignore[valid-type]
        meta_summary=(str, Field("", max_length=600)),
    )


class ProbeTurn(BaseModel):
    """One deep-reflect turn: what the teacher wants to know and which trajectory messages to re-read."""

    question: str = Field("", max_length=240)
    look_at: list[int] = Field(default_factory=list, max_length=3)
    finding: str = Field("", max_length=300)
    done: bool = False
