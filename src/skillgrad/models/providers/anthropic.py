"""Anthropic Messages API provider (official `anthropic` SDK, an optional extra).

Sampling parameters are not sent: the SDK (2.x) speaks an API version that rejects temperature,
top_p and top_k, so `req.temperature` has no effect here (a proxy on an older API version can still get
one through `extra_body`). Structured output uses one forced tool whose input schema is the pydantic schema; the tool input
comes back as JSON text, which the client face validates. The SDK's own retries are off: the retry
middleware owns retries and needs the raw 429/5xx as `ProviderError`.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping
from typing import Any

from skillgrad.config.schema import RoleConfig
from skillgrad.core.redact import REDACTED, redact_text
from skillgrad.errors import ProviderError, ProviderFatal, UsageError
from skillgrad.models.base import Completion, Message, Request, Usage
from skillgrad.models.providers.http import retry_after_seconds
from skillgrad.models.tokens import ESTIMATE, TokenCounter, calibrated_counter, estimate

NAME = "anthropic"
DEFAULT_MODEL = "claude-sonnet-4-6"
KEY_ENV = "ANTHROPIC_API_KEY"
_RETRYABLE = {408, 409, 425, 429}  # and every 5xx (as the other providers; the README lists them)
_DATA_URI = re.compile(r"^data:(?P<mime>[\w.+-]+/[\w.+-]+);base64,(?P<data>.*)$", re.S)


def create(role_cfg: RoleConfig, role: str = "", *, environ: Mapping[str, str] | None = None) -> AnthropicProvider:
    return AnthropicProvider(role_cfg, role, environ=os.environ if environ is None else environ)


def _api_key(role_cfg: RoleConfig, role: str, environ: Mapping[str, str]) -> str:
    if role_cfg.api_key is not None and role_cfg.api_key.get_secret_value():
        return role_cfg.api_key.get_secret_value()
    var = role_cfg.api_key_env or KEY_ENV
    key = environ.get(var, "")
    if not key:
        where = f"model.{role or 'teacher'}.api_key_env"
        raise UsageError(
            f"anthropic: no API key; set {var} in the environment"
            + (f" (or point {where} at the variable holding it)" if var == KEY_ENV else f" (named by {where})")
        )
    return key


def _image_block(url: str) -> dict[str, Any]:
    m = _DATA_URI.match(url)
    if m:
        return {"type": "image", "source": {"type": "base64", "media_type": m["mime"], "data": m["data"]}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _content(content: Any) -> Any:
    """OpenAI-style content (str or parts) -> Anthropic content; image_url parts become image blocks."""
    if isinstance(content, str):
        return content
    blocks: list[dict[str, Any]] = []
    for part in content or []:
        if isinstance(part, str):
            blocks.append({"type": "text", "text": part})
        elif part.get("type") == "image_url":
            image = part.get("image_url")
            blocks.append(_image_block(image["url"] if isinstance(image, dict) else str(image)))
        elif part.get("type") == "text":
            blocks.append({"type": "text", "text": part.get("text", "")})
        else:
            blocks.append(part)  # already an Anthropic block
    return blocks


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict) and p.get("type") == "text")


def split_messages(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """System messages go to the `system` parameter; the rest keep their order."""
    system = [_text_of(m.get("content")) for m in messages if m.get("role") == "system"]
    rest = [
        {"role": m.get("role", "user"), "content": _content(m.get("content"))}
        for m in messages
        if m.get("role") != "system"
    ]
    return "\n\n".join(s for s in system if s), rest


def tool_name(schema: type) -> str:
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", getattr(schema, "__name__", "") or "")[:64]
    return name or "respond"


class AnthropicProvider:
    is_agent = False
    bills_cancelled = True  # the server may bill a request we stopped waiting for (models/cancelled.py)

    def __init__(self, role_cfg: RoleConfig, role: str, *, environ: Mapping[str, str]) -> None:
        try:
            import anthropic
        except ImportError as exc:  # optional extra
            raise UsageError(
                "provider 'anthropic' needs the anthropic SDK; run `pip install skillgrad[anthropic]`"
            ) from exc
        self._sdk = anthropic
        self.name = NAME
        self.role = role
        self.model = role_cfg.model or DEFAULT_MODEL
        self.supports_vision = True if role_cfg.vision is None else role_cfg.vision
        self._cfg = role_cfg
        self._key = _api_key(role_cfg, role, environ)
        kwargs: dict[str, Any] = {"api_key": self._key, "max_retries": 0, "timeout": role_cfg.timeout_s}
        if role_cfg.base_url:
            kwargs["base_url"] = role_cfg.base_url
        self.endpoint = role_cfg.base_url or "https://api.anthropic.com"
        self._client = anthropic.AsyncAnthropic(**kwargs)
        # "prompt" leaves the schema to the prompt and tolerant parsing; every other mode uses tools.
        self._use_tools = role_cfg.structured_output != "prompt"

    def token_counter(self) -> TokenCounter:
        """Anthropic's count_tokens endpoint, calibrated once per model; the estimate when unreachable."""
        sync = self._sdk.Anthropic(api_key=self._key, max_retries=0, timeout=min(self._cfg.timeout_s, 15.0),
                                   base_url=self._cfg.base_url or None)

        def remote(text: str) -> int:
            return int(sync.messages.count_tokens(
                model=self.model, messages=[{"role": "user", "content": text}]).input_tokens)

        try:
            return calibrated_counter("anthropic count_tokens", remote)
        except self._sdk.AnthropicError as exc:
            why = self._scrub(str(exc))[:120]
            return TokenCounter(f"{ESTIMATE} (anthropic count_tokens unavailable: {why})", estimate)
        finally:
            sync.close()

    def params(self) -> dict[str, Any]:
        return {
            "base_url": self._cfg.base_url,
            "structured_output": "tools" if self._use_tools else "prompt",
            "reasoning_effort": self._cfg.reasoning_effort,
            "extra_body": self._cfg.extra_body,
        }

    async def __call__(self, req: Request) -> Completion:
        system, messages = split_messages(list(req.messages))
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": req.max_tokens,
            "messages": messages,
        }
        if system:
            kwargs["system"] = system
        if self._cfg.reasoning_effort:
            kwargs["output_config"] = {"effort": self._cfg.reasoning_effort}
        name = ""
        if req.schema is not None and self._use_tools:
            name = tool_name(req.schema)
            kwargs["tools"] = [{
                "name": name,
                "description": "Return the answer by calling this tool with arguments matching its schema.",
                "input_schema": req.schema.model_json_schema(),
            }]
            kwargs["tool_choice"] = {"type": "tool", "name": name}
        if self._cfg.extra_body:
            kwargs["extra_body"] = dict(self._cfg.extra_body)
        start = time.monotonic()
        try:
            msg = await self._client.messages.create(**kwargs)
        except self._sdk.AnthropicError as exc:
            raise self._map_error(exc) from None
        return self._completion(msg, name, time.monotonic() - start)

    def _completion(self, msg: Any, tool: str, seconds: float) -> Completion:
        texts: list[str] = []
        tool_input: Any = None
        for block in msg.content or []:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use" and tool and block.name == tool:
                tool_input = block.input
        text = json.dumps(tool_input, ensure_ascii=False) if tool_input is not None else "".join(texts)
        u = msg.usage
        cache_read = getattr(u, "cache_read_input_tokens", None) or 0
        cache_write = getattr(u, "cache_creation_input_tokens", None) or 0
        # Anthropic reports disjoint input buckets; prompt_tokens counts all of them (as OpenAI does),
        # with the cache reads also reported as cached.
        usage = Usage(
            prompt_tokens=(u.input_tokens or 0) + cache_read + cache_write,
            completion_tokens=u.output_tokens or 0,
            cached_tokens=cache_read,
        )
        return Completion(
            text=text, usage=usage, model=msg.model or self.model, provider=NAME,
            seconds=seconds, finish_reason=msg.stop_reason,
        )

    def _scrub(self, text: str) -> str:
        """This provider's own key, then any other key shape (core/redact.py), out of an error message."""
        return redact_text(text.replace(self._key, "***") if self._key else text, REDACTED)

    def _map_error(self, exc: Exception) -> ProviderError:
        sdk = self._sdk
        if isinstance(exc, sdk.APITimeoutError):
            return ProviderError(f"anthropic: request timed out after {self._cfg.timeout_s:g} s",
                                 provider=NAME, retryable=True)
        if isinstance(exc, sdk.APIConnectionError):
            return ProviderError(f"anthropic: connection failed: {self._scrub(str(exc))}",
                                 provider=NAME, retryable=True)
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            detail = self._scrub(getattr(exc, "api_message", None) or exc.message)
            message = f"anthropic: HTTP {status}: {detail}"
            if status in _RETRYABLE or status >= 500:
                return ProviderError(message, provider=NAME, status=status, retryable=True,
                                     retry_after=retry_after_seconds(exc.response.headers))
            if status in (401, 403):
                message += f" (check {self._cfg.api_key_env or KEY_ENV})"
            return ProviderFatal(message, provider=NAME, status=status)
        return ProviderFatal(f"anthropic: {self._scrub(str(exc))}", provider=NAME)

    async def aclose(self) -> None:
        await self._client.close()
