"""What the built-in benchmark environments share: data location, status, the run_task guard, prepare.

Each benchmark package (searchqa, livemath, docvqa, spreadsheetbench, officeqa, alfworld) subclasses
`BenchEnv` and implements `parse_item` and `_run`. Data comes from `env.split_dir` / `env.data_path`
when set ("ready"), otherwise from the small sample shipped in the package ("sample").
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from skillgrad.config.schema import EnvSection
from skillgrad.core.atomic import write_json
from skillgrad.envs.base import SPLITS, EnvOptions, Item, Splits, Trajectory
from skillgrad.envs.chat import read_skill_file
from skillgrad.envs.splits import load_splits, parse_ratio, ratio_counts, split_status
from skillgrad.envs.trajectory import evaluation_message, failed_trajectory, question_text
from skillgrad.errors import BudgetExceeded, DataError, ProviderFatal
from skillgrad.models.base import LLM, Completion, Message

_STOP_RUN = (ProviderFatal, BudgetExceeded, asyncio.CancelledError)
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_OPEN_TAG = re.compile(r"<answer>(.*)$", re.IGNORECASE | re.DOTALL)


def extract_answer(text: str) -> str:
    """The last <answer>...</answer>; an unclosed final <answer> tag; else the last non-empty line."""
    tags = _ANSWER_TAG.findall(text or "")
    if tags:
        return tags[-1].strip()
    m = _OPEN_TAG.search(text or "")
    if m and m.group(1).strip():
        return m.group(1).strip().splitlines()[0].strip()
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    return [str(value)]


class BenchEnv:
    """Base of the built-in benchmarks. Subclasses set the ClassVars and implement parse_item / _run."""

    name: ClassVar[str] = ""
    scorer: ClassVar[str] = ""
    Options: ClassVar[type[EnvOptions]] = EnvOptions
    package_dir: ClassVar[Path]
    default_task_types: ClassVar[tuple[str, ...]] = ()

    def __init__(self, env_cfg: EnvSection | None = None, options: EnvOptions | None = None) -> None:
        self.cfg = env_cfg if env_cfg is not None else EnvSection.model_validate({"name": self.name})
        self.options: Any = options if options is not None else self.Options()

    # --- data --------------------------------------------------------------------------------
    @property
    def sample_dir(self) -> Path:
        return self.package_dir / "sample"

    def configured_source(self) -> Path | None:
        """The user's data (split_dir or data_path), or None when the bundled sample is used."""
        if self.cfg.split_mode == "ratio" and self.cfg.data_path:
            return Path(self.cfg.data_path).expanduser()
        if self.cfg.split_dir:
            return Path(self.cfg.split_dir).expanduser()
        return None

    def data_root(self, override: str = "") -> Path:
        """Where relative file references in items (images, workbooks, documents) are resolved."""
        if override:
            return Path(override).expanduser()
        src = self.configured_source()
        if src is None:
            return self.sample_dir
        return src.parent if src.is_file() else src

    def data_status(self) -> str:
        src = self.configured_source()
        if src is None:
            return "sample" if self.sample_dir.is_dir() else "missing: no env.split_dir / env.data_path set"
        key = "env.data_path" if self.cfg.split_mode == "ratio" and self.cfg.data_path else "env.split_dir"
        return split_status(src, key, self.name)

    def load_splits(self) -> Splits:
        return load_splits(self.cfg, parse_item=self.parse_item, default_dir=self.sample_dir)

    def parse_item(self, record: Any, split: str) -> Item:
        raise NotImplementedError

    def initial_skill(self) -> str:
        return read_skill_file(self.cfg.skill_init, self.package_dir / "initial.md", self.cfg)

    def prompt_dirs(self) -> list[Path]:
        d = self.package_dir / "prompts"
        return [d] if d.is_dir() else []

    def task_types(self) -> list[str]:
        return list(self.default_task_types)

    def check_student(self, student: LLM) -> None:
        """Called by the trainer before any model call; raises UsageError when the student cannot do the task."""

    # --- running -----------------------------------------------------------------------------
    async def run_task(self, item: Item, skill: str, student: LLM, *, sample: int = 0, temperature: float = 0.0,
                       feedback: bool = True) -> Trajectory:
        try:
            return await self._run(item, skill, student, sample=sample, temperature=temperature, feedback=feedback)
        except _STOP_RUN:
            raise
        except Exception as e:  # noqa: BLE001 - one task's failure is a scored failure, not a crash
            return failed_trajectory(item, e)

    async def _run(self, item: Item, skill: str, student: LLM, *, sample: int, temperature: float,
                   feedback: bool) -> Trajectory:
        raise NotImplementedError

    async def ask(self, student: LLM, messages: list[Message], *, max_tokens: int, temperature: float,
                  sample: int, extra: dict[str, Any] | None = None) -> Completion:
        return await student.complete(messages, max_tokens=max_tokens, temperature=temperature, stage="rollout",
                                      sample=sample, extra=extra)

    def finish(self, item: Item, messages: list[Message], answer: str, *, hard: float, soft: float,
               fail_reason: str = "", gold: Any = None, extras: dict[str, Any] | None = None,
               error: str | None = None) -> Trajectory:
        """A scored trajectory whose last message is the evaluation (verdict and gold, for the teacher)."""
        gold = item.gold if gold is None else gold
        msgs = [*messages, evaluation_message(gold, answer, hard, fail_reason)]
        return Trajectory(item_id=item.id, task_type=item.task_type, messages=msgs, answer=answer, gold=gold,
                          hard=float(hard), soft=float(soft), fail_reason=fail_reason, error=error,
                          question=question_text(item), extras=dict(extras or {}))


def ratio_split_records(records: Sequence[Any], *, ratio: str = "2:1:7", seed: int = 42) -> dict[str, list[Any]]:
    order = list(range(len(records)))
    random.Random(seed).shuffle(order)
    out: dict[str, list[Any]] = {}
    start = 0
    for split, count in zip(SPLITS, ratio_counts(len(records), parse_ratio(ratio)), strict=True):
        out[split] = [records[i] for i in order[start:start + count]]
        start += count
    return out


def write_prepared(records: Sequence[dict[str, Any]], dest: Path, *, env: str, source: Path, ratio: str = "2:1:7",
                   seed: int = 42, id_key: str = "id") -> dict[str, Any]:
    """Write a split_dir layout (train/val/test items.json + split_manifest.json); return a summary."""
    if not records:
        raise DataError(f"{source}: no records found to prepare")
    ids = [str(r.get(id_key, "")) for r in records]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise DataError(f"{source}: duplicate {id_key} values: {', '.join(dup[:5])}")
    parts = ratio_split_records(records, ratio=ratio, seed=seed)
    for split, recs in parts.items():
        write_json(dest / split / "items.json", recs)
    counts = {s: len(v) for s, v in parts.items()}
    write_json(dest / "split_manifest.json", {
        "env": env, "source": str(source), "split_mode": "ratio", "split_ratio": ratio, "split_seed": seed,
        "counts": counts, "ids": {s: [str(r.get(id_key, "")) for r in v] for s, v in parts.items()},
    })
    return {"env": env, "dest": str(dest), "n": len(records), "counts": counts,
            "config": {"env.split_mode": "split_dir", "env.split_dir": str(dest)}}
