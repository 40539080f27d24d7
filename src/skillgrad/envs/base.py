"""The Environment protocol: splits, running one task with a skill and a student, and scoring it.

Modelled on an adapter contract (load data / run / score). `run_task` never raises for a single
task's failure: a crash or timeout becomes a failed, scored `Trajectory` with the error in it.
Environment-level problems (missing data file, wrong field) raise `DataError` from `load_splits`,
before any model call.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from skillgrad.models.base import LLM, Message

SPLITS = ("train", "val", "test")


@dataclass
class Item:
    id: str
    inputs: dict[str, Any]  # question, context, choices, image path, ... (environment-specific)
    gold: Any = None
    task_type: str = "default"
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Item:
        return cls(**d)


@dataclass
class Trajectory:
    """One task run: what the teacher needs to reflect on it, and the score."""

    item_id: str
    task_type: str = "default"
    messages: list[Message] = field(default_factory=list)  # incl. a final evaluation message with the gold
    answer: str = ""
    gold: Any = None
    hard: float = 0.0
    soft: float = 0.0
    fail_reason: str = ""  # "" on success; "<kind>: <detail>" on failure
    error: str | None = None  # crash / timeout text, when the task itself failed
    env_error: str | None = None  # the environment's own code raised (not the model's failure): text + where
    question: str = ""
    trimmed: dict[str, Any] | None = None  # {"tokens_before":..,"tokens_after":..,"dropped":..}
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.hard < 1e-9

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Trajectory:
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        return cls(**known)


@dataclass
class Splits:
    train: list[Item]
    val: list[Item]
    test: list[Item]

    def get(self, name: str) -> list[Item]:
        return {"train": self.train, "val": self.val, "test": self.test}[name]


class EnvOptions(BaseModel):
    """Environment-specific options (the `env.*` keys beyond the common ones).

    Each environment subclasses this; unknown keys are an error with a did-you-mean.
    """

    model_config = ConfigDict(extra="forbid")


@runtime_checkable
class Environment(Protocol):
    name: ClassVar[str]
    scorer: ClassVar[str]  # short description for `skillgrad envs list`, e.g. "EM / token F1"
    Options: ClassVar[type[EnvOptions]]

    def data_status(self) -> str:
        """'ready', 'sample', or 'missing: <what>' for `skillgrad envs list`."""
        ...

    def load_splits(self) -> Splits:
        """Load train/val/test. Raises DataError naming the file and field on bad data."""
        ...

    def initial_skill(self) -> str: ...

    def prompt_dirs(self) -> list[Path]:
        """Directories searched (first) for prompt template overrides for this environment."""
        ...

    async def run_task(
        self, item: Item, skill: str, student: LLM, *, sample: int = 0, temperature: float = 0.0,
        feedback: bool = True,
    ) -> Trajectory:
        """Run one task with the skill; never raises for the task's own failure."""
        ...

    # Optional (not part of the runtime check; see `ExampleVerifier`):
    # async def verify_example(self, item, reply, student) -> float


@runtime_checkable
class ExampleVerifier(Protocol):
    """An environment that can score a proposed worked example with its own scorer.

    The optimizer's demonstration edits (engine/stages/demonstrate.py) put a (task, reply) pair into the
    skill only after `verify_example` gave the reply full marks on that task. Without it, only replies the
    student itself gave on a passing rollout become examples (the rollout's score is the verification).
    """

    async def verify_example(self, item: Item, reply: str, student: LLM) -> float:
        """The hard score (0..1) the environment would give `reply` on `item`; `student` serves scorers that
        need a model (a rubric judge). Never raises for a bad reply."""
        ...


@runtime_checkable
class ExampleJudge(Protocol):
    """An `ExampleVerifier` that also says why it refused a worked example and what limit it holds one to, so
    that the demonstrate prompt states the limit and a refusal names its rule ("too long (80 > 48 tokens)", never
    "failed the checks" for a reply the checks pass)."""

    def example_limit(self, item: Item, student: LLM) -> int:
        """The most student tokens a worked example for `item` may have (0 = no limit)."""
        ...

    async def judge_example(self, item: Item, reply: str, student: LLM) -> tuple[float, str]:
        """(hard score, why it was refused: '' when it passed)."""
        ...
