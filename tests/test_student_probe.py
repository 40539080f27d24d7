"""The student probe (engine/student_probe.py): which form the embedded student follows, recorded once per run
and read back on resume without a single new student call."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from skillgrad.engine.student_probe import PROBE_FILE, StudentForm, choose, load_or_probe
from skillgrad.runs.store import RunStore

QUESTIONS = ["What is the capital of Chile?", "What is the capital of Peru?", "What is the capital of Kenya?"]


class NoCalls:
    """A student that must not be called (a resumed run does not probe again)."""

    name = "no-calls"

    async def complete(self, *a: Any, **k: Any) -> Any:
        raise AssertionError("the probe ran again")


def test_probe_is_recorded_and_a_resumed_run_reads_it(tmp_path: Path, embedded_student: Any, event_sink: Any) -> None:
    store = RunStore(tmp_path / "run")
    form = asyncio.run(load_or_probe(store, event_sink, embedded_student, "# Skill\n\nAnswer briefly.\n",
                                     QUESTIONS, "auto"))
    assert form.probed and form.calls == 6 and set(form.scores) == {"rule", "example_text", "example_turns"}
    # SmolLM2-135M copies the chat-turn example and ignores the stated rule (reference/offline-llm.md)
    assert form.scores["example_turns"] > form.scores["rule"] and form.prefers == "example"
    assert "worked examples" in form.guidance()
    saved = json.loads((tmp_path / "run" / PROBE_FILE).read_text())
    assert saved["prefers"] == "example" and saved["replies"]["example_turns"]
    assert [f["prefers"] for e, f in event_sink.events if e == "student_probe"] == ["example"]

    again = asyncio.run(load_or_probe(RunStore(tmp_path / "run"), event_sink, NoCalls(), "# other skill", QUESTIONS,
                                      "auto"))
    assert again == form
    assert [e for e, _ in event_sink.events].count("student_probe") == 1


def test_probe_off_makes_no_call_and_says_so(tmp_path: Path, event_sink: Any) -> None:
    form = asyncio.run(load_or_probe(RunStore(tmp_path / "run"), event_sink, NoCalls(), "# S", QUESTIONS, "off"))
    assert not form.probed and form.prefers == "example" and form.guidance() == "" and "off" in form.reason


def test_choice_prefers_examples_unless_the_rule_works_as_well() -> None:
    assert choose({"rule": 0.0, "example_text": 0.0, "example_turns": 1.0}) == "example"
    assert choose({"rule": 1.0, "example_text": 0.5, "example_turns": 1.0}) == "rule"
    assert choose({"rule": 0.0, "example_text": 0.0, "example_turns": 0.0}) == "example"
    assert StudentForm.from_json(StudentForm(prefers="rule", probed=True).to_json()).prefers == "rule"
