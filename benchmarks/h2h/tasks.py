"""The tasks a head-to-head runs: a skillgrad config (file + overrides) each, at two sizes.

Every system trains on the same environment's train/val splits and is scored on its test split by the harness;
the test split is never passed to any optimiser (skillgrad runs with `evaluation.eval_test=false`). skillgrad runs
its defaults (`_base_/default.yaml`) on every task: a task sets only its environment and the run's size (epochs,
batch), which SkillOpt gets too; never the demo's tuned optimizer settings (demo.yaml).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from skillgrad.config.loader import packaged_config_path

SEARCHQA_SAMPLE = Path(__file__).resolve().parents[2] / "src/skillgrad/envs/searchqa/sample"
SUITE_DIR = Path(__file__).resolve().parents[1] / "skills_suite"
REPORT_DIR = Path(__file__).resolve().parents[1] / "report_suite"
PUBLIC_DIR = Path(__file__).resolve().parents[1] / "public_tasks"


@dataclass
class Task:
    name: str
    config: Path
    overrides: list[str] = field(default_factory=list)
    tiny: list[str] = field(default_factory=list)  # replaces the size overrides under --tiny

    def sized(self, tiny: bool) -> list[str]:
        return [*self.overrides, *(self.tiny if tiny else [])]


def builtin_tasks() -> dict[str, Task]:
    default = packaged_config_path("_base_/default.yaml")
    tiny = ["train.num_epochs=1", "train.batch_size=2", "env.limit=4"]  # 2 steps on 4 train items
    return {
        # the demo's task (`skillgrad demo`): its environment settings, not its tuned optimizer
        "facts": Task("facts", default, ["env.name=facts", "env.max_tokens=32", "env.n_facts=10",
                                         "train.num_epochs=1", "train.batch_size=5"], tiny),
        "fewshot-format": Task("fewshot-format", default,
                               ["env.name=fewshot-format", "env.max_tokens=16", "env.split_ratio=10:8:12",
                                "train.num_epochs=1", "train.batch_size=5"], tiny),
        # SkillOpt's own SearchQA format (split_dir with train/val/test items.json), the sample skillgrad ships
        "searchqa": Task("searchqa", default, ["env.name=searchqa", "env.split_mode=split_dir",
                                            f"env.split_dir={SEARCHQA_SAMPLE}", "env.max_tokens=48",
                                            "train.num_epochs=2", "train.batch_size=3",
                                            "evaluation.min_val_items=2"],  # the sample's val split is 2 items
                         ["train.num_epochs=1", "train.batch_size=2"]),
    }


def suite_task(spec: str) -> Task:
    """`suite:<name or tasks.jsonl path>`: a skill from benchmarks/skills_suite (the development suite) on the
    `tasks` environment; `report:<name>`: one from benchmarks/report_suite, never used in development."""
    kind, ref = spec.split(":", 1)
    folder = REPORT_DIR if kind == "report" else SUITE_DIR
    path = Path(ref)
    if not path.suffix:
        path = folder / ref / "tasks.jsonl"
    if not path.is_file():
        raise SystemExit(f"--tasks {spec}: no tasks file at {path}; name a skill under {folder} or a .jsonl path")
    # skillgrad's defaults, as benchmarks/skills_suite.py trains the suite, in its --quick size
    overrides = ["env.name=tasks", f"env.tasks_file={path}", "train.num_epochs=1", "env.limit=10"]
    skill = path.parent / "SKILL.md"
    if skill.is_file():
        overrides.append(f"env.skill_init={skill}")
    return Task(f"{kind}:{path.parent.name}", packaged_config_path("_base_/default.yaml"), overrides,
                ["train.num_epochs=1", "train.batch_size=2", "env.limit=4"])


def public_task(spec: str) -> Task:
    """`public:<name>`: a sample of a public dataset under benchmarks/public_tasks (never used in development), on the
    `tasks` environment with every split whole (its test split is larger than the suites' 10 items) and the
    suites' 10-item training batch."""
    name = spec.split(":", 1)[1]
    path = PUBLIC_DIR / name / "tasks.jsonl"
    if not path.is_file():
        known = ", ".join(sorted(p.name for p in PUBLIC_DIR.iterdir() if (p / "tasks.jsonl").is_file()))
        raise SystemExit(f"--tasks {spec}: no tasks file at {path}; choose from {known}")
    overrides = ["env.name=tasks", f"env.tasks_file={path}", f"env.skill_init={path.parent / 'SKILL.md'}",
                 "train.num_epochs=1", "train.batch_size=10"]
    return Task(spec, packaged_config_path("_base_/default.yaml"), overrides,
                ["train.num_epochs=1", "train.batch_size=2", "env.limit=4"])


def resolve(names: list[str]) -> list[Task]:
    known = builtin_tasks()
    out = []
    for n in names:
        if n.startswith(("suite:", "report:")):
            out.append(suite_task(n))
        elif n.startswith("public:"):
            out.append(public_task(n))
        elif n in known:
            out.append(known[n])
        else:
            raise SystemExit(f"--tasks: unknown task {n!r}; choose from {', '.join(known)}, suite:<skill>, "
                             "report:<skill> or public:<name>")
    return out
