"""`Client`: the LLM face bound to one role, over its middleware chain.

Chain, outermost first: meter -> parse -> cache -> budget -> retry -> limits -> tap -> provider.
Parsing sits inside the meter (so a reply that fails its schema is still a recorded call) and
outside the cache (the cache stores raw text, so a better parser later can reuse old replies).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from skillgrad.config.schema import RoleConfig
from skillgrad.errors import StructuredOutputError
from skillgrad.models.base import Completion, Handler, Message, Request
from skillgrad.models.meter import Meter
from skillgrad.models.structured import parse_structured
from skillgrad.models.tokens import ESTIMATOR, TokenCounter


def parse_step(inner: Handler) -> Handler:
    async def parsed(req: Request) -> Completion:
        comp = await inner(req)
        if req.schema is None:
            return comp
        if comp.finish_reason == "length":
            err = StructuredOutputError(
                f"reply was cut at max_tokens={req.max_tokens} before the {req.schema.__name__} object ended; "
                "raise the token limit or tighten the schema's length bounds", raw=comp.text)
            err.completion = comp  # type: ignore[attr-defined]  # lets the meter count its tokens
            raise err
        try:
            comp.parsed = parse_structured(comp.text, req.schema)
        except StructuredOutputError as err:
            err.completion = comp  # type: ignore[attr-defined]
            raise
        return comp

    return parsed


class Client:
    """Implements `models.base.LLM`."""

    def __init__(self, *, provider: Any, handler: Handler, role: str, role_cfg: RoleConfig,
                 meter: Meter | None = None, context_window: int | None = None) -> None:
        self.provider = provider
        self.handler = handler
        self.role = role
        self.role_cfg = role_cfg
        self.meter = meter
        self.name = f"{provider.name}:{provider.model}"
        self.supports_vision = bool(role_cfg.vision if role_cfg.vision is not None else provider.supports_vision)
        self.is_agent = bool(getattr(provider, "is_agent", False))
        self._table_window = context_window
        self._counter: TokenCounter | None = None

    @property
    def context_window(self) -> int:
        """`n_ctx` when set (or for a local model), else the model's window from the model table."""
        if self.provider.name == "local" or "n_ctx" in self.role_cfg.model_fields_set or not self._table_window:
            return self.role_cfg.n_ctx
        return self._table_window

    @property
    def token_counter(self) -> TokenCounter:
        """The provider's tokenizer when it has one (resolved on first use), else the estimate."""
        if self._counter is None:
            make = getattr(self.provider, "token_counter", None)
            exact = getattr(self.provider, "count_tokens", None)
            if make is not None:
                self._counter = make()
            elif exact is not None:
                self._counter = TokenCounter(f"{self.provider.name} tokenizer (the model's vocabulary)", exact)
            else:
                self._counter = ESTIMATOR
            if self.meter is not None:
                self.meter.note_counter(self.role, self._counter.name)
        return self._counter

    def count_tokens(self, text: str) -> int:
        return int(self.token_counter.count(text))

    async def complete(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        max_tokens: int = 512,
        temperature: float | None = None,
        stage: str = "",
        sample: int = 0,
        extra: dict[str, Any] | None = None,
    ) -> Completion:
        """One call. `temperature=None` uses the role's configured temperature (else 0.0); a role's
        `max_tokens` (when > 0) overrides the stage's value."""
        if temperature is None:
            temperature = self.role_cfg.temperature if self.role_cfg.temperature is not None else 0.0
        if self.role_cfg.max_tokens > 0:
            max_tokens = self.role_cfg.max_tokens
        req = Request(messages=list(messages), max_tokens=max_tokens, temperature=temperature, schema=schema,
                      stage=stage, role=self.role, sample=sample, extra=dict(extra or {}))
        return await self.handler(req)

    async def aclose(self) -> None:
        await self.provider.aclose()
