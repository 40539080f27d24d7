"""`openai` and `azure` are one provider: a feature behaves the same through both, over the real SDK HTTP path
against recorded Azure OpenAI replies on loopback (the reasoning effort of a rewrite call, schema handling,
retry classification)."""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from skillgrad.config.schema import RoleConfig
from skillgrad.errors import ProviderError, ProviderFatal
from skillgrad.models.base import Request
from skillgrad.models.factory import build_llm
from skillgrad.models.grammar import server_safe_schema
from skillgrad.models.providers.azure import create as create_azure
from skillgrad.models.providers.openai import OpenAIProvider

_spec = importlib.util.spec_from_file_location(
    "replay_server", Path(__file__).parent / "fixtures" / "recorded" / "replay_server.py")
assert _spec and _spec.loader
replay = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(replay)

KEY = "azkey-FAMILY-0123456789abcdef0123456789abcdef"
FLAVOURS = ["openai", "azure"]


class Verdict(BaseModel):
    label: str = Field(max_length=20)
    confidence: float


@pytest.fixture
def server() -> Iterator[Any]:
    s = replay.ReplayServer("azure")
    try:
        yield s
    finally:
        s.close()


def _role(flavour: str, server: Any, **cfg: Any) -> RoleConfig:
    if flavour == "azure":
        return RoleConfig(provider="azure", model="gpt-4o", deployment="dep", azure_endpoint=server.url,
                          api_key=KEY, max_retries=0, **cfg)
    return RoleConfig(provider="openai", model="gpt-4o", base_url=f"{server.url}/v1", api_key=KEY, max_retries=0,
                      **cfg)


def _provider(flavour: str, server: Any, **cfg: Any) -> OpenAIProvider:
    rc = _role(flavour, server, **cfg)
    return create_azure(rc, "teacher", environ={}) if flavour == "azure" else OpenAIProvider(rc, "teacher", environ={})


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_rewrite_calls_reasoning_effort_reaches_the_request(flavour: str, server: Any) -> None:
    """engine/stages/update.py sends optimizer.rewrite_reasoning_effort as the call's `reasoning_effort`."""
    server.reply("chat_text", "chat_text")
    llm = build_llm(_role(flavour, server), "teacher")

    async def go() -> None:
        try:
            await llm.complete([{"role": "user", "content": "rewrite"}], max_tokens=30, stage="update",
                               extra={"reasoning_effort": "high"})
            await llm.complete([{"role": "user", "content": "plain"}], max_tokens=30, temperature=0.2)
        finally:
            await llm.aclose()

    asyncio.run(go())
    rewrite, plain = (r["json"] for r in server.received)
    assert rewrite["reasoning_effort"] == "high" and "reasoning_effort" not in plain
    assert plain["temperature"] == 0.2
    # A hosted endpoint (Azure here) drops the temperature a reasoning call would refuse; a compatible server
    # (the openai flavour on loopback) keeps it: the endpoint decides, not the provider's name.
    assert isinstance(llm.provider, OpenAIProvider) and llm.provider.name == flavour
    assert llm.provider.hosted == (flavour == "azure") and ("temperature" in rewrite) == (not llm.provider.hosted)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_llama_cpp_style_schema_is_sent_alike(flavour: str, server: Any) -> None:
    server.reply("chat_json_schema")
    p = _provider(flavour, server, structured_output="json_object_schema")

    async def go() -> None:
        try:
            await p(Request(messages=[{"role": "user", "content": "rate"}], schema=Verdict, max_tokens=40))
        finally:
            await p.aclose()

    asyncio.run(go())
    fmt = server.received[0]["json"]["response_format"]
    assert fmt == {"type": "json_object", "schema": server_safe_schema(Verdict.model_json_schema())}
    assert fmt["schema"]["properties"]["label"]["maxLength"] == 20


def _classify(flavour: str, server: Any, recorded: str) -> tuple[str, int | None, bool, float | None]:
    server.reply(recorded)
    p = _provider(flavour, server)

    async def go() -> None:
        try:
            await p(Request(messages=[{"role": "user", "content": "hi"}], max_tokens=8))
        finally:
            await p.aclose()

    with pytest.raises(ProviderError) as err:
        asyncio.run(go())
    e = err.value
    assert KEY not in str(e) and "\n" not in str(e)
    kind = "fatal" if isinstance(e, ProviderFatal) else "retry" if e.retryable else "fails_call"
    return kind, e.status, e.retryable, e.retry_after


def test_retry_classification_is_the_same_for_both(server: Any) -> None:
    cases = ["error_429", "error_500", "drop", "error_401", "error_401_echo", "error_404", "error_content_filter"]
    got = {flavour: [_classify(flavour, server, c) for c in cases] for flavour in FLAVOURS}
    assert got["openai"] == got["azure"]
    assert [k for k, *_ in got["azure"]] == ["retry", "retry", "retry", "fatal", "fatal", "fatal", "fails_call"]
    assert got["azure"][0][3] == 12.0  # Retry-After honoured
