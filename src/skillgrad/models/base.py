"""The one LLM interface every provider and middleware implements.

A provider (and each middleware wrapping it) is a `Handler`: an async callable from `Request` to
`Completion`. `LLM` is the user-facing face of a handler chain bound to one role.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Protocol

from pydantic import BaseModel

Message = dict[str, Any]  # {"role": "system"|"user"|"assistant", "content": str | list[parts]}


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class Completion:
    text: str
    parsed: BaseModel | None = None
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None  # None = price unknown (never reported as 0)
    cached: bool = False
    model: str = ""
    provider: str = ""
    seconds: float = 0.0
    finish_reason: str | None = None
    trace: list[dict[str, Any]] | None = None  # agent harness steps, when a student is an agent


@functools.lru_cache(maxsize=256)
def schema_json(schema: type[BaseModel]) -> dict[str, Any]:
    """A schema class's JSON schema, built once: every cache key of a structured call holds it (pydantic
    rebuilds it on each call, about a millisecond for the teacher's schemas, twice per call)."""
    return schema.model_json_schema()


@dataclass(frozen=True)
class Request:
    messages: tuple[Message, ...] | list[Message]
    max_tokens: int = 512
    temperature: float = 0.0
    schema: type[BaseModel] | None = None
    stage: str = ""
    role: str = ""
    sample: int = 0  # distinguishes repeated samples at temperature > 0 in the cache
    extra: dict[str, Any] = field(default_factory=dict)  # reasoning_effort, workspace files, ...

    def cache_payload(self, provider: str, model: str, params: dict[str, Any]) -> str:
        """Canonical JSON of everything that determines the reply (never secrets)."""
        body = {
            "provider": provider,
            "model": model,
            "messages": list(self.messages),
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "schema": schema_json(self.schema) if self.schema else None,
            "sample": self.sample,
            "extra": self.extra,
            "params": params,
        }
        return json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)

    def cache_key(self, provider: str, model: str, params: dict[str, Any]) -> str:
        return hashlib.sha256(self.cache_payload(provider, model, params).encode()).hexdigest()


Handler = Callable[[Request], Awaitable[Completion]]


class LLM(Protocol):
    """What stages and environments call. Bound to a role (teacher or student)."""

    name: str  # "provider:model", for logs and reports
    role: str
    supports_vision: bool
    is_agent: bool  # codex / claude_code students: they run a task in a workspace

    async def complete(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        stage: str = "",
        sample: int = 0,
        extra: dict[str, Any] | None = None,
    ) -> Completion: ...

    def count_tokens(self, text: str) -> int: ...
