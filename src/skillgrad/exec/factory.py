"""Choosing the executor from `exec.backend` (the trainer only ever sees the `Executor` interface)."""

from __future__ import annotations

from skillgrad.config.schema import ExecSection
from skillgrad.core.events import EventSink, null_sink
from skillgrad.exec.base import Executor
from skillgrad.exec.pool import LocalPool
from skillgrad.models.budget import Budget
from skillgrad.models.cache import LLMCache
from skillgrad.models.meter import Meter


def make_executor(settings: ExecSection, *, cache: LLMCache | None = None, meter: Meter | None = None,
                  budget: Budget | None = None, emit: EventSink = null_sink) -> Executor:
    if settings.backend == "ray":
        from skillgrad.exec.ray_exec import RayExecutor  # Ray is an optional extra

        return RayExecutor(settings, cache=cache, meter=meter, budget=budget, emit=emit)
    return LocalPool()
