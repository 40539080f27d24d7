"""Every default teacher path once with the real embedded model as the teacher (SmolLM2-135M through the real
prompt templates, schemas and grammar): the LLM merge, the ranking, the autonomous edit budget, and the two
rewrite modes. The scripted-teacher tests (test_engine_plumbing.py) pin the mechanics; these show that each
path works - or falls back with its reason recorded - with a real model's reply."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from skillgrad.engine.modes import MODES
from skillgrad.engine.prompts import PromptLibrary
from skillgrad.engine.stages.aggregate import aggregate
from skillgrad.engine.stages.select import decide_autonomous_budget, select
from skillgrad.engine.stages.update import update
from skillgrad.engine.teacher import TeacherCall
from skillgrad.skill import get_region, set_region

pytestmark = pytest.mark.slow

SKILL = set_region("# Capitals\n\nAnswer with the city name only.\n", "SLOW_UPDATE", "Keep answers short.")
FAILS = [[{"op": "append", "content": "- The capital of Zorblax is Ayla.", "source_type": "failure"}],
         [{"op": "append", "content": "- The capital of Quenta is Mbeki.", "source_type": "failure"}],
         [{"op": "append", "content": "- The capital of Zorblax is Ayla.", "source_type": "failure"}]]


@pytest.fixture
def teacher(embedded_teacher: Any) -> TeacherCall:
    return TeacherCall(embedded_teacher, PromptLibrary(), max_tokens=256)


def llm_calls(event_sink: Any, stage: str) -> list[dict[str, Any]]:
    return [e for e in event_sink.of("llm_call") if e.get("stage") == stage]


def test_llm_merge_ranking_and_autonomous_budget(teacher: TeacherCall, event_sink: Any) -> None:
    patch = MODES["patch"]
    merged = asyncio.run(aggregate(FAILS, [], SKILL, teacher, mode=patch, merge_batch_size=8, merge_mode="llm"))
    assert len(llm_calls(event_sink, "aggregate")) == 1  # one real merge call over the three patches
    assert merged.replies and merged.replies[0].get("raw")
    if merged.fallbacks:  # a malformed reply falls back to the concatenation, with its reason
        assert merged.fallbacks[0]["reason"] and len(merged.items) == 2
    else:
        assert merged.items and all(it.get("op") for it in merged.items)

    pool = [dict(it) for group in FAILS[:2] for it in group]
    decision = asyncio.run(decide_autonomous_budget(pool, SKILL, teacher, rollout_n=4, rollout_hard=0.25,
                                                    rollout_soft=0.25, buffer_text="", meta_text=""))
    assert len(llm_calls(event_sink, "select")) == 1 and decision["reply"]["template"] == "lr_autonomous"
    assert 0 <= int(decision["learning_rate"]) <= len(pool) or not decision["parsed"]

    ranked = asyncio.run(select(pool, SKILL, teacher, mode=patch, budget=1))
    assert len(llm_calls(event_sink, "select")) == 2  # the ranking call: two edits for a budget of one
    assert len(ranked.selected) == 1 and ranked.selected[0] in pool
    assert ranked.ranked or ranked.fallback  # ranked by the model, or the recorded fallback order


@pytest.mark.parametrize("mode", ["rewrite_from_suggestions", "full_rewrite_minibatch"])
def test_rewrite_modes(teacher: TeacherCall, event_sink: Any, mode: str) -> None:
    selected = ([{"type": "add_rule", "title": "Zorblax", "instruction": "Add: the capital of Zorblax is Ayla."}]
                if mode == "rewrite_from_suggestions" else
                [{"new_skill": SKILL + "- The capital of Zorblax is Ayla.\n", "change_summary": ["added a fact"]}])
    res = asyncio.run(update(SKILL, selected, teacher, mode=MODES[mode]))
    if mode == "rewrite_from_suggestions":  # a real rewrite call; full rewrite takes the analyst's document
        assert len(llm_calls(event_sink, "update")) == 1
        assert res.rewrite is not None and (res.rewrite.get("raw") or res.rewrite.get("error"))
    if res.candidate is not None:  # protected regions survive whatever the model wrote
        assert get_region(res.candidate, "SLOW_UPDATE") == "Keep answers short."
    else:
        assert res.rewrite is not None and res.rewrite.get("error")
