"""The tasks a head-to-head runs: a skillgrad config (file + overrides) each, at two sizes.

Every system trains on the same environment's train/val splits and is scored on its test split by the harness;
the test split is never passed to any optimiser (skillgrad runs with `evaluation.eval_test=false`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from skillgrad.config.loader import packaged_config_path

SEARCHQA_SAMPLE = Path(__file__).resolve().parents[2] / "src/skillgrad/envs/searchqa/sample"
SUITE_DIR = Path(__file__).resolve().parents[1] / "skills_suite"


@dataclass
class Task:
    name: str
    config: Path
    overrides: list[str] = field(default_factory=list)
    tiny: list[str] = field(default_factory=list)  # replaces the size overrides under --tiny

    def sized(self, tiny: bool) -> list[str]:
        return [*self.overrides, *(self.tiny if tiny else [])]


def builtin_tasks() -> dict[str, Task]:
    demo, fewshot = packaged_config_path("demo.yaml"), packaged_config_path("demo-fewshot.yaml")
    tiny = ["train.num_epochs=1", "train.batch_size=2", "env.limit=4"]  # 2 steps on 4 train items
    return {
        "facts": Task("facts", demo, ["env.n_facts=10", "train.num_epochs=1", "train.batch_size=5"], tiny),
        "fewshot-format": Task("fewshot-format", fewshot,
                               ["env.split_ratio=10:8:12", "train.num_epochs=1", "train.batch_size=5"], tiny),
        # SkillOpt's own SearchQA format (split_dir with train/val/test items.json), the sample skillgrad ships
        "searchqa": Task("searchqa", demo, ["env.name=searchqa", "env.split_mode=split_dir",
                                            f"env.split_dir={SEARCHQA_SAMPLE}", "env.max_tokens=48",
                                            "train.num_epochs=2", "train.batch_size=3",
                                            "evaluation.min_val_items=2"],  # the sample's val split is 2 items
                         ["train.num_epochs=1", "train.batch_size=2"]),
    }


def suite_task(spec: str) -> Task:
    """`suite:<name or tasks.jsonl path>`: a skill from benchmarks/skills_suite on the `tasks` environment."""
    ref = spec.split(":", 1)[1]
    path = Path(ref)
    if not path.suffix:
        path = SUITE_DIR / ref / "tasks.jsonl"
    if not path.is_file():
        raise SystemExit(f"--tasks {spec}: no tasks file at {path}; name a skill under {SUITE_DIR} or a .jsonl path")
    # skillgrad's defaults, as benchmarks/skills_suite.py trains the suite, in its --quick size
    overrides = ["env.name=tasks", f"env.tasks_file={path}", "train.num_epochs=1", "env.limit=10"]
    skill = path.parent / "SKILL.md"
    if skill.is_file():
        overrides.append(f"env.skill_init={skill}")
    return Task(f"suite:{path.parent.name}", packaged_config_path("_base_/default.yaml"), overrides,
                ["train.num_epochs=1", "train.batch_size=2", "env.limit=4"])


def resolve(names: list[str]) -> list[Task]:
    known = builtin_tasks()
    out = []
    for n in names:
        if n.startswith("suite:"):
            out.append(suite_task(n))
        elif n in known:
            out.append(known[n])
        else:
            raise SystemExit(f"--tasks: unknown task {n!r}; choose from {', '.join(known)} or suite:<skill>")
    return out
