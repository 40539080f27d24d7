"""gather_all: a failure cancels and awaits the other awaitables before it is raised (a stage stopped by its
budget leaves no LLM call running behind its final checkpoint)."""

from __future__ import annotations

import asyncio

import pytest

from skillgrad.core.gather import gather_all
from skillgrad.errors import BudgetExceeded


def test_results_in_order() -> None:
    async def val(x: int, delay: float) -> int:
        await asyncio.sleep(delay)
        return x

    assert asyncio.run(gather_all(val(1, 0.02), val(2, 0.0), val(3, 0.01))) == [1, 2, 3]


def test_a_failure_settles_the_others_before_it_is_raised() -> None:
    ended: list[str] = []

    async def slow(name: str) -> None:
        try:
            await asyncio.sleep(30)
        finally:
            ended.append(name)  # a call in flight records itself as it is cancelled

    async def refused() -> None:
        await asyncio.sleep(0.01)
        raise BudgetExceeded("budget.max_calls reached", kind="calls")

    async def stage() -> list[str]:
        with pytest.raises(BudgetExceeded):
            await gather_all(slow("a"), refused(), slow("b"))
        return list(ended)  # what the checkpoint after the stop would see

    assert sorted(asyncio.run(stage())) == ["a", "b"]
