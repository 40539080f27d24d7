"""What the demonstrate proposers return: verified example edits and a log of every candidate, and how to check one.

An accepted demonstration is an edit item `{"op": "example", "target": request, "content": reply}`: it counts
against the learning rate and goes through the update stage's checks and the gate like any other edit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from skillgrad.engine.demo_limits import judge
from skillgrad.engine.proposers.filters import Filters, content_ok
from skillgrad.envs.base import Item, Trajectory
from skillgrad.models.base import LLM

MAX_CANDIDATES = 12  # verifications per failed task (a rubric verifier costs a model call each)
OWN_LABELLED = frozenset({"own_reply_repair", "own_reply_trimmed"})  # the student's words with the form put on


@dataclass
class DemoResult:
    items: list[dict[str, Any]] = field(default_factory=list)  # verified: edit items for the select stage
    log: list[dict[str, Any]] = field(default_factory=list)  # every candidate, verified or rejected, and why

    @property
    def rejected(self) -> list[dict[str, Any]]:
        return [d for d in self.log if not d["verified"]]

    def to_json(self) -> dict[str, Any]:
        return {"items": self.items, "log": self.log}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> DemoResult:
        return cls(items=list(d.get("items", [])), log=list(d.get("log", [])))


def edit(t: Trajectory, reply: str, source: str, asked: str = "") -> dict[str, Any]:
    """The example edit, asked as `asked` (by default the task; engine/proposers/wording.py)."""
    return {"op": "example", "target": asked or t.question.strip(), "content": reply.strip(),
            "source_type": "demonstration", "support_count": 1,
            "failure_kind": "other" if source.startswith("passing_rollout") else "format",
            "demonstration": {"item_id": t.item_id, "source": source}}


def entry(t: Trajectory, reply: str, source: str, score: float | None, verified: bool, why: str) -> dict[str, Any]:
    return {"item_id": t.item_id, "source": source, "question": t.question.strip()[:400], "reply": reply[:600],
            "score": score, "verified": verified, "why": why}


async def first_passing(t: Trajectory, cands: Sequence[tuple[str, str]], env: Any, item: Item, student: LLM,
                        filters: Filters, log: list[dict[str, Any]],
                        reasons: dict[str, str] | None = None) -> tuple[str, str, bool]:
    """The first (reply, source) of `cands` that passes the filters and the environment's scorer on `t`'s task
    (('', '', tried) when none does; `tried`: whether any reached the scorer). A label put on the student's own
    reply must carry the task's content too (filters.content_ok). Repeats are checked by the caller, in task order.
    `reasons` gets why each candidate was refused, the rule named (length, checks, guard; engine/demo_limits.py)."""
    reasons = {} if reasons is None else reasons
    seen: set[str] = set()
    tried = 0
    for reply, source in cands:
        reply = reply.strip()
        if not reply or reply in seen:
            continue
        seen.add(reply)
        if why := filters.why_not(t, reply, source):
            reasons.setdefault(reply, f"guard: {why}")
            continue
        if source in OWN_LABELLED and not content_ok(reply, t.contract):
            reasons.setdefault(reply, "guard: a label on the student's reply without the task's content")
            continue
        if tried >= MAX_CANDIDATES:
            break
        tried += 1
        score, reasons[reply] = await judge(env, item, reply, student)
        if score >= 1.0 - 1e-9:
            return reply, source, True
    return "", "", tried > 0


def gold_answer(t: Trajectory) -> str:
    """The task's gold answer as a reply: its contract's first gold value, or (no contract) a text gold; ''."""
    if t.contract is not None:
        return t.contract.gold[0].strip() if t.contract.gold else ""
    gold = t.gold[0] if isinstance(t.gold, list | tuple) and t.gold else t.gold
    return gold.strip() if isinstance(gold, str) else ""
