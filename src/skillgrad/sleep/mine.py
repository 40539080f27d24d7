"""Mining: session digests -> tasks with programmatic checks and a rubric, deduplicated, capped and split.

Two miners produce the same `TaskRecord`s (envs/tasks): the LLM miner (one grammar-constrained teacher
call per session, through the models layer like every other teacher call) and a heuristic miner that
needs no model. Splits come from a stable hash of the task id; validation and test hold only real tasks.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from skillgrad.envs.tasks.checks import CHECK_OPS, Check
from skillgrad.envs.tasks.records import Judge, TaskRecord, stable_split
from skillgrad.errors import BudgetExceeded, ProviderFatal
from skillgrad.models.base import LLM
from skillgrad.sleep.harvest.digest import SessionDigest

MAX_PER_SESSION = 3
_PROMPT_CHARS = 600


class MinedCheck(BaseModel):
    op: Literal["contains", "not_contains", "regex", "no_refusal", "tool_called", "section_present",
                "section_contains", "min_chars", "max_chars"]
    arg: str = Field("", max_length=80)
    value: str = Field("", max_length=60)


class MinedTask(BaseModel):
    intent: str = Field(..., min_length=4, max_length=240)
    checks: list[MinedCheck] = Field(default_factory=list, max_length=4)
    rubric: str = Field("", max_length=200)


class MinedTasks(BaseModel):
    tasks: list[MinedTask] = Field(default_factory=list, max_length=MAX_PER_SESSION)


assert set(MinedCheck.model_fields["op"].annotation.__args__) == set(CHECK_OPS)  # type: ignore[union-attr]

MINER_SYSTEM = (
    "You turn a coding assistant's past session into 0 to 3 reusable tasks the assistant should do well next "
    "time. Each task: the user's intent as a self-contained request; up to 4 programmatic checks on a good "
    "reply (ops: contains, not_contains, regex, no_refusal, tool_called, section_present, section_contains, "
    "min_chars, max_chars; arg is the text, pattern, tool, section or number); and a one-sentence rubric. "
    "Prefer checks the user's own words or corrections ask for (a required prefix, section or phrase). "
    'Reply with JSON: {"tasks": [{"intent": ..., "checks": [{"op": ..., "arg": ...}], "rubric": ...}]}.')


def _norm(s: str) -> str:
    return " ".join(s.split()).casefold()


def task_id(digest: SessionDigest, intent: str) -> str:
    h = hashlib.sha256(f"{digest.agent}:{digest.session_id}:{_norm(intent)}".encode()).hexdigest()[:12]
    return f"{digest.agent}-{h}"


def session_text(d: SessionDigest, max_turns: int = 4) -> str:
    """What the miner reads of a session: prompts, final answers, tools and feedback, trimmed."""
    lines = [f"Project: {d.project or '?'}  Branch: {d.branch or '?'}"]
    for i, t in enumerate(d.turns[:max_turns]):
        lines.append(f"User {i + 1}: {t.prompt[:_PROMPT_CHARS]}")
        if t.answer:
            lines.append(f"Assistant {i + 1}: {t.answer[:_PROMPT_CHARS]}")
        if t.tools:
            lines.append(f"Tools {i + 1}: {', '.join(t.tools[:8])}")
    for f in d.feedback[:3]:
        lines.append(f"Feedback ({f.kind}, turn {f.turn + 1}): {f.text[:200]}")
    return "\n".join(lines)


def _valid_checks(raw: Sequence[Any]) -> list[Check]:
    out: list[Check] = []
    for c in raw:
        try:
            out.append(Check.model_validate(c if isinstance(c, dict) else c.model_dump()))
        except ValidationError:
            continue  # a junk check is dropped, never applied
    return out


def to_record(digest: SessionDigest, intent: str, checks: list[Check], rubric: str, miner: str) -> TaskRecord | None:
    intent = intent.strip()
    if not intent:
        return None
    if any(c.op != "no_refusal" for c in checks):
        judge = Judge(kind="rule", checks=checks)
    elif rubric.strip():
        judge = Judge(kind="rubric", rubric=rubric.strip())
    else:
        return None
    return TaskRecord(task_id=task_id(digest, intent), task=intent, judge=judge, origin="real",
                      meta={"session": digest.session_id, "agent": digest.agent, "project": digest.project,
                            "miner": miner, "rubric": rubric.strip()})


async def mine_llm(digests: Sequence[SessionDigest], teacher: LLM, *, max_tokens: int = 384,
                   on_error: Callable[[SessionDigest, str], None] | None = None) -> list[TaskRecord]:
    """0-3 tasks per session from the teacher; an unparsable reply mines nothing from that session.

    Sessions are asked concurrently (the role's concurrency limit still applies), so a handoff teacher gets
    every mining prompt of the night in one round; results keep the sessions' order."""

    async def one(d: SessionDigest) -> list[TaskRecord]:
        messages = [{"role": "system", "content": MINER_SYSTEM}, {"role": "user", "content": session_text(d)}]
        try:
            c = await teacher.complete(messages, schema=MinedTasks, max_tokens=max_tokens, temperature=0.0,
                                       stage="mine")
        except (ProviderFatal, BudgetExceeded):
            raise
        except Exception as e:  # noqa: BLE001 - one session's bad reply is logged, not fatal
            if on_error:
                on_error(d, f"{type(e).__name__}: {str(e)[:200]}")
            return []
        mined = c.parsed if isinstance(c.parsed, MinedTasks) else None
        records = [to_record(d, t.intent, _valid_checks(t.checks), t.rubric, "llm")
                   for t in (mined.tasks if mined else [])]
        return [r for r in records if r is not None]

    return [r for batch in await asyncio.gather(*(one(d) for d in digests)) for r in batch]


_PREFIX = re.compile(r"^\s*([A-Z][A-Za-z-]{1,20}):")
_HEADINGS = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*$", re.MULTILINE)
_QUOTED = re.compile(r"[\"“`']([^\"”`'\n]{2,40})[\"”`']")


def heuristic_checks(answer: str, feedback_texts: list[str]) -> list[Check]:
    """Checks read off the shape of the answer the user accepted, and quoted words in their corrections."""
    checks = [Check(op="no_refusal")]
    m = _PREFIX.match(answer)
    if m:
        checks.append(Check(op="regex", arg=f"^{re.escape(m.group(1))}:"))
    for h in _HEADINGS.findall(answer)[:2]:
        checks.append(Check(op="section_present", arg=h.strip("# ").strip()[:60]))
    for text in feedback_texts:
        for q in _QUOTED.findall(text)[:2]:
            checks.append(Check(op="contains", arg=q.strip()))
    return checks


def mine_heuristic(digests: Sequence[SessionDigest]) -> list[TaskRecord]:
    """No model: each answered prompt whose answer has a recognisable shape becomes a task (at most 3 per session)."""
    out: list[TaskRecord] = []
    for d in digests:
        n = 0
        for i, t in enumerate(d.turns):
            if n >= MAX_PER_SESSION:
                break
            if not t.prompt.strip() or not t.answer.strip():
                continue
            feedback = [f.text for f in d.feedback if f.turn in (i, i + 1) and f.kind in ("negative", "correction")]
            rec = to_record(d, t.prompt, heuristic_checks(t.answer, feedback), "", "heuristic")
            if rec is not None:
                out.append(rec)
                n += 1
    return out


def dedupe(tasks: Sequence[TaskRecord]) -> list[TaskRecord]:
    seen: set[str] = set()
    out: list[TaskRecord] = []
    for t in tasks:
        key = _norm(t.task)
        if key not in seen and t.task_id not in seen:
            seen.update((key, t.task_id))
            out.append(t)
    return out


def assign_splits(tasks: Sequence[TaskRecord], *, seed: int, val_fraction: float, test_fraction: float = 0.0,
                  ) -> list[TaskRecord]:
    """Stable hash splits; validation is made non-empty when there are at least two real tasks."""
    weights = [max(0.0, 1.0 - val_fraction - test_fraction), val_fraction, test_fraction]
    out = [t.model_copy(update={"split": t.split or stable_split(t.task_id, seed, weights, origin=t.origin)})
           for t in tasks]
    real_train = [i for i, t in enumerate(out) if t.origin == "real" and t.split == "train"]
    if not any(t.split == "val" for t in out) and len(real_train) >= 2:
        i = min(real_train, key=lambda k: hashlib.sha256(f"{seed}:{out[k].task_id}".encode()).hexdigest())
        out[i] = out[i].model_copy(update={"split": "val"})
    return out


def holdout_leaks(tasks: Sequence[TaskRecord]) -> list[str]:
    """Ids of validation/test tasks whose text (or id) also occurs in train: such a gate would be unverified."""
    train = {_norm(t.task) for t in tasks if t.split == "train"} | {t.task_id for t in tasks if t.split == "train"}
    return [t.task_id for t in tasks if t.split in ("val", "test") and (_norm(t.task) in train or t.task_id in train)]


def cap(tasks: Sequence[TaskRecord], max_tasks: int) -> list[TaskRecord]:
    return list(tasks[:max_tasks]) if max_tasks > 0 else list(tasks)
