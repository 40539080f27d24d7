"""Deep reflect: probe a few selected trajectories over several teacher turns before writing their patch.

Minibatch reflection reads each trajectory once, as a whole. Deep reflect picks up to
`n_failures` failed and `n_successes` solved trajectories (different failure kinds first) and, per
trajectory, lets the teacher work like an investigator: it sees a numbered outline of the
messages, asks a question and names the messages it wants to re-read in full; the engine answers
with those messages; after at most `max_turns` turns (or when the teacher says it is done, or the
probe's token budget is spent) the ordinary analyst call writes the patch, with the probe's
findings as extra context. The transcript of every turn is kept with the patch.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import Any

from skillgrad.core.gather import gather_all
from skillgrad.engine.evidence import _content_text
from skillgrad.engine.modes import UpdateMode
from skillgrad.engine.schemas import ProbeTurn
from skillgrad.engine.stages.reflect import RawPatch, analyst_call
from skillgrad.engine.teacher import TeacherCall
from skillgrad.envs.base import Trajectory

MAX_TURNS = 3  # probe turns per trajectory before its patch is written (estimate counts them too)


@dataclass
class Probe:
    item_id: str
    source_type: str
    turns: list[dict[str, Any]] = field(default_factory=list)  # question, look_at, finding, reply
    stopped: str = ""  # "done" | "max_turns" | "token_budget" | "bad_reply"
    tokens: int = 0
    patch: RawPatch | None = None

    def to_json(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["patch"] = self.patch.to_json() if self.patch is not None else None
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Probe:
        d = dict(d)
        patch = d.pop("patch", None)
        return cls(**d, patch=RawPatch.from_json(patch) if patch else None)


def select_for_probing(trajs: list[Trajectory], n_failures: int, n_successes: int, seed: int) -> list[Trajectory]:
    """Failures round-robin over fail-reason kinds (so different failures get probed), then successes."""
    rng = random.Random(seed)
    fails = [t for t in trajs if t.failed]
    rng.shuffle(fails)
    by_kind: dict[str, list[Trajectory]] = {}
    for t in fails:
        by_kind.setdefault(t.fail_reason.split(":", 1)[0].strip() or "failed", []).append(t)
    picked: list[Trajectory] = []
    while len(picked) < n_failures and any(by_kind.values()):
        for group in by_kind.values():
            if group and len(picked) < n_failures:
                picked.append(group.pop(0))
    wins = [t for t in trajs if not t.failed]
    rng.shuffle(wins)
    return picked + wins[:n_successes]


def _outline(t: Trajectory, skill: str, width: int = 160) -> list[tuple[str, str]]:
    out = []
    for m in t.messages:
        text = _content_text(m.get("content", ""))
        if m.get("role") == "system" and skill.strip() and skill.strip() in text:
            text = text.replace(skill.strip(), "<the current skill>")
        out.append((str(m.get("role", "?")), " ".join(text.split())))
    return out


async def probe_one(
    t: Trajectory, idx: int, skill: str, teacher: TeacherCall, *, mode: UpdateMode, budget: int, max_chars: int,
    max_turns: int, token_budget: int, reveal_chars: int = 1500, buffer_text: str = "", meta_text: str = "",
    compact: bool = False, sample: int = 0,
) -> Probe:
    source = "failure" if t.failed else "success"
    probe = Probe(item_id=t.item_id, source_type=source)
    msgs = _outline(t, skill)
    outline = "\n".join(f"[{i}] {role}: {text[:160]}{'…' if len(text) > 160 else ''}"
                        for i, (role, text) in enumerate(msgs))
    head = (f"Task {t.item_id} (type {t.task_type}); question: {t.question[:300]}\n"
            f"Outcome: hard={t.hard:g}, soft={t.soft:.2f}" + (f"; failure: {t.fail_reason[:200]}" if t.fail_reason else ""))
    notes: list[str] = []
    for turn in range(1, max_turns + 1):
        reply = await teacher.ask(
            "deep_probe", ProbeTurn, stage="deep_reflect",
            values={"outcome": "FAILED" if t.failed else "SOLVED", "skill": skill, "head": head, "turn": turn,
                    "max_turns": max_turns, "notes": "\n\n".join(notes) or "(nothing yet)"},
            evidence_key="outline", evidence=[outline], sample=sample,
        )
        probe.tokens += sum(reply.usage.values())
        if reply.parsed is None:
            probe.turns.append({"turn": turn, "error": reply.error, "raw": reply.raw[:2000]})
            probe.stopped = "bad_reply"
            break
        p: ProbeTurn = reply.parsed  # type: ignore[assignment]
        looked = [i for i in dict.fromkeys(p.look_at) if 0 <= i < len(msgs)]
        shown = [f"[{i}] {msgs[i][0]} (full): {msgs[i][1][:reveal_chars]}" for i in looked]
        probe.turns.append({"turn": turn, "question": p.question, "look_at": looked, "finding": p.finding,
                            "done": p.done})
        notes.append(f"Turn {turn} question: {p.question}\n"
                     + (f"Finding: {p.finding}\n" if p.finding else "")
                     + ("\n".join(shown) if shown else "(no messages re-read)"))
        if p.done:
            probe.stopped = "done"
            break
        if probe.tokens >= token_budget:
            probe.stopped = "token_budget"
            break
    else:
        probe.stopped = "max_turns"
    findings = "\n".join(f"- {x['finding']}" for x in probe.turns if x.get("finding"))
    probe.patch = await analyst_call(source, idx, [t], skill, teacher, mode=mode, budget=budget, max_chars=max_chars,
                                     buffer_text=buffer_text, meta_text=meta_text, compact=compact, sample=sample,
                                     findings=findings or "(the probe found nothing beyond the trajectory)",
                                     origin="deep")
    return probe


async def deep_reflect(
    trajs: list[Trajectory], skill: str, teacher: TeacherCall, *, mode: UpdateMode, n_failures: int,
    n_successes: int, seed: int, budget: int, max_chars: int, workers: int = 4, max_turns: int = MAX_TURNS,
    token_budget: int = 6000, buffer_text: str = "", meta_text: str = "", compact: bool = False, sample: int = 0,
) -> list[Probe]:
    """Probe the selected trajectories concurrently (bounded by `workers`); one Probe (with its patch) each."""
    chosen = select_for_probing(trajs, n_failures, n_successes, seed)
    sem = asyncio.Semaphore(max(workers, 1))

    async def one(i: int, t: Trajectory) -> Probe:
        async with sem:
            return await probe_one(t, i, skill, teacher, mode=mode, budget=budget, max_chars=max_chars,
                                   max_turns=max_turns, token_budget=token_budget, buffer_text=buffer_text,
                                   meta_text=meta_text, compact=compact, sample=sample)

    return list(await gather_all(*(one(i, t) for i, t in enumerate(chosen))))
