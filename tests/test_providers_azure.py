"""Azure OpenAI provider through the real openai SDK HTTP path, against recorded responses on loopback."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from pydantic import BaseModel

from skillgrad.config.schema import RoleConfig
from skillgrad.errors import ProviderError, ProviderFatal, UsageError
from skillgrad.models.base import Request
from skillgrad.models.providers import azure as provider_mod
from skillgrad.models.providers.openai import OpenAIProvider

_spec = importlib.util.spec_from_file_location(
    "replay_server", Path(__file__).parent / "fixtures" / "recorded" / "replay_server.py")
assert _spec and _spec.loader
replay = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(replay)

KEY = "azkey-PLANTED-0123456789abcdef0123456789abcdef"
DEPLOYMENT = "gpt4o-prod"
API_VERSION = "2024-12-01-preview"


class Verdict(BaseModel):
    label: str
    confidence: float
    reasons: list[str]


@pytest.fixture
def server() -> Iterator[Any]:
    s = replay.ReplayServer("azure")
    try:
        yield s
    finally:
        s.close()


def _provider(server: Any, environ: dict[str, str] | None = None, **cfg: Any) -> OpenAIProvider:
    cfg.setdefault("deployment", DEPLOYMENT)
    role_cfg = RoleConfig(provider="azure", timeout_s=10, **cfg)
    env = {"AZURE_OPENAI_API_KEY": KEY, "AZURE_OPENAI_ENDPOINT": server.url} if environ is None else environ
    return provider_mod.create(role_cfg, "teacher", environ=env)


def _call(p: OpenAIProvider, req: Request) -> Any:
    async def go() -> Any:
        try:
            return await p(req)
        finally:
            await p.aclose()

    return asyncio.run(go())


MESSAGES = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Capital of France?"},
]


def test_plain_chat_hits_deployment_path_with_api_key_header(server: Any) -> None:
    server.reply("chat_text")
    out = _call(_provider(server), Request(messages=MESSAGES, max_tokens=64, temperature=0.3))
    assert out.text == "Paris is the capital of France."
    assert out.finish_reason == "stop" and out.provider == "azure" and out.model == "gpt-4o-2024-11-20"
    assert (out.usage.prompt_tokens, out.usage.completion_tokens, out.usage.cached_tokens) == (31, 8, 0)
    (got,) = server.received
    url = urlsplit(got["path"])
    assert url.path == f"/openai/deployments/{DEPLOYMENT}/chat/completions"
    assert parse_qs(url.query) == {"api-version": [API_VERSION]}
    assert got["headers"]["api-key"] == KEY and "authorization" not in got["headers"]
    body = got["json"]
    assert body["messages"] == MESSAGES
    assert body["max_completion_tokens"] == 64 and body["temperature"] == 0.3
    assert "response_format" not in body


def test_json_schema_response_format(server: Any) -> None:
    server.reply("chat_json_schema")
    out = _call(_provider(server), Request(messages=MESSAGES, schema=Verdict))
    assert Verdict.model_validate_json(out.text).label == "correct"
    assert out.usage.cached_tokens == 128 and out.usage.prompt_tokens == 212
    got = server.received[0]
    assert urlsplit(got["path"]).path == f"/openai/deployments/{DEPLOYMENT}/chat/completions"
    fmt = got["json"]["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "Verdict"
    assert fmt["json_schema"]["schema"] == Verdict.model_json_schema()


def test_config_endpoint_model_as_deployment_reasoning_and_old_api_version(server: Any) -> None:
    server.reply("chat_text", "chat_text")
    p = _provider(server, environ={"AZURE_OPENAI_API_KEY": KEY}, deployment="", model="o4-mini",
                  azure_endpoint=server.url, reasoning_effort="low")
    _call(p, Request(messages=MESSAGES, max_tokens=32))
    body = server.received[0]["json"]
    assert urlsplit(server.received[0]["path"]).path == "/openai/deployments/o4-mini/chat/completions"
    assert body["reasoning_effort"] == "low" and "temperature" not in body
    old = _provider(server, api_version="2024-06-01")
    _call(old, Request(messages=MESSAGES, max_tokens=32))
    assert server.received[1]["json"]["max_tokens"] == 32 and "max_completion_tokens" not in server.received[1]["json"]


def test_429_is_retryable_with_retry_after_and_sdk_does_not_retry(server: Any) -> None:
    server.reply("error_429", "chat_text")
    with pytest.raises(ProviderError) as err:
        _call(_provider(server), Request(messages=MESSAGES))
    e = err.value
    assert not isinstance(e, ProviderFatal)
    assert e.retryable and e.status == 429 and e.retry_after == 12.0
    assert "exceeded token rate limit" in str(e)
    assert len(server.received) == 1, "the SDK's own retries must be off"


def test_500_and_dropped_connection_are_retryable(server: Any) -> None:
    server.reply("error_500")
    with pytest.raises(ProviderError) as err:
        _call(_provider(server), Request(messages=MESSAGES))
    assert err.value.retryable and err.value.status == 500
    server.reply("drop")
    with pytest.raises(ProviderError) as err:
        _call(_provider(server), Request(messages=MESSAGES))
    assert err.value.retryable and not isinstance(err.value, ProviderFatal)


@pytest.mark.parametrize("recorded,status,text", [
    ("error_401", 401, "Access denied due to invalid subscription key"),
    ("error_401_echo", 401, "Incorrect API key provided"),
    ("error_404", 404, "deployment for this resource does not exist"),
])
def test_client_errors_are_fatal_with_server_message_and_no_key(server: Any, recorded: str, status: int,
                                                                 text: str) -> None:
    server.reply(recorded)
    with pytest.raises(ProviderFatal) as err:
        _call(_provider(server), Request(messages=MESSAGES))
    e = err.value
    assert e.status == status and not e.retryable
    assert text in str(e) and "\n" not in str(e)
    for shown in (str(e), repr(e), repr(e.args)):
        assert KEY not in shown
    if recorded == "error_401_echo":
        assert server.received[0]["headers"]["api-key"] == KEY


def test_content_filter_fails_the_call_not_the_run(server: Any) -> None:
    server.reply("error_content_filter")
    with pytest.raises(ProviderError) as err:
        _call(_provider(server), Request(messages=MESSAGES))
    assert not isinstance(err.value, ProviderFatal) and not err.value.retryable
    assert "content management policy" in str(err.value)


def test_missing_settings_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="AZURE_OPENAI_ENDPOINT"):
        provider_mod.create(RoleConfig(provider="azure", deployment="d"), "teacher", environ={"AZURE_OPENAI_API_KEY": KEY})
    with pytest.raises(UsageError, match="AZURE_OPENAI_API_KEY"):
        provider_mod.create(RoleConfig(provider="azure", deployment="d"), "teacher",
                            environ={"AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com"})
    with pytest.raises(UsageError, match="deployment"):
        provider_mod.create(RoleConfig(provider="azure"), "teacher", environ={})
    with pytest.raises(UsageError, match="api: chat"):
        provider_mod.create(RoleConfig(provider="azure", deployment="d", api="responses"), "teacher",
                            environ={"AZURE_OPENAI_API_KEY": KEY, "AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com"})


def test_plain_openai_variables_are_not_used_for_azure() -> None:
    with pytest.raises(UsageError, match="AZURE_OPENAI_API_KEY"):
        provider_mod.create(RoleConfig(provider="azure", deployment="d"), "teacher",
                            environ={"AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com", "OPENAI_API_KEY": "sk-x"})


def test_entra_without_azure_identity_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "azure.identity", None)  # import fails as if not installed
    with pytest.raises(UsageError, match=r"pip install skillgrad\[azure\]"):
        provider_mod.create(RoleConfig(provider="azure", deployment="d", auth_mode="entra",
                                       azure_endpoint="https://x.openai.azure.com"), "teacher", environ={})


def test_params_hold_no_secret(server: Any) -> None:
    p = _provider(server)
    params = json.dumps(p.params())
    assert KEY not in params and DEPLOYMENT in params and p.is_agent is False and p.supports_vision
    asyncio.run(p.aclose())
