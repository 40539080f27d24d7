"""The meter: every logical call counted (failures, cache hits), prices, summary/restore."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel, Field

from skillgrad.config.schema import RoleConfig
from skillgrad.errors import StructuredOutputError
from skillgrad.models.base import Usage
from skillgrad.models.cache import LLMCache
from skillgrad.models.factory import build_llm
from skillgrad.models.fakes import Fault
from skillgrad.models.meter import Meter
from skillgrad.models.prices import Pricing, load_prices


class Verdict(BaseModel):
    ok: bool
    why: str = Field(max_length=50)


def _llm(server, sink, model="m", **kw):
    return build_llm(RoleConfig(provider="openai", model=model, base_url=server.base_url, max_retries=0),
                     "teacher", emit=sink, **kw)


def test_unknown_price_is_none_and_reported_once(fault_server, event_sink):
    meter = Meter(emit=event_sink)
    llm = _llm(fault_server, event_sink, model="mystery-model-9", meter=meter)
    a = asyncio.run(llm.complete([{"role": "user", "content": "1"}], stage="reflect"))
    b = asyncio.run(llm.complete([{"role": "user", "content": "2"}], stage="reflect"))
    assert a.cost is None and b.cost is None
    assert len(event_sink.of("price_unknown")) == 1
    assert event_sink.of("price_unknown")[0]["model"] == "mystery-model-9"
    summary = meter.summary()
    assert summary["total"]["cost"] is None  # unknown, never 0
    assert summary["by_stage"]["reflect"]["teacher"]["calls"] == 2
    assert [c["cost"] for c in event_sink.of("llm_call")] == [None, None]


def test_known_price_and_local_free():
    pricing = Pricing(load_prices())
    cost = pricing.cost("openai", "gpt-4o-mini-2024-07-18", Usage(1_000_000, 1_000_000))
    assert cost == pytest.approx(0.15 + 0.60)  # the dated name of gpt-4o-mini, not gpt-4o
    assert pricing.cost("azure", "gpt-4o", Usage(1_000_000, 0)) == pytest.approx(2.5)
    assert pricing.cost("local", "anything.gguf", Usage(10, 10)) == 0.0
    assert pricing.cost("openai", "gpt-5.4", Usage(1, 1)) is None  # no false prefix match on gpt-5


def test_structured_failure_is_recorded_with_raw_text(fault_server, event_sink):
    fault_server.script(Fault.ok("I think it is fine, no JSON here"))
    meter = Meter(emit=event_sink)
    llm = _llm(fault_server, event_sink, meter=meter)
    with pytest.raises(StructuredOutputError) as info:
        asyncio.run(llm.complete([{"role": "user", "content": "judge"}], schema=Verdict, stage="gate"))
    assert info.value.raw == "I think it is fine, no JSON here"
    (call,) = event_sink.of("llm_call")
    assert call["ok"] is False and "StructuredOutputError" in call["error"]
    assert call["prompt_tokens"] == 11 and call["completion_tokens"] == 7  # the tokens still count
    t = meter.totals()
    assert t.calls == 1 and t.failed == 1 and t.provider_calls == 1 and t.prompt_tokens == 11


def test_cut_reply_under_schema_is_structured_error(fault_server, event_sink, tmp_path):
    cache = LLMCache(tmp_path / "c.sqlite")
    llm = _llm(fault_server, event_sink, cache=cache)
    fault_server.default = Fault.ok('{"ok": true, "why": "short"}')
    asyncio.run(llm.complete([{"role": "user", "content": "x"}], schema=Verdict))
    # the same raw text with finish_reason=length must not parse silently
    fault_server.script(Fault.ok('{"ok": true, "why": "short"}', finish_reason="length"))
    with pytest.raises(StructuredOutputError, match="max_tokens") as info:
        asyncio.run(llm.complete([{"role": "user", "content": "y"}], schema=Verdict))
    assert info.value.raw == '{"ok": true, "why": "short"}'


def test_summary_restore_and_provider_calls(fault_server, event_sink, tmp_path):
    cache = LLMCache(tmp_path / "c.sqlite")
    meter = Meter(emit=event_sink)
    llm = _llm(fault_server, event_sink, meter=meter, cache=cache)
    student = build_llm(RoleConfig(provider="openai", model="m", base_url=fault_server.base_url), "student",
                        meter=meter, cache=cache)
    fault_server.script(Fault.error(401, "denied"))

    async def run():
        with pytest.raises(Exception, match="denied"):
            await llm.complete([{"role": "user", "content": "a"}], stage="reflect")
        await llm.complete([{"role": "user", "content": "b"}], stage="reflect")
        await llm.complete([{"role": "user", "content": "b"}], stage="reflect")  # hit
        await student.complete([{"role": "user", "content": "c"}], stage="rollout")

    asyncio.run(run())
    s = meter.summary()
    json.dumps(s)  # JSON-able
    reflect = s["by_stage"]["reflect"]["teacher"]
    assert (reflect["calls"], reflect["failed"], reflect["cache_hits"], reflect["provider_calls"]) == (3, 1, 1, 2)
    assert s["by_role"]["student"]["calls"] == 1 and s["total"]["calls"] == 4
    assert s["total"]["prompt_tokens"] == 22 and s["total"]["cached_tokens"] == 18
    resumed = Meter()
    resumed.restore(s)
    assert resumed.summary() == s
    keys = [c["key"] for c in event_sink.of("llm_call")]
    assert all(len(k) == 16 for k in keys) and keys[1] == keys[2]


def test_prices_match_exact_or_dated_names_never_a_prefix():
    pricing = Pricing(load_prices())
    gpt4o = pricing.lookup("openai", "gpt-4o")
    assert gpt4o is not None
    for dated in ("gpt-4o-2024-08-06", "GPT-4o-2024-08-06", "gpt-4o-latest"):
        assert pricing.lookup("openai", dated) == gpt4o, dated
    assert pricing.lookup("anthropic", "claude-3-5-sonnet-20241022") == pricing.lookup("anthropic", "claude-3-5-sonnet")
    assert pricing.lookup("openai", "gpt-3.5-turbo-0125") == pricing.lookup("openai", "gpt-3.5-turbo")
    for dearer in ("o1-pro", "gpt-5-pro", "o3-pro-2025-06-10", "gpt-4o-audio-preview", "gpt-4o-mini-realtime"):
        assert pricing.lookup("openai", dearer) is None, dearer  # a prefix is another model


def test_max_usd_refuses_an_unpriced_role_and_keeps_local_free(gguf_path, tmp_path):
    from skillgrad.config.schema import BudgetSection, RoleConfig
    from skillgrad.errors import ConfigError
    from skillgrad.models.budget import Budget
    from skillgrad.models.factory import build_llm

    budget = Budget(BudgetSection(max_usd=1.0))
    local = build_llm(RoleConfig(provider="local", model=str(gguf_path)), "student", budget=budget)
    assert local.name  # embedded models are priced at 0: allowed under max_usd
    role = RoleConfig(provider="openai", model="o1-pro", base_url="http://127.0.0.1:9/v1", api_key="sk-test")
    with pytest.raises(ConfigError, match=r"budget.max_usd .* judge model 'o1-pro' .*model.prices_file"):
        build_llm(role, "judge", budget=budget)
    build_llm(role, "judge", budget=Budget(BudgetSection(max_calls=5)))  # no max_usd: no price needed
