"""Per-role concurrency, requests-per-minute and tokens-per-minute limits (innermost middleware).

asyncio primitives bind to the loop that first waits on them, and tests (and the CLI) may run
several loops over one client's life, so the semaphore is kept per running loop.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref

from skillgrad.core.events import EventSink, null_sink
from skillgrad.core.task_clock import queued
from skillgrad.models.base import Completion, Handler, Request
from skillgrad.models.tokens import request_tokens


class TokenBucket:
    """`rate_per_min` units per minute, burst up to one minute's worth. Thread-safe, loop-agnostic."""

    def __init__(self, rate_per_min: float) -> None:
        self.capacity = float(rate_per_min)
        self.rate = rate_per_min / 60.0
        self.level = self.capacity
        self.stamp = time.monotonic()
        self._lock = threading.Lock()

    def reserve(self, amount: float) -> float:
        """Take `amount` (going negative if needed) and return how long to wait until it is covered."""
        amount = min(amount, self.capacity)  # a single huge request must not wait forever
        with self._lock:
            now = time.monotonic()
            self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
            self.stamp = now
            self.level -= amount
            return 0.0 if self.level >= 0 else -self.level / self.rate


class Limits:
    def __init__(self, *, concurrency: int, rpm: int = 0, tpm: int = 0, emit: EventSink = null_sink) -> None:
        self.concurrency = max(1, concurrency)
        self.rpm = TokenBucket(rpm) if rpm else None
        self.tpm = TokenBucket(tpm) if tpm else None
        self.emit = emit
        self._sems: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._sems.get(loop)
        if sem is None:
            sem = self._sems[loop] = asyncio.Semaphore(self.concurrency)
        return sem

    async def _wait(self, bucket: TokenBucket | None, amount: float, kind: str, req: Request) -> None:
        if bucket is None:
            return
        wait = bucket.reserve(amount)
        if wait > 0:
            self.emit("llm_wait", kind=kind, wait_s=round(wait, 3), stage=req.stage, role=req.role)
            with queued():  # a rate limit's wait is not the task's work (core/task_clock.py)
                await asyncio.sleep(wait)

    def wrap(self, inner: Handler) -> Handler:
        async def limited(req: Request) -> Completion:
            sem = self._semaphore()
            if sem.locked():
                self.emit("llm_wait", kind="concurrency", limit=self.concurrency, stage=req.stage, role=req.role)
            with queued():  # nor is the wait for a slot
                await sem.acquire()
            try:
                await self._wait(self.rpm, 1, "rpm", req)
                await self._wait(self.tpm, request_tokens(req), "tpm", req)
                return await inner(req)
            finally:
                sem.release()

        return limited
