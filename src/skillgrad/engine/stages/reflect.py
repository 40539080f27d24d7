"""Reflect: one teacher call per minibatch of failures or successes, run concurrently under a bound."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import Any

from skillgrad.core.gather import gather_all
from skillgrad.engine.evidence import render_trajectory
from skillgrad.engine.modes import UpdateMode, items_from_output
from skillgrad.engine.teacher import TeacherCall
from skillgrad.envs.base import Trajectory


@dataclass
class RawPatch:
    source_type: str  # "failure" | "success"
    index: int
    task_ids: list[str]
    items: list[dict[str, Any]]
    failure_summary: list[dict[str, Any]] = field(default_factory=list)
    appendix_notes: list[str] = field(default_factory=list)
    reply: dict[str, Any] = field(default_factory=dict)
    origin: str = "minibatch"  # "minibatch" | "deep" (deep reflect's patch after probing)

    @property
    def ok(self) -> bool:
        return bool(self.reply.get("ok"))

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RawPatch:
        return cls(**d)


def minibatches(trajs: list[Trajectory], size: int, seed: int) -> list[list[Trajectory]]:
    order = list(trajs)
    random.Random(seed).shuffle(order)
    return [order[i : i + size] for i in range(0, len(order), size)]


async def reflect(
    trajs: list[Trajectory],
    skill: str,
    teacher: TeacherCall,
    *,
    mode: UpdateMode,
    minibatch_size: int,
    workers: int,
    seed: int,
    budget: int,
    max_chars: int,
    failure_only: bool = False,
    buffer_text: str = "",
    meta_text: str = "",
    skill_aware: bool = False,
    appendix_source: str = "both",
    compact: bool = False,
    sample: int = 0,
) -> list[RawPatch]:
    """`sample` distinguishes repeated reflections on the same evidence (later epochs) when the teacher
    samples at temperature > 0; at temperature 0 it changes nothing."""
    failures = [t for t in trajs if t.failed]
    successes = [] if failure_only else [t for t in trajs if not t.failed]
    jobs: list[tuple[str, int, list[Trajectory]]] = []
    for i, mb in enumerate(minibatches(failures, minibatch_size, seed)):
        jobs.append(("failure", i, mb))
    for i, mb in enumerate(minibatches(successes, minibatch_size, seed + 1)):
        jobs.append(("success", i, mb))
    sem = asyncio.Semaphore(max(workers, 1))

    async def one(source: str, idx: int, mb: list[Trajectory]) -> RawPatch:
        async with sem:
            return await analyst_call(source, idx, mb, skill, teacher, mode=mode, budget=budget, max_chars=max_chars,
                                      buffer_text=buffer_text, meta_text=meta_text, skill_aware=skill_aware,
                                      appendix_source=appendix_source, compact=compact, sample=sample)

    return list(await gather_all(*(one(s, i, mb) for s, i, mb in jobs)))


async def analyst_call(
    source: str, idx: int, mb: list[Trajectory], skill: str, teacher: TeacherCall, *, mode: UpdateMode, budget: int,
    max_chars: int, buffer_text: str = "", meta_text: str = "", skill_aware: bool = False,
    appendix_source: str = "both", compact: bool = False, sample: int = 0, findings: str = "",
    origin: str = "minibatch",
) -> RawPatch:
    """One analyst call over a minibatch of failures or successes (deep reflect adds its `findings`)."""
    group = "error" if source == "failure" else "success"
    template = f"analyst_{group}{mode.analyst_suffix}"
    appendix = skill_aware and mode.appendix_notes and (source == "failure" or appendix_source == "both")
    suffix = [f"skill_aware_{source}"] if appendix else []
    schema = mode.analyst_schema(budget, max_chars, appendix)
    reply = await teacher.ask(
        template, schema, stage="reflect" if origin == "minibatch" else "deep_reflect",
        values={"skill": skill, "budget": budget, "buffer": f"\n{buffer_text.strip()}\n" if buffer_text.strip() else "",
                "meta": _block("Optimizer meta skill", meta_text) + _block("Findings from probing this trajectory",
                                                                           findings),
                "n": len(mb), "max_chars": max_chars},
        evidence_key="trajectories",
        evidence=[render_trajectory(t, skill, compact=compact) for t in mb],
        suffix_templates=suffix, sample=sample,
    )
    data = reply.parsed.model_dump() if reply.parsed is not None else {}
    items = items_from_output(mode, data)
    if mode.edit_budget:  # whole documents are not budgeted edits
        items = items[: max(budget, 0)]
    for it in items:
        it.setdefault("source_type", source)
        it["support_count"] = max(len(mb), 1) if "support_count" not in it else it["support_count"]
    return RawPatch(
        source_type=source, index=idx, task_ids=[t.item_id for t in mb], items=items,
        failure_summary=list(data.get("failure_summary", [])),
        appendix_notes=[n for n in data.get("appendix_notes", []) if n.strip()],
        reply=reply.to_json(), origin=origin,
    )


def _block(title: str, text: str) -> str:
    return f"\n## {title}\n{text.strip()}\n" if text and text.strip() else ""
