"""The project's task bank: every real task its nights mined, kept across nights with its split.

A small project mines a few tasks a night; alone, no night reaches a held-out of `min_heldout`. The bank keeps
each night's tasks (`<project>/.skillgrad/sleep/task_bank.jsonl`), so held-out tasks accumulate over nights. A
task keeps the split it was given the first time; a new task that repeats or paraphrases a banked one
(heldout.similarity >= NEAR_DUPLICATE) joins that task's split, so train, selection and held-out stay apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from skillgrad.envs.tasks.records import TaskRecord, read_tasks, write_tasks
from skillgrad.sleep import heldout

MAX_BANK = 400  # newest tasks kept; the held-out of older work stops telling what the user does now


def bank_path(sleep_root: Path) -> Path:
    return sleep_root / "task_bank.jsonl"


def load_bank(sleep_root: Path) -> list[TaskRecord]:
    path = bank_path(sleep_root)
    return read_tasks(path) if path.is_file() and path.stat().st_size else []


def merge(bank: Sequence[TaskRecord], new: Sequence[TaskRecord], *, seed: int, val_fraction: float,
          test_fraction: float) -> list[TaskRecord]:
    """The bank plus tonight's new tasks: a task already banked (same id or text) is not added again; a new task
    near-duplicate of a banked one takes its split; the rest are split by near-duplicate group."""
    have = {t.task_id for t in bank} | {heldout.normalise(t.task) for t in bank}
    fresh: list[TaskRecord] = []
    for t in new:
        if t.task_id in have or heldout.normalise(t.task) in have:
            continue
        twin = next((b for b in bank if b.split and heldout.similarity(t.task, b.task) >= heldout.NEAR_DUPLICATE),
                    None)
        fresh.append(t.model_copy(update={"split": twin.split if twin else None}))
        have |= {t.task_id, heldout.normalise(t.task)}
    merged = heldout.assign_splits([*bank, *fresh], seed=seed, val_fraction=val_fraction, test_fraction=test_fraction)
    return merged[-MAX_BANK:]


def save_bank(sleep_root: Path, tasks: Sequence[TaskRecord]) -> None:
    write_tasks(bank_path(sleep_root), list(tasks))
