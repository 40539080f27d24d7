"""`openai`: the one OpenAI-family provider: OpenAI, any OpenAI-compatible server (vLLM, Ollama, llama.cpp
server, LM Studio), and Azure OpenAI, which is this provider with an `AzureTarget` (providers/azure.py builds it).

Uses the official SDK with its retries off (our retry middleware owns retries and logs them). What differs
between endpoints is configuration, decided here in one place:
- structured output: api.openai.com gets strict `json_schema`; Azure gets `json_schema` without strict mode
  (deployments of older models and API versions refuse strict; the client validates the reply); other servers
  get llama.cpp-style `{"type": "json_object", "schema": ...}` (llama-cpp-python's server answers 500 to
  json_schema). `structured_output` overrides the choice for every endpoint alike.
- hosted endpoints (api.openai.com, Azure) get `max_completion_tokens` (Azure: from API version 2024-09-01)
  and no temperature for a reasoning model or a call with a reasoning effort; other servers get `max_tokens`
  and always the temperature (their default is often 0.8).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import openai as openai_sdk
from pydantic import BaseModel

from skillgrad.config.schema import RoleConfig
from skillgrad.core.redact import REDACTED, redact, redact_text
from skillgrad.errors import ConfigError, ProviderError, ProviderFatal, UsageError
from skillgrad.models.base import Completion, Message, Request, Usage
from skillgrad.models.grammar import server_safe_schema
from skillgrad.models.prices import is_loopback_url
from skillgrad.models.providers.http import retry_after_seconds
from skillgrad.models.structured import schema_instructions
from skillgrad.models.tokens import TokenCounter, tiktoken_counter

OPENAI_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_KEY = "sk-no-key-required"  # local servers ignore the key, the SDK insists on one
_REASONING = re.compile(r"^(o\d|gpt-5)(?!.*-chat)")
RETRYABLE_STATUS = {408, 409, 425, 429}  # and every 5xx; docs/guide/providers.md lists the same
# Azure API versions from this date accept `max_completion_tokens` (required by reasoning deployments).
AZURE_MAX_COMPLETION_TOKENS_FROM = "2024-09-01"


@dataclass(frozen=True)
class AzureTarget:
    """Where and how an Azure OpenAI deployment is reached (providers/azure.py fills it from the config)."""

    endpoint: str
    deployment: str
    api_version: str
    auth_mode: str = "key"  # key | entra
    key: str = ""  # auth_mode key
    key_env: str = ""  # the variable the key came from, for an auth error's hint
    token_provider: Any = None  # auth_mode entra: azure-identity's bearer-token provider
    credential: Any = None  # closed with the provider


def is_official(base_url: str) -> bool:
    return (urlparse(base_url).hostname or "").lower() == "api.openai.com"


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAI strict mode: every object closed and every property required; no defaults."""

    def fix(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: fix(v) for k, v in node.items() if k != "default"}
            if out.get("type") == "object" or "properties" in out:
                out["additionalProperties"] = False
                out["required"] = list(out.get("properties", {}))
            return out
        if isinstance(node, list):
            return [fix(v) for v in node]
        return node

    return fix(schema)


def _responses_content(content: Any) -> Any:
    """Chat-style content parts -> Responses API parts."""
    if not isinstance(content, list):
        return content
    parts = []
    for p in content:
        if p.get("type") == "text":
            parts.append({"type": "input_text", "text": p.get("text", "")})
        elif p.get("type") == "image_url":
            url = p["image_url"]["url"] if isinstance(p.get("image_url"), dict) else p.get("image_url")
            parts.append({"type": "input_image", "image_url": url})
        else:
            parts.append(p)
    return parts


class OpenAIProvider:
    is_agent = False
    bills_cancelled = True  # the server may bill a request we stopped waiting for (models/cancelled.py)

    def __init__(self, rc: RoleConfig, role: str, *, environ: Mapping[str, str] | None = None,
                 azure: AzureTarget | None = None) -> None:
        environ = os.environ if environ is None else environ
        self.role = role
        self.azure = azure
        self.name = "azure" if azure is not None else "openai"
        key_env = rc.api_key_env or "OPENAI_API_KEY"
        if azure is not None:
            self.base_url = azure.endpoint.rstrip("/")
            self.official = False
            self.model = rc.model or azure.deployment  # priced and tokenized by model; the deployment is sent
            self._send_model = azure.deployment
            self._key = azure.key
            self.endpoint = f"azure endpoint {self.base_url} (deployment {azure.deployment})"
        else:
            self.base_url = (rc.base_url or environ.get("OPENAI_BASE_URL", "") or OPENAI_BASE_URL).rstrip("/")
            self.official = is_official(self.base_url)
            key = rc.api_key.get_secret_value() if rc.api_key is not None else environ.get(key_env, "")
            if not key:
                if self.official:
                    raise UsageError(f"no API key for api.openai.com (model.{role}); set the {key_env} environment "
                                     f"variable or name another one in model.{role}.api_key_env")
                key = PLACEHOLDER_KEY
            self._key = key
            if not rc.model:
                raise ConfigError(f"model.{role}.model: the openai provider needs a model name "
                                  "(the model alias served by your endpoint)")
            self.model = self._send_model = rc.model
            self.endpoint = f"openai endpoint {self.base_url} (model {self.model})"
        self._key_env = (azure.key_env if azure is not None else "") or key_env
        self.hosted = self.official or azure is not None  # OpenAI's own service: the stricter API rules
        self.loopback = azure is None and is_loopback_url(self.base_url)  # unpriced here = a local model: free
        self.api = rc.api
        mode = rc.structured_output
        if mode == "auto":
            mode = "json_schema" if self.hosted or self.api == "responses" else "json_object_schema"
        self.structured = "json_schema" if mode == "tools" else mode
        self.strict = azure is None  # see the module docstring
        self.reasoning = self.hosted and bool(_REASONING.match(self.model.lower()))
        self.completion_tokens_param = self.reasoning or self.official or (
            azure is not None and azure.api_version >= AZURE_MAX_COMPLETION_TOKENS_FROM)
        self.reasoning_effort = rc.reasoning_effort
        self.extra_body = dict(rc.extra_body)
        self.timeout_s = rc.timeout_s
        self.supports_vision = rc.vision if rc.vision is not None else self.hosted
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai_sdk.AsyncOpenAI] = (
            weakref.WeakKeyDictionary()
        )

    def params(self) -> dict[str, Any]:
        out = {"base_url": self.base_url, "api": self.api, "structured_output": self.structured,
               "reasoning_effort": self.reasoning_effort, "extra_body": redact(self.extra_body)}
        if self.azure is not None:
            out.update(deployment=self.azure.deployment, api_version=self.azure.api_version)
        return out

    def token_counter(self) -> TokenCounter:
        return tiktoken_counter(self.model)

    def _client(self) -> openai_sdk.AsyncOpenAI:
        # httpx connection pools belong to one event loop: keep one SDK client per loop.
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._new_client()
            self._clients[loop] = client
        return client

    def _new_client(self) -> openai_sdk.AsyncOpenAI:
        az = self.azure
        if az is None:
            return openai_sdk.AsyncOpenAI(api_key=self._key, base_url=self.base_url, max_retries=0,
                                          timeout=self.timeout_s)
        auth: dict[str, Any] = ({"azure_ad_token_provider": az.token_provider} if az.auth_mode == "entra"
                                else {"api_key": az.key})
        return openai_sdk.AsyncAzureOpenAI(azure_endpoint=self.base_url, api_version=az.api_version, max_retries=0,
                                           timeout=self.timeout_s, **auth)

    def _scrub(self, text: str) -> str:
        text = " ".join(str(text).split())
        if self._key and self._key != PLACEHOLDER_KEY:
            text = text.replace(self._key, "***")
        return redact_text(text, REDACTED)[:500]  # and any other key shape an endpoint echoes

    # ---- request building ---------------------------------------------------------------------
    def _messages(self, req: Request) -> list[Message]:
        messages = [dict(m) for m in req.messages]
        if req.schema is not None and self.structured == "prompt":
            note = schema_instructions(req.schema)
            if messages and messages[0].get("role") == "system" and isinstance(messages[0].get("content"), str):
                messages[0]["content"] = f"{messages[0]['content']}\n\n{note}"
            else:
                messages.insert(0, {"role": "system", "content": note})
        return messages

    def _schema_name(self, schema: type[BaseModel]) -> str:
        return re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64] or "reply"

    def _effort(self, req: Request) -> str:
        return str(req.extra.get("reasoning_effort") or self.reasoning_effort or "")

    def _sends_temperature(self, req: Request) -> bool:
        # Hosted reasoning models (and Azure deployments, whose names hide the model, asked for an effort)
        # reject a non-default temperature; other servers get it always.
        return not (self.reasoning or (self.hosted and self._effort(req)))

    async def _chat(self, req: Request) -> Completion:
        kwargs: dict[str, Any] = {"model": self._send_model, "messages": self._messages(req)}
        kwargs["max_completion_tokens" if self.completion_tokens_param else "max_tokens"] = req.max_tokens
        if self._sends_temperature(req):
            kwargs["temperature"] = req.temperature
        if self._effort(req):
            kwargs["reasoning_effort"] = self._effort(req)
        if req.schema is not None:
            schema = req.schema.model_json_schema()
            if self.structured == "json_schema":
                kwargs["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": self._schema_name(req.schema), "schema": strict_schema(schema) if self.strict else schema,
                    "strict": self.strict}}
            elif self.structured == "json_object_schema":
                kwargs["response_format"] = {"type": "json_object", "schema": server_safe_schema(schema)}
        if self.extra_body:
            kwargs["extra_body"] = self.extra_body
        resp = await self._client().chat.completions.create(**kwargs)
        if not getattr(resp, "choices", None):
            raise ProviderError(f"{self.endpoint}: malformed response (no choices)", provider=self.name,
                                retryable=True)
        choice = resp.choices[0]
        msg = choice.message
        u = resp.usage
        cached = getattr(getattr(u, "prompt_tokens_details", None), "cached_tokens", 0) or 0 if u else 0
        return Completion(
            text=((msg.content if msg.content is not None else getattr(msg, "refusal", None)) if msg else None) or "",
            usage=Usage(prompt_tokens=getattr(u, "prompt_tokens", 0) or 0,
                        completion_tokens=getattr(u, "completion_tokens", 0) or 0, cached_tokens=cached),
            model=getattr(resp, "model", None) or self.model, provider=self.name, finish_reason=choice.finish_reason,
        )

    async def _responses(self, req: Request) -> Completion:
        messages = [{**m, "content": _responses_content(m.get("content"))} for m in self._messages(req)]
        kwargs: dict[str, Any] = {"model": self._send_model, "input": messages, "max_output_tokens": req.max_tokens}
        if self._sends_temperature(req):
            kwargs["temperature"] = req.temperature
        if self._effort(req):
            kwargs["reasoning"] = {"effort": self._effort(req)}
        if req.schema is not None and self.structured != "prompt":
            schema = req.schema.model_json_schema()
            kwargs["text"] = {"format": {"type": "json_schema", "name": self._schema_name(req.schema),
                                         "schema": strict_schema(schema) if self.official else server_safe_schema(schema),
                                         "strict": self.official}}
        if self.extra_body:
            kwargs["extra_body"] = self.extra_body
        resp = await self._client().responses.create(**kwargs)
        u = resp.usage
        details = getattr(resp, "incomplete_details", None)
        finish = "length" if getattr(details, "reason", None) == "max_output_tokens" else "stop"
        return Completion(
            text=resp.output_text or "",
            usage=Usage(prompt_tokens=getattr(u, "input_tokens", 0) or 0,
                        completion_tokens=getattr(u, "output_tokens", 0) or 0),
            model=self.model, provider=self.name, finish_reason=finish,
        )

    async def __call__(self, req: Request) -> Completion:
        start = time.perf_counter()
        try:
            comp = await (self._responses(req) if self.api == "responses" else self._chat(req))
        except ProviderError:
            raise
        except openai_sdk.APITimeoutError as e:
            raise ProviderError(f"{self.endpoint}: request timed out after {self.timeout_s:g} s",
                                provider=self.name, retryable=True) from e
        except openai_sdk.APIConnectionError as e:
            raise ProviderError(f"{self.endpoint}: connection error: {self._scrub(str(e.__cause__ or e))}",
                                provider=self.name, retryable=True) from e
        except openai_sdk.APIStatusError as e:
            raise self._status_error(e) from e
        except (openai_sdk.APIError, json.JSONDecodeError) as e:
            # Truncated or non-JSON bodies from proxies and overloaded servers: transient. Nothing
            # broader: a TypeError or KeyError here is a bug and must surface as one, not as an outage.
            raise ProviderError(f"{self.endpoint}: malformed response: {self._scrub(str(e))[:200]}",
                                provider=self.name, retryable=True) from e
        comp.seconds = time.perf_counter() - start
        return comp

    def _status_error(self, e: openai_sdk.APIStatusError) -> ProviderError:
        """HTTP status -> retryable or fatal, with the server's own message and a hint for what to check."""
        status = e.status_code
        detail, code = _detail(e)
        message = f"{self.endpoint}: HTTP {status}: {self._scrub(detail)}"
        if status in RETRYABLE_STATUS or status >= 500:
            return ProviderError(message, provider=self.name, status=status, retryable=True,
                                 retry_after=retry_after_seconds(e.response.headers))
        if status == 400 and code == "content_filter":
            # One prompt tripping a content filter fails that call, not the whole run.
            return ProviderError(message, provider=self.name, status=status, retryable=False)
        if status in (401, 403):
            message += " (check " + ("Entra ID credentials" if self.azure is not None and self.azure.auth_mode == "entra"
                                     else self._key_env) + ")"
        elif status == 404:
            message += (f" (check deployment {self.azure.deployment!r} and api_version {self.azure.api_version})"
                        if self.azure is not None else f" (check model {self.model!r} and base_url)")
        return ProviderFatal(message, provider=self.name, status=status)

    async def aclose(self) -> None:
        clients = list(self._clients.values())
        self._clients.clear()
        for client in clients:
            try:
                await client.close()
            except RuntimeError:  # its event loop is gone; the sockets went with it
                pass
        if self.azure is not None and self.azure.credential is not None:
            self.azure.credential.close()


def _detail(e: openai_sdk.APIStatusError) -> tuple[str, str]:
    """(message, code) from the error body ({"error": {"message", "code"}}), else the SDK's message."""
    body = e.body
    err = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(err, dict) and err.get("message"):
        return str(err["message"]), str(err.get("code") or "")
    return str(e.message or e), str(getattr(e, "code", "") or "")


def create(role_cfg: RoleConfig, role: str, *, environ: Mapping[str, str] | None = None) -> OpenAIProvider:
    return OpenAIProvider(role_cfg, role, environ=environ)
