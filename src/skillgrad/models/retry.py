"""Retries for transient provider failures: exponential backoff with full jitter, Retry-After honoured.

Only `ProviderError(retryable=True)` is retried; `ProviderFatal` and everything else fail at
once. The SDKs' own retries are off, so this is the one place where waits happen and are logged.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable

from skillgrad.core.events import EventSink, null_sink
from skillgrad.core.task_clock import queued
from skillgrad.errors import EndpointUnreachable, ProviderError, ProviderFatal
from skillgrad.models.base import Completion, Handler, Request

BACKOFF_CAP_S = 30.0
RETRY_AFTER_CAP_S = 300.0  # a server asking for longer than this is treated as an outage


def backoff_delay(attempt: int, base_s: float, rng: random.Random, retry_after: float | None) -> float:
    """Wait before retry number `attempt` (1-based): full jitter, or the server's Retry-After."""
    if retry_after is not None and retry_after >= 0:
        return min(retry_after, RETRY_AFTER_CAP_S)
    return rng.uniform(0.0, min(BACKOFF_CAP_S, base_s * (2 ** (attempt - 1))))


class Retry:
    def __init__(self, *, max_retries: int, endpoint: str, base_s: float = 1.0, emit: EventSink = null_sink,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep, seed: int | None = None) -> None:
        self.max_retries = max_retries
        self.endpoint = endpoint
        self.base_s = base_s
        self.emit = emit
        self.sleep = sleep
        self.rng = random.Random(seed)
        self.waited_s = 0.0  # total backoff slept, for benchmarks and reports

    def wrap(self, inner: Handler) -> Handler:
        async def retried(req: Request) -> Completion:
            attempts = self.max_retries + 1
            for attempt in range(1, attempts + 1):
                try:
                    return await inner(req)
                except ProviderFatal:
                    raise
                except ProviderError as e:
                    if not e.retryable:
                        raise
                    if attempt == attempts:  # no sleep after the last attempt
                        # A provider that keeps failing stops the run (state is saved; rerun continues):
                        # scoring its tasks 0 would be a silent failure.
                        reason = str(e).removeprefix(f"{self.endpoint}:").strip()
                        if e.status is None:
                            raise EndpointUnreachable(
                                f"{self.endpoint} failed after {attempts} attempt(s) ({reason}); check "
                                f"model.{req.role or '<role>'}.base_url and that the server is running",
                                provider=e.provider, status=None,
                            ) from e
                        raise ProviderFatal(
                            f"{self.endpoint} failed after {attempts} attempt(s): HTTP {e.status}: {reason}",
                            provider=e.provider, status=e.status,
                        ) from e
                    wait = backoff_delay(attempt, self.base_s, self.rng, e.retry_after)
                    self.emit("llm_retry", attempt=attempt, wait_s=round(wait, 3), status=e.status,
                              reason=str(e)[:200], stage=req.stage, role=req.role,
                              retry_after=e.retry_after)
                    self.waited_s += wait
                    with queued():  # the provider's trouble, not the task's work (core/task_clock.py)
                        await self.sleep(wait)
            raise AssertionError("unreachable")  # the loop always returns or raises

        return retried
