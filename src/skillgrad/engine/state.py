"""Run state persisted in runtime_state.json after every completed stage boundary (atomic write).

The skills themselves are stored inline so that one atomic write is always consistent; the
SkillOpt-compatible path fields point at the human-readable copies.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from skillgrad.core.records import RUNTIME_STATE_VERSION, migrate_runtime_state


@dataclass
class RunState:
    schema_version: int = RUNTIME_STATE_VERSION  # core/records.py: what changed in each version, migrations
    initial_skill: str = ""
    current_skill: str = ""
    current_score: float = -1.0
    current_origin: str = "initial_skill"
    best_skill: str = ""
    best_score: float = -1.0
    best_step: int = 0
    best_origin: str = "initial_skill"
    baseline_score: float | None = None
    baseline_hard: float | None = None
    baseline_soft: float | None = None
    last_completed_step: int = 0
    baseline_done: bool = False
    epochs_done: list[int] = field(default_factory=list)  # epoch-end (slow update + meta skill) finished
    epoch_end_skills: dict[str, str] = field(default_factory=dict)  # epoch -> current skill carried forward
    sel_cache: dict[str, list[float]] = field(default_factory=dict)  # skill hash -> [hard, soft]
    sel_items: dict[str, dict[str, list[float]]] = field(default_factory=dict)  # hash -> item -> [hard, soft]
    sel_degenerate: dict[str, str] = field(default_factory=dict)  # hash -> why its replies look degenerate
    guard_waived: dict[str, str] = field(default_factory=dict)  # hash -> the guard's reason, waived (candidate.py)
    judgements: list[dict[str, Any]] = field(default_factory=list)  # every candidate verdict (engine/candidate.py)
    train_hard: dict[str, float] = field(default_factory=dict)  # hash -> training pass rate (engine/gate/tiebreak.py)
    final_edit_credit: dict[str, Any] = field(default_factory=dict)  # run-end credit of best_skill.md
    buffer: dict[str, Any] = field(default_factory=dict)
    meta_skill: str = ""
    lr_steps: int = 0  # steps that reached select: the schedule index
    finished: bool = False
    stopped: str | None = None
    meter: dict[str, Any] = field(default_factory=dict)
    budget: dict[str, Any] = field(default_factory=dict)
    elapsed_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(
            current_skill_path=f"skills/skill_v{self.last_completed_step:04d}.md",
            best_skill_path="best_skill.md",
        )
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any], path: str = "runtime_state.json") -> RunState:
        """A saved state of any earlier schema version, migrated; a newer one is refused (UsageError)."""
        d = migrate_runtime_state(d, path)
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})
