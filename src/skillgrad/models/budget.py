"""Hard budgets (calls, tokens, USD, minutes) shared by both roles.

It sits below the cache: a cache hit costs nothing and passes even when the budget is spent, so
a resumed run replays its finished work for free. Above the retry layer, one logical provider
call counts once however many attempts it took. A spent budget raises BudgetExceeded *before*
the next provider request.

Concurrent calls: each call *reserves* its share before it is sent (one call, its estimated tokens
and cost) and settles to the real usage when it ends (a failed call keeps its call, a cancelled one
releases everything, except at an HTTP provider that had the request: it keeps the call and its prompt
tokens, which the backend may bill, models/cancelled.py). A call that would not fit beside the calls in
flight waits for them to settle; one that would exceed `max_calls` is refused. So many workers cannot all pass the check at once:
the overshoot is at most the difference between one call's estimate and its real usage.
Every settled call is appended to the spend log (when there is one), so a resumed run counts what
was spent after the last checkpoint too.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from skillgrad.config.schema import BudgetSection
from skillgrad.core.events import EventSink, null_sink
from skillgrad.core.task_clock import queued
from skillgrad.errors import AnswersNeeded, BudgetExceeded
from skillgrad.models.base import Completion, Handler, Request, Usage
from skillgrad.models.cancelled import CancelledBills
from skillgrad.models.spend_log import SpendLog

WARN_AT = (0.5, 0.8)
WAIT_POLL_S = 0.02  # how often a call waiting for room re-checks (the budget is shared across loops)

# (estimated tokens, estimated USD or None when unpriced) of a request before it is sent
Estimator = Callable[[Request], tuple[int, float | None]]


@dataclass
class Hold:
    """What one call in flight has reserved."""

    tokens: int
    usd: float


class Budget:
    def __init__(self, limits: BudgetSection | None = None, emit: EventSink = null_sink,
                 log: SpendLog | None = None) -> None:
        self.limits = limits or BudgetSection.model_validate({})
        self.emit = emit
        self.log = log
        self.calls = 0
        self.tokens = 0
        self.usd = 0.0
        self.unpriced_calls = 0
        self.seq = log.seq if log is not None else 0  # last spend-log record counted here
        self._held = Hold(0, 0.0)
        self._held_calls = 0
        self._elapsed_before = 0.0  # minutes restored from an earlier process
        self._start = time.monotonic()
        self._warned: set[str] = set()
        self._lock = threading.Lock()

    # ---- state --------------------------------------------------------------------------------
    @property
    def minutes(self) -> float:
        return self._elapsed_before + (time.monotonic() - self._start) / 60

    @property
    def in_flight(self) -> int:
        return self._held_calls

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {"calls": self.calls, "tokens": self.tokens, "usd": self.usd, "minutes": self.minutes,
                    "unpriced_calls": self.unpriced_calls, "warned": sorted(self._warned), "seq": self.seq}

    def restore(self, snap: dict[str, Any] | None) -> None:
        """Continue from a checkpoint `snapshot()`, plus every call the spend log holds after it."""
        snap = snap or {}
        with self._lock:
            self.calls = int(snap.get("calls", 0))
            self.tokens = int(snap.get("tokens", 0))
            self.usd = float(snap.get("usd", 0.0))
            self.unpriced_calls = int(snap.get("unpriced_calls", 0))
            self._elapsed_before = float(snap.get("minutes", 0.0))
            self._start = time.monotonic()
            self._warned = set(snap.get("warned", []))
            self.seq = int(snap.get("seq", 0))
            if self.log is not None:
                for rec in self.log.since("budget", self.seq):
                    self._count(int(rec.get("tokens", 0)), rec.get("usd"))
                    self._elapsed_before = max(self._elapsed_before, float(rec.get("minutes", 0.0)))
                    self.seq = int(rec["seq"])

    def _usage(self) -> dict[str, tuple[float, float]]:
        lim = self.limits
        return {"calls": (self.calls, lim.max_calls), "tokens": (self.tokens, lim.max_tokens),
                "usd": (self.usd, lim.max_usd), "minutes": (self.minutes, lim.max_minutes)}

    # ---- checks -------------------------------------------------------------------------------
    def _spent(self) -> None:
        for kind, (used, limit) in self._usage().items():
            if limit and used >= limit:
                raise BudgetExceeded(
                    f"budget.max_{kind} reached ({used:.4g} of {limit:.4g}); raise it or resume later",
                    kind=kind,
                )

    def check(self) -> None:
        """Raise BudgetExceeded if any limit is reached."""
        with self._lock:
            self._spent()

    def _try_reserve(self, tokens: int, usd: float) -> Hold | None:
        """Reserve room for one call, None when it must wait for calls in flight; raises when spent."""
        lim = self.limits
        with self._lock:
            self._spent()
            if lim.max_calls and self.calls + self._held_calls >= lim.max_calls:
                raise BudgetExceeded(
                    f"budget.max_calls reached ({self.calls} done and {self._held_calls} in flight of "
                    f"{lim.max_calls}); raise it or resume later", kind="calls")
            if self._held_calls:  # alone, a call may go while anything is left; beside others, it must fit
                if lim.max_tokens and self.tokens + self._held.tokens + tokens > lim.max_tokens:
                    return None
                if lim.max_usd and self.usd + self._held.usd + usd > lim.max_usd:
                    return None
            self._held_calls += 1
            self._held.tokens += tokens
            self._held.usd += usd
            return Hold(tokens, usd)

    async def reserve(self, tokens: int, usd: float, req: Request | None = None) -> Hold:
        waited = False
        while True:
            hold = self._try_reserve(tokens, usd)
            if hold is not None:
                return hold
            if not waited:
                waited = True
                self.emit("llm_wait", kind="budget", in_flight=self._held_calls,
                          stage=req.stage if req else "", role=req.role if req else "")
            with queued():  # waiting for calls in flight to settle is not the task's work (core/task_clock.py)
                await asyncio.sleep(WAIT_POLL_S)

    def _release(self, hold: Hold) -> None:
        self._held_calls -= 1
        self._held.tokens -= hold.tokens
        self._held.usd -= hold.usd

    def _count(self, tokens: int, usd: float | None) -> None:
        self.calls += 1
        self.tokens += tokens
        if usd is None:
            self.unpriced_calls += 1
        else:
            self.usd += usd

    def settle(self, hold: Hold | None, comp: Completion | None) -> None:
        """A call ended: replace its reservation by what it used (a failed call still counts as a call:
        it may have been billed). `hold=None` counts a call that reserved nothing."""
        tokens = comp.usage.total if comp is not None else 0
        usd = (comp.cost if comp is not None else 0.0)
        with self._lock:
            if hold is not None:
                self._release(hold)
            self._count(tokens, usd)
            if self.log is not None:
                self.seq = self.log.append("budget", {"tokens": tokens, "usd": usd,
                                                      "minutes": round(self.minutes, 4)})
        self._warn()

    def cancel(self, hold: Hold) -> None:
        """A call cancelled before it ended: nothing to count."""
        with self._lock:
            self._release(hold)

    def _warn(self) -> None:
        pending: list[dict[str, Any]] = []
        with self._lock:
            for kind, (used, limit) in self._usage().items():
                if not limit:
                    continue
                for level in WARN_AT:
                    tag = f"{kind}:{int(level * 100)}"
                    if used >= level * limit and tag not in self._warned:
                        self._warned.add(tag)
                        pending.append({"kind": kind, "percent": int(level * 100), "used": round(used, 6),
                                        "limit": limit})
        for fields in pending:
            self.emit("budget_warning", **fields)

    def add(self, comp: Completion) -> None:
        self.settle(None, comp)

    def add_failed(self) -> None:
        self.settle(None, None)

    def wrap(self, inner: Handler, estimate: Estimator | None = None, bills: CancelledBills | None = None) -> Handler:
        """`bills`: an HTTP provider's cancelled requests (models/cancelled.py), counted with their prompt."""

        async def budgeted(req: Request) -> Completion:
            tokens, usd = estimate(req) if estimate is not None else (req.max_tokens, 0.0)
            hold = await self.reserve(tokens, usd or 0.0, req)
            try:
                comp = await inner(req)
            except (BudgetExceeded, AnswersNeeded):  # refused, or a handoff question: counted when answered
                self.cancel(hold)
                raise
            except asyncio.CancelledError:
                billed = bills.peek(req) if bills is not None else None
                if billed is None:
                    self.cancel(hold)
                else:  # the backend had the request: its prompt may be billed
                    self.settle(hold, Completion(text="", usage=Usage(prompt_tokens=billed[0]), cost=billed[1]))
                raise
            except Exception:
                self.settle(hold, None)
                raise
            self.settle(hold, comp)
            return comp

        return budgeted
