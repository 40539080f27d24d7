"""`gather_all`: asyncio.gather that leaves no call running behind a failure.

Plain gather re-raises the first error while its other awaitables keep running: a stage stopped by its
budget would save the run's state and summary while its sibling LLM calls were still in flight, and those
calls would be metered (or billed) after the last checkpoint. Here the others are cancelled and awaited
first, as the rollout pool does (exec/pool.py), so the error leaves the stage with its calls settled.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def gather_all(*aws: Awaitable[T]) -> list[T]:
    """Results in order; on the first error (or a cancel) the rest are cancelled and awaited, then it is raised."""
    tasks = [asyncio.ensure_future(a) for a in aws]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


A = TypeVar("A")
B = TypeVar("B")


async def gather_pair(a: Awaitable[A], b: Awaitable[B]) -> tuple[A, B]:
    """`gather_all` of two awaitables of different types, typed."""
    first, second = await gather_all(a, b)  # type: ignore[arg-type]
    return first, second  # type: ignore[return-value]
