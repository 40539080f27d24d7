"""What runs inside Ray: one rollout item per task, and the run's shared services actor.

A worker rebuilds the student from its role config (a local model is loaded once per worker process,
by the provider's own pool) and runs the same `run_one` as the local pool. Its model calls go through
the usual middleware, except the cache and the budget, which belong to the driver (one writer):
- cache reads ask the `Services` actor, which reads the driver's SQLite file on the driver's node;
- cache misses are returned with the trajectory; the driver writes them, counts them against the
  budget and adds the worker's meter tallies to its own (spend log included), so resume sees them;
- `Services` also holds one semaphore per provider endpoint: the role's `concurrency` holds across the
  cluster, not per worker.
A worker process keeps one event loop and one provider per role config across the items it runs: an SDK
client costs tens of milliseconds to build (its TLS context) and its connection pool belongs to one loop,
so building both per item (a fresh `asyncio.run` and client each time) was most of Ray's cost per task.
The middleware around the provider (cache view, meter) is still built per item: it collects that item's
calls for the driver.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgrad.config.schema import RoleConfig
from skillgrad.envs.base import Environment, Item, Trajectory
from skillgrad.models.base import Completion, Handler, Request


class Services:
    """A Ray actor (async, pinned to the driver's node): cache reads and per-endpoint call slots."""

    def __init__(self, cache_path: str) -> None:
        from skillgrad.models.cache import LLMCache

        self._cache = LLMCache(Path(cache_path)) if cache_path else None
        self._slots: dict[str, asyncio.Semaphore] = {}

    async def get(self, key: str) -> Completion | None:
        return self._cache.get(key) if self._cache is not None else None

    async def acquire(self, endpoint: str, limit: int) -> None:
        sem = self._slots.setdefault(endpoint, asyncio.Semaphore(max(1, limit)))
        await sem.acquire()

    async def release(self, endpoint: str) -> None:
        self._slots[endpoint].release()


@dataclass
class CacheView:
    """The worker's cache middleware: reads through `Services`, records misses for the driver to write."""

    services: Any  # a Ray actor handle of Services
    slots: tuple[str, int] | None  # (endpoint, cluster-wide concurrency) or None (a local model)
    new: list[tuple[str, Completion | None]] = field(default_factory=list)  # (key, reply | None = failed)

    def wrap(self, inner: Handler, *, provider: str, model: str, params: dict[str, Any]) -> Handler:
        async def cached(req: Request) -> Completion:
            key = req.cache_key(provider, model, params)
            hit = await self.services.get.remote(key)
            if hit is not None:
                return hit  # type: ignore[no-any-return]
            if self.slots:
                await self.services.acquire.remote(*self.slots)
            try:
                comp = await inner(req)
            except Exception:
                self.new.append((key, None))  # a failed call still counts against the budget
                raise
            finally:
                if self.slots:
                    await self.services.release.remote(self.slots[0])
            self.new.append((key, dataclasses.replace(comp, parsed=None)))
            return comp

        return cached


def endpoint_of(role_cfg: RoleConfig) -> str:
    return f"{role_cfg.provider}:{role_cfg.model}:{role_cfg.base_url or role_cfg.azure_endpoint}"


class WorkerProcess:
    """What one Ray worker process keeps between the tasks it runs (one at a time: tasks hold a CPU)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.providers: dict[tuple[str, str], Any] = {}

    def provider(self, rc: RoleConfig, role: str) -> Any:
        from skillgrad.models.factory import create_provider

        key = (role, rc.model_dump_json())
        if key not in self.providers:
            self.providers[key] = create_provider(rc, role)
        return self.providers[key]


_process: WorkerProcess | None = None  # this worker process's loop and providers (never configuration)


def worker_process() -> WorkerProcess:
    global _process
    if _process is None or _process.loop.is_closed():
        _process = WorkerProcess()
    return _process


def run_item(env: Environment, item: Item, skill: str, student: Any, opts: dict[str, Any],
             services: Any) -> dict[str, Any]:
    """The Ray task. `student` is a RoleConfig (rebuilt here) or, for a student that has none, the LLM
    object itself. Returns the trajectory plus the calls, meter tallies and events for the driver."""
    proc = worker_process()
    return proc.loop.run_until_complete(_run_item(env, item, skill, student, opts, services, proc))


async def _run_item(env: Environment, item: Item, skill: str, student: Any, opts: dict[str, Any],
                    services: Any, proc: WorkerProcess) -> dict[str, Any]:
    from skillgrad.exec.pool import run_one

    events: list[tuple[str, dict[str, Any]]] = []
    out: dict[str, Any] = {"calls": [], "tallies": {}, "events": events}
    if not isinstance(student, RoleConfig):
        out["trajectory"] = await run_one(env, item, skill, student, **opts)
        return out
    from skillgrad.models.factory import build_llm
    from skillgrad.models.meter import Meter

    def emit(event: str, **fields: Any) -> None:
        events.append((event, fields))

    meter = Meter(emit=emit)
    views: dict[str, CacheView] = {}
    llms: dict[str, Any] = {}
    # The student and the environment's own models (a rubric judge), each through the driver's cache and slots.
    for name, rc in {"student": student, **(env.model_roles() if hasattr(env, "model_roles") else {})}.items():
        views[name] = CacheView(services, None if rc.provider == "local" else (endpoint_of(rc), rc.concurrency))
        llms[name] = build_llm(rc, name, cache=views[name], meter=meter, emit=emit,  # type: ignore[arg-type]
                               make_provider=proc.provider)
    if len(llms) > 1:
        env.use_models({k: v for k, v in llms.items() if k != "student"})  # type: ignore[attr-defined]
    try:
        traj: Trajectory = await run_one(env, item, skill, llms["student"], **opts)
    finally:  # the providers stay open for this worker's next item
        out["calls"] = [call for v in views.values() for call in v.new]
        out["tallies"] = meter.summary()["by_stage"]
    out["trajectory"] = traj
    return out
