"""Budgets hold under concurrency: each call reserves its share before it is sent, so 16 calls racing
for a budget of 5 calls (or 5 calls' worth of tokens) send at most 5 requests to a real loopback server."""

from __future__ import annotations

import asyncio

import pytest

from skillgrad.config.schema import BudgetSection, RoleConfig
from skillgrad.errors import BudgetExceeded
from skillgrad.models.budget import Budget
from skillgrad.models.factory import build_llm
from skillgrad.models.fakes import Fault

N = 16


def _race(llm, max_tokens: int = 16) -> list[object]:
    async def one(i: int) -> object:
        try:
            return await llm.complete([{"role": "user", "content": f"q{i:02d}"}], max_tokens=max_tokens)
        except BudgetExceeded as e:
            return e

    async def all_of() -> list[object]:
        return list(await asyncio.gather(*(one(i) for i in range(N))))

    return asyncio.run(all_of())


def _llm(base_url: str, budget: Budget, event_sink, model: str = "fake"):
    role = RoleConfig(provider="openai", model=model, base_url=base_url, concurrency=8, max_retries=0)
    return build_llm(role, "student", budget=budget, emit=event_sink)


def test_call_budget_holds_for_16_concurrent_calls(fault_server, event_sink):
    fault_server.default = Fault.slow(0.3)  # every call is still in flight when the others are checked
    budget = Budget(BudgetSection(max_calls=5), emit=event_sink)
    results = _race(_llm(fault_server.base_url, budget, event_sink), max_tokens=8)
    assert len(fault_server.requests) == 5
    assert sum(not isinstance(r, BudgetExceeded) for r in results) == 5
    refused = [r for r in results if isinstance(r, BudgetExceeded)]
    assert len(refused) == N - 5 and all(r.kind == "calls" for r in refused)
    assert budget.calls == 5 and budget.in_flight == 0


def test_token_budget_holds_for_16_concurrent_calls(fault_server, event_sink):
    # The fake bills 18 tokens a call; 90 tokens is five calls' worth. Each request reserves its prompt
    # (by the role's counter) plus max_tokens; calls that do not fit beside those in flight wait.
    fault_server.default = Fault.slow(0.2)
    budget = Budget(BudgetSection(max_tokens=90), emit=event_sink)
    results = _race(_llm(fault_server.base_url, budget, event_sink))
    assert len(fault_server.requests) == 5
    assert budget.tokens == 90
    assert all(r.kind == "tokens" for r in results if isinstance(r, BudgetExceeded))
    assert any(e["kind"] == "budget" for e in event_sink.of("llm_wait"))


def test_cancelled_call_releases_its_reservation(fault_server, event_sink):
    """The reservation (prompt plus reply cap) is released; an HTTP server that had the request may bill its
    prompt, so the call and its prompt tokens stay counted (tests/test_cancelled_bills.py, on a real server)."""
    fault_server.default = Fault.slow(2.0)
    budget = Budget(BudgetSection(max_calls=2), emit=event_sink)
    llm = _llm(fault_server.base_url, budget, event_sink)

    async def cancel_then_call() -> str:
        task = asyncio.create_task(llm.complete([{"role": "user", "content": "slow"}], max_tokens=400))
        await asyncio.sleep(0.3)
        assert budget.in_flight == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert budget.in_flight == 0 and budget.calls == 1 and 0 < budget.tokens < 400
        fault_server.default = Fault.ok("fine")
        return (await llm.complete([{"role": "user", "content": "next"}], max_tokens=4)).text

    assert asyncio.run(cancel_then_call()) == "fine"
    assert budget.calls == 2


@pytest.mark.slow
def test_call_budget_holds_against_a_real_llama_server(llama_server, event_sink):
    budget = Budget(BudgetSection(max_calls=5), emit=event_sink)
    llm = _llm(llama_server, budget, event_sink, model="smollm2")
    results = _race(llm, max_tokens=4)
    done = [r for r in results if not isinstance(r, BudgetExceeded)]
    assert len(done) == 5 and budget.calls == 5
    assert llm.meter.provider_calls == 5  # requests that reached the server
    assert all(r.usage.completion_tokens <= 4 for r in done)
