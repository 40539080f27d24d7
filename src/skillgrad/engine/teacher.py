"""One place where stages talk to the teacher: render a template under the token budget, call,
parse into a schema, and turn a malformed reply into a recorded rejection instead of an exception."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from skillgrad.engine.evidence import TrimRecord, fit_evidence, reply_budget
from skillgrad.engine.prompts import PromptLibrary
from skillgrad.errors import StructuredOutputError
from skillgrad.models.base import LLM

SMALL_WINDOW = 4096  # a teacher with this context window or less gets the short prompts it was measured with
# Prompts that edit the skill: a capable teacher is told the skill's syntax (prompts/skill_syntax.md). Not a small one:
# the 135M teacher's replies change with every added line (issue 31; demonstrate has its own short note).
SYNTAX_TEMPLATES = frozenset({"analyst_error", "analyst_success", "analyst_error_full_rewrite",
                              "analyst_success_full_rewrite"})


@dataclass
class TeacherReply:
    stage: str
    template: str
    parsed: BaseModel | None = None
    raw: str = ""
    error: str | None = None
    trim: dict[str, Any] | None = None
    usage: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.parsed is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "template": self.template,
            "ok": self.ok,
            "parsed": self.parsed.model_dump() if self.parsed is not None else None,
            "raw": self.raw,
            "error": self.error,
            "trim": self.trim,
            "usage": self.usage,
        }


@dataclass
class TeacherCall:
    """The teacher plus what every call needs: prompts, reply length, temperature, prompt cap."""

    llm: LLM
    prompts: PromptLibrary
    max_tokens: int = 1024
    temperature: float = 0.0
    max_prompt_tokens: int = 0

    @property
    def small(self) -> bool:
        """A small teacher (the embedded model): its prompts stay as they were measured with it."""
        return int(getattr(self.llm, "context_window", SMALL_WINDOW)) <= SMALL_WINDOW

    def count(self, text: str) -> int:
        counter = getattr(self.llm, "count_tokens", None)
        return int(counter(text)) if counter else len(text) // 4

    async def ask(
        self,
        template: str,
        schema: type[BaseModel],
        *,
        stage: str,
        values: dict[str, Any],
        evidence_key: str | None = None,
        evidence: list[str] | None = None,
        suffix_templates: list[str] | None = None,
        max_tokens: int | None = None,
        sample: int = 0,
        extra: dict[str, Any] | None = None,
    ) -> TeacherReply:
        tpl = self.prompts.get(template)
        reply_tokens = max_tokens or self.max_tokens
        trim: TrimRecord | None = None
        vals = dict(values)
        if evidence_key is not None:
            vals[evidence_key] = ""
            sys_text, user_text = tpl.render(**vals)
            window = int(getattr(self.llm, "context_window", 4096))
            room = reply_budget(window, reply_tokens, self.count(sys_text + user_text), self.max_prompt_tokens)
            fitted = fit_evidence(evidence or [], room, self.count)
            trim = fitted.trim
            vals[evidence_key] = fitted.text if fitted.items else "(none)"
        system, user = tpl.render(**vals)
        suffixes = list(suffix_templates or [])
        if template in SYNTAX_TEMPLATES and not self.small:
            suffixes.append("skill_syntax")
        for name in suffixes:
            _, suffix = self.prompts.get(name).render()
            system = system + "\n" + suffix
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        reply = TeacherReply(stage=stage, template=template, trim=trim.to_json() if trim else None)
        try:
            comp = await self.llm.complete(
                messages, schema=schema, max_tokens=reply_tokens, temperature=self.temperature,
                stage=stage, sample=sample, extra=extra,
            )
        except StructuredOutputError as e:
            reply.raw, reply.error = e.raw, f"malformed output: {e}"
            return reply
        reply.raw = comp.text
        reply.usage = {"prompt_tokens": comp.usage.prompt_tokens, "completion_tokens": comp.usage.completion_tokens}
        reply.parsed = comp.parsed
        if reply.parsed is None:
            reply.error = "no structured output"
        return reply
