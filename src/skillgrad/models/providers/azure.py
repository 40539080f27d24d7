"""Azure OpenAI provider (`openai` SDK's AsyncAzureOpenAI), key or Entra ID auth.

Only AZURE_OPENAI_* variables are read here, and only for Azure; plain OpenAI has its own provider.
Structured output uses `response_format: json_schema`; the client face validates the reply. The SDK's
retries are off because the retry middleware owns retries.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from typing import Any

from skillgrad.config.schema import RoleConfig
from skillgrad.core.redact import REDACTED, redact_text
from skillgrad.errors import ProviderError, ProviderFatal, UsageError
from skillgrad.models.base import Completion, Request, Usage
from skillgrad.models.providers.http import retry_after_seconds
from skillgrad.models.tokens import TokenCounter, tiktoken_counter

NAME = "azure"
KEY_ENV = "AZURE_OPENAI_API_KEY"
ENDPOINT_ENV = "AZURE_OPENAI_ENDPOINT"
ENTRA_SCOPE = "https://cognitiveservices.azure.com/.default"
# API versions from this date accept `max_completion_tokens` (required by reasoning deployments).
_MAX_COMPLETION_TOKENS_FROM = "2024-09-01"
_RETRYABLE = {408, 409, 425, 429}  # and every 5xx (as the openai provider; the README lists them)


def create(role_cfg: RoleConfig, role: str = "", *, environ: Mapping[str, str] | None = None) -> AzureProvider:
    return AzureProvider(role_cfg, role, environ=os.environ if environ is None else environ)


def schema_name(schema: type) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", getattr(schema, "__name__", "") or "")[:64] or "response"


def _entra_token_provider(scope: str = "", managed_identity_client_id: str = "") -> tuple[Any, Any]:
    try:
        from azure.identity import DefaultAzureCredential, get_bearer_token_provider
    except ImportError as exc:  # optional extra
        raise UsageError(
            "auth_mode 'entra' needs azure-identity; run `pip install skillgrad[azure]` (or use auth_mode: key)"
        ) from exc
    # A user-assigned managed identity is named by its client id (SkillOpt's managed_identity_client_id).
    kwargs = {"managed_identity_client_id": managed_identity_client_id} if managed_identity_client_id else {}
    credential = DefaultAzureCredential(**kwargs)
    return credential, get_bearer_token_provider(credential, scope or ENTRA_SCOPE)


class AzureProvider:
    is_agent = False

    def __init__(self, role_cfg: RoleConfig, role: str, *, environ: Mapping[str, str]) -> None:
        import openai

        self._sdk = openai
        self.name = NAME
        self.role = role
        where = f"model.{role or 'teacher'}"
        self.deployment = role_cfg.deployment or role_cfg.model
        if not self.deployment:
            raise UsageError(f"azure: no deployment; set {where}.deployment (or {where}.model) to the deployment name")
        self.model = role_cfg.model or self.deployment
        if role_cfg.api != "chat":
            raise UsageError(f"azure: {where}.api {role_cfg.api!r} is not supported here; use api: chat")
        self.endpoint = role_cfg.azure_endpoint or environ.get(ENDPOINT_ENV, "")
        if not self.endpoint:
            raise UsageError(f"azure: no endpoint; set {where}.azure_endpoint or {ENDPOINT_ENV}")
        self.supports_vision = True if role_cfg.vision is None else role_cfg.vision
        self._cfg = role_cfg
        self._key = ""
        self._credential: Any = None
        kwargs: dict[str, Any] = {
            "azure_endpoint": self.endpoint,
            "api_version": role_cfg.api_version,
            "max_retries": 0,
            "timeout": role_cfg.timeout_s,
        }
        if role_cfg.auth_mode == "entra":
            self._credential, kwargs["azure_ad_token_provider"] = _entra_token_provider(
                role_cfg.ad_scope, role_cfg.managed_identity_client_id)
        else:
            kwargs["api_key"] = self._key = self._api_key(role_cfg, where, environ)
        self._client = openai.AsyncAzureOpenAI(**kwargs)
        self._new_tokens_param = role_cfg.api_version >= _MAX_COMPLETION_TOKENS_FROM

    @staticmethod
    def _api_key(role_cfg: RoleConfig, where: str, environ: Mapping[str, str]) -> str:
        if role_cfg.api_key is not None and role_cfg.api_key.get_secret_value():
            return role_cfg.api_key.get_secret_value()
        var = role_cfg.api_key_env or KEY_ENV
        key = environ.get(var, "")
        if not key:
            raise UsageError(
                f"azure: no API key; set {var} (or {where}.api_key_env), or use {where}.auth_mode: entra"
            )
        return key

    def token_counter(self) -> TokenCounter:
        return tiktoken_counter(self.model)

    def params(self) -> dict[str, Any]:
        return {
            "deployment": self.deployment,
            "endpoint": self.endpoint,
            "api_version": self._cfg.api_version,
            "structured_output": self._cfg.structured_output,
            "reasoning_effort": self._cfg.reasoning_effort,
            "extra_body": self._cfg.extra_body,
        }

    def _response_format(self, req: Request) -> dict[str, Any] | None:
        mode = self._cfg.structured_output
        if req.schema is None or mode == "prompt":
            return None
        if mode == "json_object_schema":
            return {"type": "json_object"}
        # auto / json_schema / tools: Azure's native json_schema. Not strict: strict mode rejects
        # ordinary pydantic schemas (optional fields, defaults); the client face validates instead.
        return {
            "type": "json_schema",
            "json_schema": {"name": schema_name(req.schema), "schema": req.schema.model_json_schema(),
                            "strict": False},
        }

    async def __call__(self, req: Request) -> Completion:
        kwargs: dict[str, Any] = {"model": self.deployment, "messages": list(req.messages)}
        kwargs["max_completion_tokens" if self._new_tokens_param else "max_tokens"] = req.max_tokens
        if self._cfg.reasoning_effort:
            # Reasoning deployments reject a temperature other than the default.
            kwargs["reasoning_effort"] = self._cfg.reasoning_effort
        else:
            kwargs["temperature"] = req.temperature
        fmt = self._response_format(req)
        if fmt is not None:
            kwargs["response_format"] = fmt
        if self._cfg.extra_body:
            kwargs["extra_body"] = dict(self._cfg.extra_body)
        start = time.monotonic()
        try:
            resp = await self._client.chat.completions.create(**kwargs)
        except self._sdk.OpenAIError as exc:
            raise self._map_error(exc) from None
        return self._completion(resp, time.monotonic() - start)

    def _completion(self, resp: Any, seconds: float) -> Completion:
        if not resp.choices:
            raise ProviderError("azure: reply had no choices", provider=NAME, retryable=False)
        choice = resp.choices[0]
        msg = choice.message
        text = msg.content if msg.content is not None else (getattr(msg, "refusal", None) or "")
        u = resp.usage
        details = getattr(u, "prompt_tokens_details", None) if u else None
        usage = Usage(
            prompt_tokens=(u.prompt_tokens or 0) if u else 0,
            completion_tokens=(u.completion_tokens or 0) if u else 0,
            cached_tokens=(getattr(details, "cached_tokens", None) or 0) if details else 0,
        )
        return Completion(text=text, usage=usage, model=resp.model or self.model, provider=NAME,
                          seconds=seconds, finish_reason=choice.finish_reason)

    def _scrub(self, text: str) -> str:
        """This provider's own key, then any other key shape (core/redact.py), out of an error message."""
        return redact_text(text.replace(self._key, "***") if self._key else text, REDACTED)

    @staticmethod
    def _detail(exc: Any) -> tuple[str, str]:
        """(message, code) from an Azure/OpenAI error body, falling back to the SDK message."""
        body = getattr(exc, "body", None)
        err = body.get("error", body) if isinstance(body, dict) else None
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"]), str(err.get("code") or "")
        return str(getattr(exc, "message", "") or exc), str(getattr(exc, "code", "") or "")

    def _map_error(self, exc: Exception) -> ProviderError:
        sdk = self._sdk
        if isinstance(exc, sdk.APITimeoutError):
            return ProviderError(f"azure: request timed out after {self._cfg.timeout_s:g} s",
                                 provider=NAME, retryable=True)
        if isinstance(exc, sdk.APIConnectionError):
            return ProviderError(f"azure: connection to {self.endpoint} failed: {self._scrub(str(exc))}",
                                 provider=NAME, retryable=True)
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            detail, code = self._detail(exc)
            message = f"azure: HTTP {status}: {self._scrub(detail)}"
            if status in _RETRYABLE or status >= 500:
                return ProviderError(message, provider=NAME, status=status, retryable=True,
                                     retry_after=retry_after_seconds(exc.response.headers))
            if status == 400 and code == "content_filter":
                # One prompt tripping the content filter fails that call, not the whole run.
                return ProviderError(message, provider=NAME, status=status, retryable=False)
            if status in (401, 403):
                hint = "Entra ID credentials" if self._cfg.auth_mode == "entra" else (
                    self._cfg.api_key_env or KEY_ENV)
                message += f" (check {hint})"
            elif status == 404:
                message += f" (check deployment {self.deployment!r} and api_version {self._cfg.api_version})"
            return ProviderFatal(message, provider=NAME, status=status)
        return ProviderFatal(f"azure: {self._scrub(str(exc))}", provider=NAME)

    async def aclose(self) -> None:
        await self._client.close()
        if self._credential is not None:
            self._credential.close()
