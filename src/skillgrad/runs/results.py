"""Typed, read-only views of a run directory and of an evaluation, for the Python API.

Built from the files a run writes (summary.json, history.json, skills/, eval_summary.json) through the
tolerant reader in report_data, so a damaged file gives a missing value and a warning, never an exception.
Every view keeps the full JSON record in `raw` for fields it does not name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgrad.runs.report_data import as_float, as_int
from skillgrad.runs.report_data import load_run as _load_data


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True)
class Summary:
    """summary.json: how the run ended and the held-out test scores of the initial, best and final skills."""

    status: str  # completed | stopped | failed | ...
    stop_reason: str | None
    env: str | None
    teacher: str | None
    student: str | None
    baseline_test_hard: float | None  # the initial skill on the test split
    test_hard: float | None  # the best skill
    final_test_hard: float | None  # the skill as it stood at the last step
    test_delta_hard: float | None  # best - initial
    baseline_selection_score: float | None  # gate score of the initial skill on the selection split
    best_selection_score: float | None
    best_step: int | None
    total_steps: int
    total_accepts: int
    total_rejects: int
    wall_time_s: float | None
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Summary:
        return cls(status=str(d.get("status") or "unknown"), stop_reason=_str(d.get("stop_reason")),
                   env=_str(d.get("env")), teacher=_str(d.get("teacher")), student=_str(d.get("student")),
                   baseline_test_hard=as_float(d.get("baseline_test_hard")), test_hard=as_float(d.get("test_hard")),
                   final_test_hard=as_float(d.get("final_test_hard")),
                   test_delta_hard=as_float(d.get("test_delta_hard")),
                   baseline_selection_score=as_float(d.get("baseline_selection_gate_score")),
                   best_selection_score=as_float(d.get("best_selection_gate_score")),
                   best_step=as_int(d.get("best_step")), total_steps=as_int(d.get("total_steps")) or 0,
                   total_accepts=as_int(d.get("total_accepts")) or 0,
                   total_rejects=as_int(d.get("total_rejects")) or 0,
                   wall_time_s=as_float(d.get("total_wall_time_s")), raw=d)


@dataclass(frozen=True)
class Step:
    """One history.json record: what the gate decided at a step and the scores it decided on."""

    step: int
    epoch: int
    action: str  # accept | accept_new_best | reject | skip_... | blocked
    selection_score: float | None  # the candidate's gate score
    current_score: float | None  # the current skill's score after the decision
    best_score: float | None
    rollout_hard: float | None  # the train batch's score under the skill the step started from
    wall_time_s: float | None
    raw: dict[str, Any] = field(repr=False, compare=False)

    @property
    def accepted(self) -> bool:
        return self.action.startswith("accept")

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Step:
        return cls(step=as_int(d.get("step")) or 0, epoch=as_int(d.get("epoch")) or 0,
                   action=str(d.get("action") or ""), selection_score=as_float(d.get("candidate_gate_score")),
                   current_score=as_float(d.get("current_score")), best_score=as_float(d.get("best_score")),
                   rollout_hard=as_float(d.get("rollout_hard")), wall_time_s=as_float(d.get("wall_time_s")), raw=d)


@dataclass(frozen=True)
class Run:
    """A run directory: its summary (None while it runs or if it never ended), steps and skill versions."""

    path: Path
    status: str  # the summary's status, else what the files say (incomplete, not started)
    config: dict[str, Any] = field(repr=False)
    summary: Summary | None
    history: list[Step] = field(repr=False)
    skill_files: dict[int, Path] = field(repr=False)  # version -> skills/skill_vNNNN.md (0 = initial)
    warnings: list[str] = field(repr=False)  # files that could not be read

    @property
    def best_skill_path(self) -> Path:
        return self.path / "best_skill.md"

    @property
    def best_skill(self) -> str | None:
        """best_skill.md's text (None before the run has one)."""
        return _read(self.best_skill_path)

    @property
    def initial_skill(self) -> str | None:
        return self.skill(0) if 0 in self.skill_files else None

    @property
    def skills(self) -> dict[int, str]:
        """Every saved skill version's text, by version (0 = initial, N = after step N)."""
        return {v: text for v in self.skill_files if (text := self.skill(v)) is not None}

    def skill(self, version: int) -> str | None:
        path = self.skill_files.get(version)
        return _read(path) if path is not None else None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def read_run(path: str | Path) -> Run:
    """The typed view of a run directory (see `skillgrad.load_run`)."""
    data = _load_data(Path(path))
    summary = Summary.from_json(data.summary) if data.summary else None
    return Run(path=data.path, status=summary.status if summary else data.status, config=data.config,
               summary=summary, history=[Step.from_json(r) for r in data.history], skill_files=dict(data.skills),
               warnings=list(data.warnings))


@dataclass(frozen=True)
class SplitScore:
    """One split of an evaluation: items scored and the mean hard / soft score."""

    n: int
    hard: float | None
    soft: float | None
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Evaluation:
    """eval_summary.json of `skillgrad eval` / `skillgrad.evaluate`."""

    path: Path  # the evaluation's directory (results.jsonl per split, the conversations, events)
    env: str | None
    student: str | None
    skill_hash: str | None
    splits: dict[str, SplitScore]
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, path: Path, d: dict[str, Any]) -> Evaluation:
        splits = {name: SplitScore(n=as_int(s.get("n")) or 0, hard=as_float(s.get("hard")),
                                   soft=as_float(s.get("soft")), raw=s)
                  for name, s in (d.get("splits") or {}).items() if isinstance(s, dict)}
        return cls(path=Path(path), env=_str(d.get("env")), student=_str(d.get("student")),
                   skill_hash=_str(d.get("skill_hash")), splits=splits, raw=d)
