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
FAIL_KINDS = ("", "missing_knowledge", "form", "error")  # Trajectory.fail_kind


@dataclass(frozen=True)
class ReplyContract:
    """What a passing reply of one task must contain, stated by the environment as data (DESIGN.md section 10).

    The engine reads this, never the environment's feedback wording: the demonstrate proposers put the required
    form on replies someone wrote (engine/proposers/), and the Goodhart guard discounts the fixed form before it
    compares replies (engine/goodhart.py). Every field is optional; an environment states what it knows.
    """

    required: tuple[str, ...] = ()  # literal texts every passing reply holds (a label, a fixed sentence, an address)
    forbidden: tuple[str, ...] = ()  # texts no passing reply holds (a banned word)
    starts_with: str = ""  # the text a passing reply opens with
    ends_with: str = ""  # the text a passing reply ends with
    labels: tuple[str, ...] = ()  # texts that each lead a line of a passing reply, in order (sections, numbered steps)
    forms: tuple[str, ...] = ()  # fill-in forms, `...` where the reply's own words go (a tool call's argument)
    one_of: tuple[tuple[str, ...], ...] = ()  # groups of alternatives: a passing reply holds one text of each group
    gold: tuple[str, ...] = ()  # content: a passing reply carries one of these values (the task's answer)
    max_chars: int = 0  # 0: no limit
    checker: tuple[str, ...] = ()  # the scorer's own words (a rubric, the requirement as the teacher reads it)
    patterns: tuple[str, ...] = ()  # the scorer's regexes: a skill that holds one copies the checker
    reference: str = ""  # a whole correct reply written by hand, where the data have one (a worked example's gold)

    def fixed_texts(self) -> tuple[str, ...]:
        """The literal texts of the form (what replies of the task may share without copying each other)."""
        pieces = [p for f in self.forms for p in f.split("...") if p.strip()]
        return tuple(dict.fromkeys(t for t in (self.starts_with, *self.required, *self.labels, *pieces,
                                               self.ends_with) if t.strip()))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any] | None) -> ReplyContract | None:
        if not isinstance(d, dict):
            return None
        out: dict[str, Any] = {}
        for k in cls.__dataclass_fields__:
            if k not in d:
                continue
            v = d[k]
            out[k] = tuple(tuple(g) for g in v) if k == "one_of" else tuple(v) if isinstance(v, list | tuple) else v
        return cls(**out)


# Item.meta key: the item's gold is its checker's own words (a rubric), not an answer a reply may carry; a worked
# example of the task is guarded against it like any checker text (engine/stages/update.py own_answers).
GOLD_IS_CHECKER = "gold_is_checker"


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
    fail_kind: str = ""  # one of FAIL_KINDS: "missing_knowledge" (a fact the student lacks), "form", "error"
    contract: ReplyContract | None = None  # what a passing reply must contain (the environment's, when it states one)

    @property
    def failed(self) -> bool:
        return self.hard < 1e-9

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Trajectory:
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        known["contract"] = ReplyContract.from_json(known.get("contract"))
        return cls(**known)


@dataclass
class Splits:
    train: list[Item]
    val: list[Item]
    test: list[Item]
    pinned: bool = field(default=False, kw_only=True)  # every item's split was named by the data (split_dir, a task's "split"), not env.split_ratio

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

    # Optional (not part of the runtime check; see `ExampleVerifier` and `ContractSource`):
    # async def verify_example(self, item, reply, student) -> float
    # def reply_contract(self, item) -> ReplyContract | None


@runtime_checkable
class ContractSource(Protocol):
    """An environment that states what a passing reply of a task must contain (`ReplyContract`). Without one the
    optimizer still bootstraps examples from passing replies and verifies teacher corrections; it only cannot put
    the required form on a reply (engine/proposers/repairs.py)."""

    def reply_contract(self, item: Item) -> ReplyContract | None: ...


def contract_of(env: Any, item: Item) -> ReplyContract | None:
    """`env`'s contract for `item`, or None when the environment states none."""
    return env.reply_contract(item) if isinstance(env, ContractSource) else None


@runtime_checkable
class ExampleVerifier(Protocol):
    """An environment that can score a proposed worked example with its own scorer.

    The optimizer's demonstration edits (engine/proposers/) put a (task, reply) pair into the
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
