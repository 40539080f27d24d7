"""The Ray executor (`exec.backend: ray`): every rollout or evaluation item is one Ray task.

- Tasks carry the resource hints of `exec` (CPUs, GPUs, memory); at most `workers` (env.workers) are in
  flight, and results are handed back in completion order as each task finishes.
- One writer: workers never write the run directory or the cache; the driver writes results.jsonl (via
  `on_done`), the cache entries, the meter tallies and the budget count each task returns (see
  `ray_worker`). A killed driver therefore resumes like any run.
- A worker that dies loses only its own task, which Ray re-runs up to `exec.max_retries` times; after
  that the item is an `env_error` trajectory (scored, re-run on resume), never a crash of the batch.
- A fatal provider error or a spent budget stops the batch and cancels the tasks still running.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from typing import Any

from skillgrad.config.schema import ExecSection
from skillgrad.core.events import EventSink, null_sink
from skillgrad.envs.base import Environment, Item, Trajectory
from skillgrad.envs.trajectory import failed_trajectory
from skillgrad.errors import BudgetExceeded, ProviderFatal, UsageError
from skillgrad.exec.base import reusable
from skillgrad.exec.ray_worker import Services, run_item
from skillgrad.models.base import LLM
from skillgrad.models.budget import Budget
from skillgrad.models.cache import LLMCache
from skillgrad.models.meter import Meter


class FinishOrder:
    """Futures handed back in the order they finished, also when several finish within one turn of the event
    loop (asyncio.wait hands those back as a set, so on_done saw them in set order)."""

    def __init__(self) -> None:
        self._done: asyncio.Queue[asyncio.Future[Any]] = asyncio.Queue()

    def watch(self, fut: asyncio.Future[Any]) -> asyncio.Future[Any]:
        fut.add_done_callback(self._done.put_nowait)
        return fut

    async def next(self) -> asyncio.Future[Any]:
        return await self._done.get()


class RayExecutor:
    name = "ray"

    def __init__(self, settings: ExecSection, *, cache: LLMCache | None = None, meter: Meter | None = None,
                 budget: Budget | None = None, emit: EventSink = null_sink) -> None:
        try:
            import ray
        except ImportError as e:
            raise UsageError("exec.backend: ray needs Ray; install it with `pip install 'skillgrad[ray]'` "
                             "or set exec.backend: local") from e
        self.ray = ray
        self.settings, self.cache, self.meter, self.budget, self.emit = settings, cache, meter, budget, emit
        self._started = False
        if not ray.is_initialized():
            address = settings.address or os.environ.get("RAY_ADDRESS") or None
            try:
                ray.init(address=address, include_dashboard=False, log_to_driver=False)
            except ConnectionError as e:
                raise UsageError(f"exec.address: cannot reach a Ray cluster at {address!r} ({e}); start one "
                                 "with `ray start --head` or leave exec.address and RAY_ADDRESS unset") from e
            self._started = True
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        cache_path = str(cache.path) if cache is not None else ""
        self.services = ray.remote(Services).options(  # type: ignore[attr-defined]
            num_cpus=0, max_concurrency=1000, scheduling_strategy=here).remote(cache_path)
        s = settings
        self._task = ray.remote(run_item).options(  # type: ignore[attr-defined]
            num_cpus=s.num_cpus, num_gpus=s.num_gpus, memory=s.memory_mb * 1024 * 1024 if s.memory_mb else None,
            max_retries=s.max_retries, retry_exceptions=False)

    def close(self) -> None:
        try:
            self.ray.kill(self.services)  # type: ignore[arg-type]
        except Exception:  # noqa: BLE001 - the cluster may already be gone
            pass
        if self._started:
            self.ray.shutdown()

    def _student_payload(self, student: LLM) -> Any:
        """The role config the worker rebuilds the student from; a key written into the config is not
        shipped (workers read keys from their own environment, so no secret enters Ray's task specs)."""
        role_cfg = getattr(student, "role_cfg", None)
        if role_cfg is None:
            return student  # a student without a config (tests' scripted models) travels as it is
        role_cfg = role_cfg.model_copy(update={"api_key": None})
        if role_cfg.provider == "local" and not role_cfg.n_threads:  # one worker, its reserved CPUs
            role_cfg = role_cfg.model_copy(update={"n_threads": max(1, int(self.settings.num_cpus))})
        return role_cfg

    async def run(self, env: Environment, items: Sequence[Item], skill: str, student: LLM, *, workers: int,
                  timeout_s: float, temperature: float = 0.0, sample: int = 0, feedback: bool = True,
                  on_done: Callable[[Trajectory], None] | None = None,
                  existing: dict[str, Trajectory] | None = None) -> list[Trajectory]:
        ray = self.ray
        existing = reusable(existing)
        results: list[Trajectory | None] = [existing.get(it.id) for it in items]
        todo = [i for i, r in enumerate(results) if r is None]
        if not todo:
            return [r for r in results if r is not None]
        env_ref, student_ref = ray.put(env), ray.put(self._student_payload(student))
        opts = {"timeout_s": timeout_s, "temperature": temperature, "sample": sample, "feedback": feedback}
        in_flight: dict[asyncio.Future[Any], tuple[int, Any]] = {}
        queue = list(reversed(todo))
        finished = FinishOrder()

        def submit() -> None:
            while queue and len(in_flight) < max(1, int(workers)):
                if self.budget is not None:
                    self.budget.check()
                i = queue.pop()
                ref = self._task.remote(env_ref, items[i], skill, student_ref, opts, self.services)
                in_flight[finished.watch(asyncio.wrap_future(ref.future()))] = (i, ref)

        try:
            submit()
            while in_flight:
                fut = await finished.next()
                i, _ref = in_flight.pop(fut)
                traj = results[i] = self._absorb(items[i], fut)
                try:  # the next task goes out before this result is written (the writes fsync)
                    if self.budget is not None:
                        self.budget.check()
                    submit()
                finally:
                    if on_done is not None:
                        on_done(traj)
        finally:
            for fut, (_, ref) in in_flight.items():
                fut.cancel()
                ray.cancel(ref, force=True)
        return [r for r in results if r is not None]

    def _absorb(self, item: Item, fut: asyncio.Future[Any]) -> Trajectory:
        """The driver's half of a finished task: write its cache entries, count its calls, emit its events."""
        from ray.exceptions import RayTaskError

        try:
            out = fut.result()
        except RayTaskError as e:
            cause = getattr(e, "cause", None)
            if isinstance(cause, (ProviderFatal, BudgetExceeded)):
                raise cause from None
            return failed_trajectory(item, f"ray task failed: {cause or e}", env_error=True)
        except Exception as e:  # noqa: BLE001 - the worker died more than exec.max_retries times
            return failed_trajectory(item, f"ray worker lost ({type(e).__name__}) after "
                                     f"{self.settings.max_retries} retries: {str(e)[:300]}", env_error=True)
        for key, comp in out["calls"]:
            if comp is not None and self.cache is not None:
                self.cache.put(key, comp)
            if self.budget is not None:
                self.budget.settle(None, comp)
        if self.meter is not None and out["tallies"]:
            self.meter.absorb(out["tallies"])
        for event, fields in out["events"]:
            self.emit(event, **fields, executor="ray")
        return out["trajectory"]  # type: ignore[no-any-return]
