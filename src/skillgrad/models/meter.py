"""The meter: counts every logical LLM call (failed ones and cache hits included), per stage and role.

It is the outermost middleware, so what it records is what the caller saw. `provider_calls`
(requests that actually reached a backend, retries included) is counted by a tap just above the
provider, which also prices each reply.

With a spend log, every tally change is also appended there (under the same lock, so a summary and
its `seq` agree), and `restore` adds what the log holds after the checkpoint: a SIGKILL between two
checkpoints loses no calls. The token counter each role used is part of the summary.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, fields
from typing import Any

from skillgrad.core.events import EventSink, null_sink
from skillgrad.errors import AnswersNeeded
from skillgrad.models.base import Completion, Handler, Request
from skillgrad.models.cancelled import CancelledBills
from skillgrad.models.prices import Pricing
from skillgrad.models.spend_log import SpendLog


@dataclass
class Tally:
    calls: int = 0
    failed: int = 0
    cancelled: int = 0  # calls cancelled before their reply (not failed); an HTTP one keeps its prompt tokens
    cache_hits: int = 0
    provider_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # tokens of replies served from our cache (not re-billed)
    prompt_reused: int = 0  # prompt tokens the provider read from its own prompt cache (KV reuse, prompt caching)
    seconds: float = 0.0
    cost: float | None = 0.0  # None once any priced call had an unknown price

    def add(self, other: Tally) -> None:
        for f in fields(self):
            if f.name == "cost":
                continue
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        self.cost = None if self.cost is None or other.cost is None else self.cost + other.cost

    def as_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["seconds"] = round(self.seconds, 3)
        d["total_tokens"] = self.prompt_tokens + self.completion_tokens
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Tally:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


class Meter:
    def __init__(self, pricing: Pricing | None = None, emit: EventSink = null_sink,
                 log: SpendLog | None = None) -> None:
        self.emit = emit
        self.pricing = pricing or Pricing(emit=emit)
        self.log = log
        self.seq = log.seq if log is not None else 0  # last spend-log record counted here
        self.token_counters: dict[str, str] = {}  # role -> counter name
        self._tallies: dict[tuple[str, str], Tally] = {}
        self._lock = threading.Lock()

    def _tally(self, stage: str, role: str) -> Tally:
        return self._tallies.setdefault((stage or "-", role or "-"), Tally())

    def _add(self, stage: str, role: str, one: Tally) -> None:
        """Count `one` (caller holds the lock) and append it to the spend log."""
        self._tally(stage, role).add(one)
        if self.log is not None:
            self.seq = self.log.append("meter", {"stage": stage or "-", "role": role or "-",
                                                 "tally": {k: v for k, v in one.as_dict().items() if v or k == "cost"}})

    def note_counter(self, role: str, name: str) -> None:
        with self._lock:
            first = self.token_counters.get(role) != name
            self.token_counters[role] = name
        if first:
            self.emit("token_counter", role=role, counter=name)

    # ---- handlers -----------------------------------------------------------------------------
    def wrap(self, inner: Handler, *, provider: str, model: str, params: dict[str, Any],
             bills: CancelledBills | None = None) -> Handler:
        """Outermost handler: records one `llm_call` per logical call (`bills`: see models/cancelled.py)."""

        async def metered(req: Request) -> Completion:
            start = time.perf_counter()
            comp: Completion | None = None
            error: BaseException | None = None
            try:
                comp = await inner(req)
                return comp
            except BaseException as e:  # noqa: B036 - recorded, then re-raised unchanged
                error = e
                comp = getattr(e, "completion", None)  # structured-output failures carry the reply
                raise
            finally:
                billed = bills.pop(req) if bills is not None and isinstance(error, asyncio.CancelledError) else None
                self._record(req, comp, error, time.perf_counter() - start, provider=provider, model=model,
                             key=req.cache_key(provider, model, params), billed=billed)

        return metered

    def tap(self, inner: Handler, *, provider: str, model: str, price_as: str | None = None) -> Handler:
        """Innermost handler: counts requests that reached the provider and prices replies (by `price_as`'s
        table when given: a loopback server's model is priced as a local one)."""

        async def tapped(req: Request) -> Completion:
            try:
                comp = await inner(req)
            except AnswersNeeded:  # a handoff question: the request is made when its answer is read
                raise
            except BaseException:
                self._count_request(req)
                raise
            self._count_request(req)
            if comp.cost is None:  # agents may report their own spend
                comp.cost = self.pricing.cost(price_as or provider, model, comp.usage)
            comp.provider = comp.provider or provider
            comp.model = comp.model or model
            return comp

        return tapped

    def _count_request(self, req: Request) -> None:
        with self._lock:
            self._add(req.stage, req.role, Tally(provider_calls=1, cost=0.0))

    def _record(self, req: Request, comp: Completion | None, error: BaseException | None, seconds: float,
                *, provider: str, model: str, key: str, billed: tuple[int, float | None] | None = None) -> None:
        # A handoff question that stops the run is not a call yet: it is counted once, when its answer is read.
        if isinstance(error, (KeyboardInterrupt, SystemExit, AnswersNeeded)):
            return
        one = Tally(calls=1, seconds=seconds)
        cached = bool(comp and comp.cached)
        cost: float | None = 0.0
        if comp is not None:
            if cached:
                one.cache_hits = 1
                one.cached_tokens = comp.usage.total
            else:
                one.prompt_tokens = comp.usage.prompt_tokens
                one.completion_tokens = comp.usage.completion_tokens
                one.prompt_reused = comp.usage.cached_tokens
                cost = comp.cost
        elif billed is not None:  # cancelled while an HTTP backend had the request: its prompt may be billed
            one.prompt_tokens, cost = billed
        elif error is not None:
            cost = 0.0  # nothing billed that we know of
        one.cost = cost
        if isinstance(error, asyncio.CancelledError):
            one.cancelled = 1
        elif error is not None:
            one.failed = 1
        with self._lock:
            self._add(req.stage, req.role, one)
        self.emit(
            "llm_call", role=req.role, stage=req.stage, provider=provider, model=model, key=key[:16],
            cached=cached, prompt_tokens=one.prompt_tokens, prompt_reused=one.prompt_reused,
            completion_tokens=one.completion_tokens,
            seconds=round(seconds, 3), cost=cost, ok=error is None,
            error=None if error is None else f"{type(error).__name__}: {error}",
        )

    def absorb(self, by_stage: dict[str, dict[str, dict[str, Any]]]) -> None:
        """Count calls another process metered (a Ray worker's `summary()["by_stage"]`) as made here."""
        with self._lock:
            for stage, roles in by_stage.items():
                for role, d in roles.items():
                    self._add(stage, role, Tally.from_dict({"cost": 0.0, **d}))

    # ---- reporting --------------------------------------------------------------------------
    def totals(self, role: str | None = None, stage: str | None = None) -> Tally:
        total = Tally()
        with self._lock:
            for (s, r), t in self._tallies.items():
                if (role is None or r == role) and (stage is None or s == stage):
                    total.add(t)
        return total

    @property
    def provider_calls(self) -> int:
        return self.totals().provider_calls

    def summary(self) -> dict[str, Any]:
        """JSON-able: {"by_stage": {stage: {role: tally}}, "by_role": {role: tally}, "total": tally}."""
        with self._lock:
            items = [(s, r, Tally.from_dict(t.as_dict())) for (s, r), t in self._tallies.items()]
            seq, counters = self.seq, dict(self.token_counters)
        by_stage: dict[str, dict[str, Any]] = {}
        by_role: dict[str, Tally] = {}
        total = Tally()
        for s, r, t in sorted(items, key=lambda x: (x[0], x[1])):
            by_stage.setdefault(s, {})[r] = t.as_dict()
            by_role.setdefault(r, Tally()).add(t)
            total.add(t)
        return {"by_stage": by_stage, "by_role": {r: t.as_dict() for r, t in by_role.items()},
                "total": total.as_dict(), "token_counters": counters, "seq": seq}

    def restore(self, summary: dict[str, Any] | None) -> None:
        """Continue counting from a previous `summary()` (resume), plus every call the spend log holds
        after it."""
        summary = summary or {}
        with self._lock:
            self._tallies.clear()
            for s, roles in (summary.get("by_stage") or {}).items():
                for r, d in roles.items():
                    self._tallies[(s, r)] = Tally.from_dict(d)
            self.token_counters = {**summary.get("token_counters", {}), **self.token_counters}
            self.seq = int(summary.get("seq", 0))
            if self.log is not None:
                for rec in self.log.since("meter", self.seq):
                    self._tally(rec.get("stage", "-"), rec.get("role", "-")).add(
                        Tally.from_dict({"cost": 0.0, **rec.get("tally", {})}))
                    self.seq = int(rec["seq"])
