"""A cancelled call at an HTTP provider (a real llama_cpp.server) is counted as `cancelled` with its prompt
tokens in the budget and the meter (the server read the request and may bill it); a cancelled call of the
embedded model, or one cancelled before it was sent, stays free."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from skillgrad.config.schema import BudgetSection, RoleConfig
from skillgrad.models.base import Request
from skillgrad.models.budget import Budget
from skillgrad.models.factory import build_llm
from skillgrad.models.meter import Meter
from skillgrad.models.providers.local import LlamaPool, LocalProvider
from skillgrad.models.tokens import request_tokens

LONG = [{"role": "user", "content": "Write a very long story about a dragon, at least 2000 words."}]


def _cancel_after(llm: Any, seconds: float) -> None:
    async def go() -> None:
        task = asyncio.create_task(llm.complete(LONG, max_tokens=1500))
        await asyncio.sleep(seconds)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(go())


def test_a_cancelled_http_call_counts_its_prompt(llama_server: str) -> None:
    budget, meter = Budget(BudgetSection(max_calls=10)), Meter()
    llm = build_llm(RoleConfig(provider="openai", model="smollm2", base_url=llama_server, max_retries=0),
                    "student", budget=budget, meter=meter)
    _cancel_after(llm, 1.5)  # mid-reply: the server is generating 1500 tokens
    prompt = request_tokens(Request(messages=LONG, max_tokens=1500), llm.count_tokens) - 1500
    total = meter.totals()
    assert (budget.calls, budget.tokens, budget.in_flight) == (1, prompt, 0)
    assert (total.calls, total.cancelled, total.failed, total.provider_calls) == (1, 1, 0, 1)
    assert total.prompt_tokens == prompt and total.completion_tokens == 0
    # Cancelled while it waited for a concurrency slot: never sent, free.
    budget2, meter2 = Budget(BudgetSection()), Meter()
    busy = build_llm(RoleConfig(provider="openai", model="smollm2", base_url=llama_server, max_retries=0,
                                concurrency=1), "student", budget=budget2, meter=meter2)

    async def queued() -> None:
        first = asyncio.create_task(busy.complete(LONG, max_tokens=1500))
        second = asyncio.create_task(busy.complete(LONG, max_tokens=1499))
        await asyncio.sleep(1.0)
        second.cancel()
        first.cancel()
        await asyncio.gather(first, second, return_exceptions=True)

    asyncio.run(queued())
    assert (budget2.calls, meter2.totals().cancelled, meter2.totals().provider_calls) == (1, 2, 1)


def test_a_cancelled_local_call_is_free(gguf_path: Path) -> None:
    budget, meter = Budget(BudgetSection()), Meter()
    pool = LlamaPool()
    llm = build_llm(RoleConfig(provider="local", model=str(gguf_path), n_threads=1), "student", budget=budget,
                    meter=meter, make_provider=lambda cfg, role: LocalProvider(cfg, role, pool=pool))
    try:
        _cancel_after(llm, 1.5)
    finally:
        pool.clear()
    total = meter.totals()
    assert (budget.calls, budget.tokens, total.cancelled, total.failed, total.prompt_tokens) == (0, 0, 1, 0, 0)
