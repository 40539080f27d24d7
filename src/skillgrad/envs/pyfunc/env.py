"""`pyfunc`: a skill trained on examples and a metric held in Python (`skillgrad.train(trainset=..., metric=...)`).

The registry builds it like any environment; the examples, the metric and the initial skill text are then
bound by the caller (`bind`), never stored in a module global: two runs in one process each have their own.
The config records what identifies them (the data's fingerprint, the metric's name, the skill's hash), so a
resumed run refuses other data, and a run started from Python and continued from the command line says
that its metric lives in Python.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from skillgrad.config.schema import EnvSection
from skillgrad.envs.base import EnvOptions, Item, Splits, Trajectory
from skillgrad.envs.chat import read_skill_file, single_turn_task
from skillgrad.envs.pyfunc.data import SETS, fingerprint, metric_name, read_score, to_item
from skillgrad.errors import ConfigError, UsageError
from skillgrad.models.base import LLM

DEFAULT_SKILL = "# Skill\n\nAnswer the user's request accurately and in the expected format.\n"
Metric = Callable[[Any, str], Any]


class PyFuncOptions(EnvOptions):
    data_fingerprint: str = Field("", description="Digest of the examples given in Python (checked on resume).")
    metric: str = Field("", description="Name of the metric callable (a record; the callable is given in Python).")
    skill_sha: str = Field("", description="Hash of the initial skill text given in Python ('' = env.skill_init "
                           "or a one-line default).")
    pass_at: float = Field(1.0, gt=0, le=1, description="A metric score at or above this is a pass (hard 1); the "
                           "score itself is the soft score.")
    max_tokens: int = Field(256, ge=4, description="Student completion token cap.")
    max_examples: int = Field(8, ge=0, description="Worked examples from the skill sent as chat turns.")
    preamble: str = Field("You are a helpful assistant.", description="System text before the skill.")


def skill_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class PyFuncEnv:
    name: ClassVar[str] = "pyfunc"
    scorer: ClassVar[str] = "your Python metric (score in [0, 1], optional feedback)"
    Options: ClassVar[type[EnvOptions]] = PyFuncOptions

    def __init__(self, env_cfg: EnvSection, options: PyFuncOptions) -> None:
        self.cfg, self.options = env_cfg, options
        self._splits: Splits | None = None
        self._examples: dict[str, Any] = {}
        self._metric: Metric | None = None
        self._skill: str | None = None

    def bind(self, data: Mapping[str, Sequence[Any]], metric: Metric, skill: str | None = None) -> PyFuncEnv:
        """Give the environment its examples ({"train": [...], "val": [...], "test": [...]}), metric and initial
        skill text; the config's fingerprint, metric name and skill hash must match (a resumed run's config)."""
        if not callable(metric):
            raise UsageError(f"metric must be a callable metric(example, reply) -> score, not {metric!r}")
        fp = fingerprint(data)
        if self.options.data_fingerprint and fp != self.options.data_fingerprint:
            raise UsageError(f"the examples differ from this run's (data fingerprint {fp}, the run's "
                             f"{self.options.data_fingerprint}); pass the same trainset/valset/testset to continue "
                             "it, or start another run (another out=)")
        if skill is not None and self.options.skill_sha and skill_sha(skill) != self.options.skill_sha:
            raise UsageError("skill: the initial skill differs from this run's; pass the same text to continue it")
        parts: dict[str, list[Item]] = {}
        examples: dict[str, Any] = {}
        for split in SETS:
            parts[split] = []
            for i, example in enumerate(data.get(split, ())):
                item = to_item(example, split, i)
                if item.id in examples:
                    raise UsageError(f"{SETS[split]}[{i}]: id {item.id!r} is used twice; ids must be unique "
                                     "across trainset, valset and testset")
                examples[item.id] = example
                parts[split].append(item)
        limit = self.cfg.limit or None
        self._splits = Splits(parts["train"][:limit], parts["val"][:limit], parts["test"][:limit], pinned=True)
        self._examples, self._metric, self._skill = examples, metric, skill
        return self

    def _unbound(self) -> ConfigError:
        return ConfigError(f"environment pyfunc: its examples and metric ({self.options.metric or 'a callable'}) "
                           "live in Python; start or continue this run with skillgrad.train(trainset=..., "
                           "valset=..., metric=..., out=<run dir>) (docs/api.md)")

    def data_status(self) -> str:
        return "ready" if self._splits is not None else "given in Python: skillgrad.train(trainset=..., metric=...)"

    def load_splits(self) -> Splits:
        if self._splits is None:
            raise self._unbound()
        return self._splits

    def initial_skill(self) -> str:
        if self._skill is not None:
            return self._skill
        return read_skill_file(self.cfg.skill_init, Path(), self.cfg) if self.cfg.skill_init else DEFAULT_SKILL

    def prompt_dirs(self) -> list[Path]:
        return []

    async def score(self, item: Item, reply: str) -> tuple[float, float, str]:
        """(hard, soft, fail_reason) from the metric; the metric's feedback is the reason the teacher reads."""
        if self._metric is None:
            raise self._unbound()
        result = self._metric(self._examples[item.id], reply)
        if inspect.isawaitable(result):
            result = await result
        score, feedback = read_score(result, self.options.metric or metric_name(self._metric))
        hard = 1.0 if score >= self.options.pass_at - 1e-9 else 0.0
        reason = "" if hard else f"metric: {feedback.strip() or f'score {score:.2f}'}"
        return hard, score, reason

    async def verify_example(self, item: Item, reply: str, student: LLM) -> float:
        return (await self.score(item, reply))[0]

    async def run_task(self, item: Item, skill: str, student: LLM, *, sample: int = 0, temperature: float = 0.0,
                       feedback: bool = True) -> Trajectory:
        # a metric that raises is an environment error (the executor records where it raised)
        return await single_turn_task(item, skill, student, preamble=self.options.preamble,
                                      max_tokens=self.options.max_tokens, temperature=temperature, sample=sample,
                                      score=lambda answer, gold: self.score(item, answer),
                                      max_examples=self.options.max_examples)
