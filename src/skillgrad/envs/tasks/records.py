"""The task file: one JSON object per line, validated with one-line errors naming the file, line and field.

    {"task_id": "t1", "task": "Summarise the diff", "judge": {"kind": "rule", "checks": [{"op": "regex", "arg": "^Summary:"}]}}
    {"task_id": "t2", "task": "...", "judge": {"kind": "rubric", "rubric": "One sentence naming the bug."}}
    {"task_id": "t3", "task": "...", "judge": {"kind": "rule", "checks": [{"op": "equals", "key": "severity", "arg": "high"}],
                                              "reference": "{...}", "rubric": "Same root cause as the reference."}}

A judge's optional `reference` is a correct reply written by hand (the gold a few-shot baseline shows). With a
`rubric` the rubric judge grades the reply against it (on a rule judge after the checks: the task passes only when
both do); a rule judge's reference must pass the judge's own checks, so a task file cannot hold a wrong gold.

Optional fields: `split` (train / val / test; otherwise assigned by a stable hash of the task id),
`origin` (`real`, mined from a session, or `dream`, synthetic: always train), `task_type`, `meta`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from skillgrad.envs.tasks.checks import CONTENT_OPS, Check, score_checks
from skillgrad.errors import DataError

Split = Literal["train", "val", "test"]


class Judge(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["rule", "rubric"]
    checks: list[Check] = Field(default_factory=list)
    rubric: str = ""
    reference: str = Field("", description="A correct reply; with a rubric, the judge grades the reply against it.")

    @model_validator(mode="after")
    def _complete(self) -> Judge:
        if self.kind == "rule" and not self.checks:
            raise ValueError("a rule judge needs at least one check")
        if self.kind == "rubric" and not self.rubric.strip():
            raise ValueError("a rubric judge needs a non-empty rubric")
        if self.kind == "rule" and self.reference.strip():
            _, _, why = score_checks(self.checks, self.reference)
            if why:
                raise ValueError(f"the reference answer fails the judge's own checks ({why.split('; ')[0]})")
        if self.kind == "rubric" and self.checks:
            raise ValueError("checks belong to a rule judge; use kind rule with checks, rubric and reference")
        return self

    @property
    def graded(self) -> bool:
        """Whether the judge model grades the reply: a rubric judge, or a rule judge with a reference and a rubric."""
        return self.kind == "rubric" or bool(self.reference.strip() and self.rubric.strip())

    def describe(self) -> str:
        """What a passing reply must do, in words: the teacher's view of the judge (never a regex)."""
        if self.kind == "rubric" and not self.reference.strip():
            return f"no fixed answer; a reviewer judges the reply by this: {self.rubric}"
        said = [c.describe() for c in self.checks]
        if self.graded:
            said.append(f"meets this, as a reviewer judges it against the reference answer {self.reference!r}: "
                        f"{self.rubric}")
        elif self.reference.strip():
            said.append(f"is correct, as the reply {self.reference!r} is")
        fixed = self.reference.strip() or any(c.op in CONTENT_OPS for c in self.checks)
        return ("the reply " if fixed else "no fixed answer; the reply ") + ", and ".join(said)


class TaskRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(min_length=1)
    task: str = Field(min_length=1)
    judge: Judge
    split: Split | None = None
    origin: Literal["real", "dream"] = "real"
    task_type: str = ""
    meta: dict[str, Any] = Field(default_factory=dict)


def _error_line(err: ValidationError, row: Any) -> str:
    e = err.errors()[0]
    loc = ".".join(str(p) for p in e["loc"]) or "record"
    tid = row.get("task_id") if isinstance(row, dict) else None
    named = f"task {tid!r}: " if isinstance(tid, str) and tid else ""
    return f"{named}{loc}: {e['msg'].removeprefix('Value error, ')}"


def read_tasks(path: Path, *, key: str = "env.tasks_file") -> list[TaskRecord]:
    """Every task in the file; a bad line is a DataError naming the file, line and field."""
    if not path.is_file():
        raise DataError(f"{key}: task file not found: {path}")
    tasks: list[TaskRecord] = []
    seen: set[str] = set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataError(f"{path}:{n}: not valid JSON ({e.msg}); one task object per line") from None
        try:
            task = TaskRecord.model_validate(row)
        except ValidationError as e:
            raise DataError(f"{path}:{n}: {_error_line(e, row)}") from None
        if task.task_id in seen:
            raise DataError(f"{path}:{n}: duplicate task_id {task.task_id!r}; task ids must be unique")
        seen.add(task.task_id)
        tasks.append(task)
    if not tasks:
        raise DataError(f"{key}: {path} holds no tasks")
    return tasks


def write_tasks(path: Path, tasks: Sequence[TaskRecord]) -> None:
    from skillgrad.core.atomic import write_text

    write_text(path, "".join(t.model_dump_json(exclude_defaults=True) + "\n" for t in tasks))


def stable_split(task_id: str, seed: int, weights: Sequence[float], *, origin: str = "real") -> Split:
    """A split from a hash of (seed, task id): the same task lands in the same split every night.
    Synthetic (`dream`) tasks are always train: validation and test hold only real tasks."""
    if origin != "real":
        return "train"
    total = sum(weights)
    h = int(hashlib.sha256(f"{seed}:{task_id}".encode()).hexdigest()[:12], 16) / float(16 ** 12)
    edge = 0.0
    for name, w in zip(("train", "val", "test"), weights, strict=True):
        edge += w / total
        if h < edge:
            return name  # type: ignore[return-value]
    return "test"
