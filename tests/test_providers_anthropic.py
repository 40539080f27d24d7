"""Anthropic provider through the real SDK HTTP path, against recorded responses on loopback."""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import require
from pydantic import BaseModel

from skillgrad.config.schema import RoleConfig
from skillgrad.errors import ProviderError, ProviderFatal, UsageError
from skillgrad.models.base import Request
from skillgrad.models.providers import anthropic as provider_mod

require(importlib.util.find_spec("anthropic"), "the anthropic SDK (pip install anthropic)")

_spec = importlib.util.spec_from_file_location(
    "replay_server", Path(__file__).parent / "fixtures" / "recorded" / "replay_server.py")
assert _spec and _spec.loader
replay = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(replay)

KEY = "sk-ant-api03-PLANTED-test-key-0123456789abcdef"


class Verdict(BaseModel):
    label: str
    confidence: float
    reasons: list[str]


@pytest.fixture
def server() -> Iterator[Any]:
    s = replay.ReplayServer("anthropic")
    try:
        yield s
    finally:
        s.close()


def _provider(server: Any, **cfg: Any) -> provider_mod.AnthropicProvider:
    role_cfg = RoleConfig(provider="anthropic", base_url=server.url, timeout_s=10, **cfg)
    return provider_mod.create(role_cfg, "teacher", environ={"ANTHROPIC_API_KEY": KEY})


def _call(p: provider_mod.AnthropicProvider, req: Request) -> Any:
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


def test_plain_chat_sends_system_parameter_and_maps_usage(server: Any) -> None:
    server.reply("message_text")
    out = _call(_provider(server, model="claude-sonnet-4-6"), Request(messages=MESSAGES, max_tokens=64, temperature=0.2))
    assert out.text == "Paris is the capital of France."
    assert out.finish_reason == "end_turn" and out.provider == "anthropic" and out.model == "claude-sonnet-4-6"
    assert (out.usage.prompt_tokens, out.usage.completion_tokens, out.usage.cached_tokens) == (125, 9, 100)
    (got,) = server.received
    assert got["path"] == "/v1/messages"
    assert got["headers"]["authorization"] == f"Bearer {KEY}"  # SDK 2.x sends the key as a bearer token
    assert got["headers"]["anthropic-version"]
    body = got["json"]
    assert body["system"] == "You are terse."
    assert body["messages"] == [{"role": "user", "content": "Capital of France?"}]
    assert body["max_tokens"] == 64 and "temperature" not in body and body["model"] == "claude-sonnet-4-6"
    assert "tools" not in body


def test_structured_output_forces_one_tool(server: Any) -> None:
    server.reply("message_tool_use")
    out = _call(_provider(server), Request(messages=MESSAGES, schema=Verdict))
    assert Verdict.model_validate_json(out.text) == Verdict(label="correct", confidence=0.9,
                                                             reasons=["matches the gold answer"])
    assert out.finish_reason == "tool_use"
    body = server.received[0]["json"]
    assert body["tool_choice"] == {"type": "tool", "name": "Verdict"}
    (tool,) = body["tools"]
    assert tool["name"] == "Verdict" and tool["input_schema"] == Verdict.model_json_schema()


def test_prompt_mode_sends_no_tools_and_effort_goes_to_output_config(server: Any) -> None:
    server.reply("message_text")
    p = _provider(server, structured_output="prompt", reasoning_effort="high")
    _call(p, Request(messages=MESSAGES, schema=Verdict))
    body = server.received[0]["json"]
    assert "tools" not in body and "tool_choice" not in body
    assert body["output_config"] == {"effort": "high"}
    assert p.params()["reasoning_effort"] == "high" and p.params()["base_url"] == server.url


def test_image_url_parts_become_image_blocks(server: Any) -> None:
    server.reply("message_text")
    png = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
    msgs = [{"role": "user", "content": [
        {"type": "text", "text": "What is in the picture?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
    ]}]
    p = _provider(server)
    assert p.supports_vision
    _call(p, Request(messages=msgs))
    content = server.received[0]["json"]["messages"][0]["content"]
    assert content[0] == {"type": "text", "text": "What is in the picture?"}
    assert content[1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}


def test_429_is_retryable_with_retry_after_and_sdk_does_not_retry(server: Any) -> None:
    server.reply("error_429", "message_text")
    with pytest.raises(ProviderError) as err:
        _call(_provider(server), Request(messages=MESSAGES))
    e = err.value
    assert not isinstance(e, ProviderFatal)
    assert e.retryable and e.status == 429 and e.retry_after == 7.0
    assert "rate limit" in str(e)
    assert len(server.received) == 1, "the SDK's own retries must be off"


def test_overloaded_529_and_dropped_connection_are_retryable(server: Any) -> None:
    server.reply("error_529")
    with pytest.raises(ProviderError) as err:
        _call(_provider(server), Request(messages=MESSAGES))
    assert err.value.retryable and err.value.status == 529 and err.value.retry_after is None
    server.reply("drop")
    with pytest.raises(ProviderError) as err:
        _call(_provider(server), Request(messages=MESSAGES))
    assert err.value.retryable and not isinstance(err.value, ProviderFatal)


@pytest.mark.parametrize("recorded,status,text", [
    ("error_401", 401, "invalid x-api-key"),
    ("error_401_echo", 401, "Invalid API key provided"),
    ("error_400", 400, "maximum allowed number of output tokens"),
])
def test_client_errors_are_fatal_with_server_message_and_no_key(server: Any, recorded: str, status: int,
                                                                 text: str) -> None:
    server.reply(recorded)
    with pytest.raises(ProviderFatal) as err:
        _call(_provider(server), Request(messages=MESSAGES))
    e = err.value
    assert e.status == status and not e.retryable
    assert text in str(e)
    for shown in (str(e), repr(e), repr(e.args)):
        assert KEY not in shown
    if recorded == "error_401_echo":
        assert KEY in server.received[0]["headers"]["authorization"]  # the server did echo the real key


def test_missing_key_is_usage_error_naming_the_variable() -> None:
    with pytest.raises(UsageError, match="ANTHROPIC_API_KEY"):
        provider_mod.create(RoleConfig(provider="anthropic"), "teacher", environ={})
    with pytest.raises(UsageError, match="MY_CLAUDE_KEY"):
        provider_mod.create(RoleConfig(provider="anthropic", api_key_env="MY_CLAUDE_KEY"), "teacher",
                            environ={"ANTHROPIC_API_KEY": KEY})


def test_api_key_env_and_params_hold_no_secret(server: Any) -> None:
    server.reply("message_text")
    role_cfg = RoleConfig(provider="anthropic", base_url=server.url, api_key_env="MY_CLAUDE_KEY")
    p = provider_mod.create(role_cfg, "teacher", environ={"MY_CLAUDE_KEY": "sk-ant-other-key"})
    _call(p, Request(messages=MESSAGES))
    assert server.received[0]["headers"]["authorization"] == "Bearer sk-ant-other-key"
    assert "sk-ant" not in json.dumps(p.params()) and p.is_agent is False
