"""`skillgrad train --skill DIR` / `skillgrad.train(skill=DIR)`: train a skill folder against its own evals and
write each evaluation (baseline, each accepted step, the final skill) as an iteration of the folder's skill-eval
workspace (`<name>-workspace/` beside the folder unless told otherwise).

The training run itself is an ordinary run of the `skill-folder` environment (envs/skillfolder/): same engine,
gate, budgets, cache and run directory. A workspace another tool already wrote is read first: its latest
benchmark.json is reported as the recorded baseline and its feedback.json becomes the reviewer notes the teacher
sees. Every workspace evaluation scores all evals (train, validation and held-out alike, each marked with its
split in eval_metadata.json); the held-out pass rates before and after are the figures to report.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgrad import api
from skillgrad.core.atomic import write_json, write_text
from skillgrad.envs.base import Trajectory
from skillgrad.envs.skillfolder.folder import SkillFolder, read_skill_folder
from skillgrad.envs.skillfolder.workspace import (
    RunRecord,
    next_iteration,
    read_workspace,
    write_iteration,
)
from skillgrad.runs.results import Run
from skillgrad.runs.store import RunStore

DEFAULT_CONFIG = "skillgrad:skill-folder.yaml"
SPLITS = ("train", "val", "test")


@dataclass
class SkillTraining:
    run: Run | None
    folder: Path
    workspace: Path
    iterations: list[int] = field(default_factory=list)
    held_out: dict[str, float | None] = field(default_factory=dict)  # no_skill, before, after
    recorded_baseline: dict[str, float] = field(default_factory=dict)  # another tool's benchmark, by arm
    trigger: dict[str, Any] | None = None
    run_dir: Path | None = None  # the description optimizer's folder (it makes no engine run)

    def to_json(self) -> dict[str, Any]:
        where = self.run.path if self.run else self.run_dir
        return {"run": str(where) if where else None, "folder": str(self.folder),
                "workspace": str(self.workspace), "iterations": self.iterations, "held_out": self.held_out,
                "recorded_baseline": self.recorded_baseline, "trigger": self.trigger}


def workspace_for(folder: SkillFolder, workspace: str | Path | None) -> Path:
    return Path(workspace) if workspace else folder.root.resolve().parent / f"{folder.name}-workspace"


def skill_overrides(folder: SkillFolder, feedback: Path | None, user: list[str]) -> list[str]:
    """The environment and folder first, the user's own overrides last (they win)."""
    out = ["env.name=skill-folder", f"env.skill_dir={folder.root.resolve()}"]
    if feedback is not None:
        out.append(f"env.feedback_file={feedback.resolve()}")
    return [*out, *user]


def _records(traj: dict[str, Trajectory], split_of: dict[str, str], prompts: dict[str, str]) -> list[RunRecord]:
    out = []
    for item_id, t in traj.items():
        usage = t.extras.get("usage") or {}
        out.append(RunRecord(eval_id=item_id, eval_name=str(t.extras.get("eval_name") or item_id),
                             prompt=prompts.get(item_id, t.question), answer=t.answer,
                             expectations=list(t.extras.get("expectations") or []), split=split_of.get(item_id, ""),
                             seconds=float(t.extras.get("seconds") or 0.0),
                             tokens=int((usage.get("prompt_tokens") or 0) + (usage.get("completion_tokens") or 0)),
                             error=t.error or "", cached=bool(t.extras.get("cached"))))
    return sorted(out, key=lambda r: (SPLITS.index(r.split) if r.split in SPLITS else 3, r.eval_id))


def _score_all(loaded: api.LoadedConfig, skill_file: Path, out: Path, split_of: dict[str, str],
               prompts: dict[str, str], listeners: list[Any]) -> list[RunRecord]:
    """Every eval scored with `skill_file` (the run's cache shared, so a rollout already made is not repeated)."""
    api.evaluate(loaded, skill_file, split="all", out=out, listeners=listeners)
    write_text(out / "student.txt", str(RunStore(out).read_json("eval_summary.json").get("student") or ""))
    traj: dict[str, Trajectory] = {}
    for name in SPLITS:
        traj.update(RunStore(out).results(name).load())
    return _records(traj, split_of, prompts)


def _held_out(records: list[RunRecord], *, whole: bool = False) -> float | None:
    """The held-out evals' mean pass rate (the spec's: the share of assertions that pass), or with `whole` the share
    of held-out evals whose every assertion passes (the run's test_hard)."""
    test = [r for r in records if r.split == "test"]
    if not test:
        return None
    return round(sum(float(r.pass_rate == 1.0) if whole else r.pass_rate for r in test) / len(test), 4)


def write_workspace(loaded: api.LoadedConfig, run: Run, folder: SkillFolder, workspace: Path,
                    listeners: list[Any]) -> tuple[list[int], dict[str, float | None]]:
    """One iteration per distinct skill: the baseline, each accepted step's skill, the final best skill; each
    with the same no-skill arm. Returns (iteration numbers, held-out pass rates)."""
    from skillgrad.envs.registry import create_env

    env = create_env(loaded.config.env)
    splits = env.load_splits()
    split_of = {it.id: name for name in SPLITS for it in splits.get(name)}
    prompts = {c.id: c.prompt for c in folder.cases}
    scored = run.path / "workspace_evals"
    shared = api.load_config(loaded, [f"cache.path={run.path / 'llm_cache.sqlite'}"])
    write_text(scored / "no_skill.md", "")
    without = _score_all(shared, scored / "no_skill.md", scored / "no_skill", split_of, prompts, listeners)
    versions: list[tuple[str, str]] = [("baseline: the folder's SKILL.md", run.skill(0) or folder.package())]
    for step in run.history:
        text = run.skill(step.step)
        if step.accepted and text is not None:
            versions.append((f"step {step.step} (accepted)", text))
    best = run.best_skill
    if best is not None:
        versions.append(("final: best_skill.md", best))
    scored_by_text: dict[str, list[RunRecord]] = {}
    iterations: list[int] = []
    first = next_iteration(workspace)
    for label, text in versions:
        if text in scored_by_text:  # the final skill is often the last accepted one: one iteration says both
            continue
        k = len(scored_by_text)
        path = scored / f"skill_{k}.md"
        write_text(path, text)
        records = scored_by_text[text] = _score_all(shared, path, scored / f"skill_{k}", split_of, prompts,
                                                    listeners)
        write_iteration(workspace, first + k, skill_name=folder.name, skill_path=str(folder.root.resolve()),
                        runs={"with_skill": records, "without_skill": without}, label=label,
                        model=(scored / f"skill_{k}" / "student.txt").read_text(encoding="utf-8"),
                        notes=[f"skillgrad run {run.path}; with_skill ran {label}"])
        iterations.append(first + k)
    first_rec, last_rec = scored_by_text[versions[0][1]], scored_by_text[versions[-1][1]]
    held: dict[str, float | None] = {"no_skill": _held_out(without), "before": _held_out(first_rec),
                                     "after": _held_out(last_rec)}
    held.update({f"{k}_evals_passed": _held_out(r, whole=True)
                 for k, r in (("no_skill", without), ("before", first_rec), ("after", last_rec))})
    return iterations, held


def train_skill(skill_dir: str | Path, *, config: str | Path | None = None, overrides: list[str] | None = None,
                out: str | Path | None = None, fresh: bool = False, target: str = "body",
                workspace: str | Path | None = None, listeners: Iterable[Any] = (),
                progress: api.Progress = False) -> SkillTraining:
    """Train the folder's SKILL.md package (`target="body"`) or its description (`target="description"`)."""
    from skillgrad.errors import UsageError

    if target not in ("body", "description", "all"):
        raise UsageError(f"--target {target!r}: use body (SKILL.md and its references), description, or all")
    folder = read_skill_folder(skill_dir, need_evals=target != "description", need_queries=target != "body")
    ws = workspace_for(folder, workspace)
    prior = read_workspace(ws) if ws.is_dir() else None
    feedback = prior.feedback_path if prior is not None else None
    loaded = api.load_config(config or DEFAULT_CONFIG, skill_overrides(folder, feedback, list(overrides or [])))
    recorded = dict(prior.benchmark.pass_rate) if prior is not None and prior.benchmark is not None else {}
    if target == "description":
        from skillgrad.skillfolder.trigger_train import train_description

        run_dir = Path(out) if out is not None else api.run_dir_for(loaded).with_name(
            api.run_dir_for(loaded).name + "-description")
        report = train_description(folder, loaded.config, run_dir, fresh=fresh)
        result = SkillTraining(None, folder.root, ws, recorded_baseline=recorded, trigger=report, run_dir=run_dir)
        write_json(run_dir / "skill_folder.json", result.to_json())
        return result
    run = api.train(loaded, out=out, fresh=fresh, progress=progress, listeners=listeners)
    shown = list(listeners)
    iterations, held = write_workspace(loaded, run, folder, ws, shown)
    result = SkillTraining(run, folder.root, ws, iterations, held, recorded)
    if target == "all":
        from skillgrad.skillfolder.trigger_train import train_description

        result.trigger = train_description(folder, loaded.config, run.path / "description", fresh=fresh,
                                           hold=description_hold(loaded, run, shown))
        write_json(run.path / "trigger.json", result.trigger)  # `skill adopt` takes both from the run folder
    write_json(run.path / "skill_folder.json", result.to_json())
    return result


def description_hold(loaded: api.LoadedConfig, run: Run, listeners: list[Any]) -> Any:
    """The body half of the one gate for --target all: the trained skill's validation score with a candidate
    description (the student reads the description with the skill) must not fall below its score with the
    folder's own description."""
    shared = api.load_config(loaded, [f"cache.path={run.path / 'llm_cache.sqlite'}"])
    best = run.best_skill_path

    def score(desc: str | None) -> float:
        cfg = api.load_config(shared, {"env.description": desc} if desc else None)
        key = hashlib.sha256((desc or "").encode()).hexdigest()[:12]
        ev = api.evaluate(cfg, best, split="val", out=run.path / "description_gate" / key, listeners=listeners)
        return float(ev.splits["val"].hard or 0.0)

    base = score(None)

    def hold(desc: str) -> tuple[bool, str]:
        got = score(desc)
        return got >= base, f"evals' validation score with it {got:.2f} vs {base:.2f}"

    return hold
