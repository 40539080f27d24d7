"""TeacherCall plumbing: suffix templates extend the system prompt without touching request fields."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from skillgrad.engine.prompts import PromptLibrary
from skillgrad.engine.teacher import TeacherCall
from skillgrad.models.base import Completion, Usage


class Out(BaseModel):
    answer: str


class RecordingLLM:
    name = "recording"
    context_window = 4096

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def complete(self, messages: list[dict[str, Any]], **kw: Any) -> Completion:
        self.calls.append({"messages": messages, **kw})
        return Completion(text='{"answer": "x"}', parsed=Out(answer="x"), usage=Usage(1, 1))


def test_suffix_templates_do_not_replace_extra_request_fields(tmp_path: Path) -> None:
    (tmp_path / "main.md").write_text("<!-- system -->\nYou judge.\n<!-- user -->\nQ: {{q}}\n", encoding="utf-8")
    (tmp_path / "tail.md").write_text("<!-- user -->\nBe brief.\n", encoding="utf-8")
    llm = RecordingLLM()
    call = TeacherCall(llm, PromptLibrary([tmp_path]), max_tokens=32)  # type: ignore[arg-type]
    reply = asyncio.run(call.ask("main", Out, stage="t", values={"q": "why"}, suffix_templates=["tail"],
                                 extra={"reasoning_effort": "high"}))
    assert reply.parsed is not None
    sent = llm.calls[0]
    assert sent["extra"] == {"reasoning_effort": "high"}
    assert "You judge." in sent["messages"][0]["content"]
    assert "Be brief." in sent["messages"][0]["content"]
