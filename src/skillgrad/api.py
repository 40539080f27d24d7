"""The Python API: `skillgrad.train`, `skillgrad.evaluate`, `skillgrad.load_run`, `skillgrad.load_config`.

The command line is a face over these functions (cli.py `train` and `eval` call them), so a run started
from a notebook and one started from a shell are the same run: same run directory, same resume, same files.
Errors are the CLI's: `skillgrad.errors.UsageError` (a bad config, file or option; its message names the fix)
and `SkillgradError` for a failed run.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgrad.config.schema import Config
from skillgrad.errors import UsageError
from skillgrad.runs.lock import run_lock
from skillgrad.runs.results import Evaluation, Run, read_run

Listener = Callable[[dict[str, Any]], None]
# Overrides: "a.b=c" strings (as after -o on the command line) or a mapping {"a.b": value}.
Overrides = Iterable[str] | Mapping[str, Any] | None
Progress = bool | Listener | None


@dataclass(frozen=True)
class LoadedConfig:
    """A validated config with where it came from (files, compatibility warnings, overrides)."""

    config: Config
    path: Path | None = None  # the file it was loaded from (names the default run directory)
    sources: dict[str, Any] = field(default_factory=dict, repr=False)


def _override_strings(overrides: Overrides) -> list[str]:
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        from skillgrad.config.loader import cast_value

        out = []
        for key, value in overrides.items():
            if isinstance(value, str):  # a string that would read as another type is quoted as JSON
                text = value if cast_value(value, key) == value else json.dumps(value)
            else:
                text = json.dumps(value)
            out.append(f"{key}={text}")
        return out
    if isinstance(overrides, str):
        raise UsageError(f"overrides must be a list of 'a.b=c' strings or a mapping, not the string {overrides!r}")
    return [str(o) for o in overrides]


def load_config(config: str | Path | Mapping[str, Any] | Config | LoadedConfig,
                overrides: Overrides = None) -> LoadedConfig:
    """A config from a YAML path, a packaged name (`"skillgrad:demo.yaml"`), a mapping in the YAML's shape
    (`_base_` resolved from the working directory) or a Config, with `overrides` applied on top."""
    from skillgrad.config.loader import (
        PACKAGED_PREFIX,
        config_from_mapping,
        load_config_with_info,
        load_mapping_with_info,
        packaged_config_path,
    )

    extra = _override_strings(overrides)
    if isinstance(config, LoadedConfig):
        if not extra:
            return config
        cfg = config_from_mapping(config.config.model_dump(mode="json"), extra, source="config")
        return LoadedConfig(cfg, config.path, {**config.sources, "overrides": [*config.sources.get("overrides", []),
                                                                               *extra]})
    if isinstance(config, Config):
        return LoadedConfig(config_from_mapping(config.model_dump(mode="json"), extra, source="config") if extra
                            else config, None, {"files": [], "warnings": [], "overrides": extra})
    if isinstance(config, Mapping):
        cfg, info = load_mapping_with_info(config, extra)
        return LoadedConfig(cfg, None, info)
    path = Path(config)
    if str(config).startswith(PACKAGED_PREFIX):
        path = packaged_config_path(str(config)[len(PACKAGED_PREFIX):])
    cfg, info = load_config_with_info(path, extra)
    return LoadedConfig(cfg, path, info)


def run_dir_for(loaded: LoadedConfig) -> Path:
    """Where `train` writes when no `out` is given: runs/<config file stem, else env name>-<fingerprint>."""
    from skillgrad.engine.session import default_run_dir

    return default_run_dir(loaded.config, loaded.path)


def progress_listeners(progress: Progress) -> tuple[list[Listener], Any]:
    """progress=True: plain progress lines on stdout (a notebook cell or a log shows them as they come);
    a callable: called with every event (a dict, as in events.jsonl); False/None: nothing."""
    if progress is None or progress is False:
        return [], None
    if progress is True:
        from skillgrad.progress import LogProgress

        display = LogProgress(sys.stdout)
        return [display], display
    if callable(progress):
        return [progress], None
    raise UsageError(f"progress must be True, False or a callable taking an event dict, not {progress!r}")


def train(config: str | Path | Mapping[str, Any] | Config | LoadedConfig | None = None, *, overrides: Overrides = None,
          out: str | Path | None = None, fresh: bool = False, progress: Progress = False,
          listeners: Iterable[Listener] = (), trainset: Sequence[Any] | None = None,
          valset: Sequence[Any] | None = None, testset: Sequence[Any] | None = None,
          metric: Callable[..., Any] | None = None, skill: str | Path | None = None,
          teacher: str | Mapping[str, Any] | None = None, student: str | Mapping[str, Any] | None = None) -> Run:
    """Train a skill and return the run (`run.summary`, `run.history`, `run.best_skill`, `run.skills`).

    With examples and a metric in Python (`trainset=`, `valset=`, `testset=`, `metric=`, and optionally the
    initial `skill=`, `teacher=`, `student=`; `config=` then only supplies settings) the run trains the `pyfunc`
    environment (api_data.py, docs/api.md); everything else below holds for it too.

    Otherwise `skill=DIR` trains an Agent Skills folder against its evals/evals.json (config:
    `skillgrad:skill-folder.yaml` unless given) and writes its skill-eval workspace (skillgrad/skillfolder/train.py;
    the result is also in `run.path / "skill_folder.json"`).

    Calling it again with the same config continues the same run (completed stages load from their files,
    model calls replay from the run's cache); `fresh=True` deletes the run directory first. A run stopped by
    its budget returns with `run.status == "stopped"`: call `train` again with a raised budget (budgets are
    not part of a run's identity), e.g. `overrides={"budget.max_calls": 2000}`.
    """
    from skillgrad.engine.session import open_run, train_sync

    if trainset is not None or valset is not None or metric is not None:
        from skillgrad.api_data import train_on_data

        return train_on_data(trainset=trainset, valset=valset, testset=testset, metric=metric, skill=skill,
                             teacher=teacher, student=student, config=config, overrides=overrides, out=out,
                             fresh=fresh, progress=progress, listeners=listeners)
    if skill is not None:
        from skillgrad.skillfolder.train import train_skill

        if config is not None and not isinstance(config, str | Path):
            raise UsageError("train(skill=...): give config as a YAML path or a packaged name, or leave it out")
        done = train_skill(skill, config=config,
                           overrides=_override_strings(overrides), out=out, fresh=fresh, progress=progress,
                           listeners=listeners)
        assert done.run is not None  # the body target always makes a run
        return done.run
    if config is None:
        raise UsageError("train needs a config (a YAML path or 'skillgrad:demo.yaml'), skill=DIR (an Agent Skills "
                         "folder), or trainset=[...], valset=[...] and metric=callable")
    loaded = load_config(config, overrides)
    run_dir = Path(out) if out is not None else run_dir_for(loaded)
    shown, display = progress_listeners(progress)
    try:
        with run_lock(run_dir, "skillgrad.train"):  # one writer per run (a no-op under the CLI's own lock)
            handle = open_run(loaded.config, run_dir, info=loaded.sources, fresh=fresh)
            train_sync(handle, listeners=[*shown, *listeners])
    finally:
        if display is not None:
            display.close()
    return read_run(run_dir)


def evaluate(config: str | Path | Mapping[str, Any] | Config | LoadedConfig | None = None,
             skill: str | Path | Run | None = None, *,
             split: str = "test", overrides: Overrides = None, out: str | Path | None = None, seeds: int = 1,
             progress: Progress = False, listeners: Iterable[Listener] = (), baselines: bool = False,
             trainset: Sequence[Any] | None = None, valset: Sequence[Any] | None = None,
             testset: Sequence[Any] | None = None, metric: Callable[..., Any] | None = None,
             student: str | Mapping[str, Any] | None = None) -> Evaluation:
    """Score a skill file (or a run's best skill) on a split (`train`, `val`, `test`, SkillOpt's names, `all`)
    with the config's environment and student. Results already in `out` for the same skill and config are
    reused, so a rerun continues. Default `out`: runs/evals/<skill>-<split>-<key>/. `baselines`: the initial skill
    and the zero-call few-shot skill are scored on the same items (`raw["baselines"]`).

    With examples and a metric in Python (`testset=` and `metric=`, or `valset=`/`trainset=` with that
    `split`), `skill` may also be the skill's text; `student=` names the model ('provider:model')."""
    from skillgrad.engine.evaluate import evaluate_skill

    if trainset is not None or valset is not None or testset is not None or metric is not None:
        from skillgrad.api_data import evaluate_on_data

        return evaluate_on_data(skill=skill, trainset=trainset, valset=valset, testset=testset, metric=metric,
                                student=student, split=split, config=config, overrides=overrides, out=out,
                                seeds=seeds, progress=progress, listeners=listeners)
    if config is None or skill is None:
        raise UsageError("evaluate needs a config and a skill, or skill=, testset=[...] and metric=callable")
    loaded = load_config(config, overrides)
    path = _skill_path(skill)
    if seeds < 1:
        raise UsageError(f"seeds must be at least 1, not {seeds}")
    text = path.read_text(encoding="utf-8")
    target = Path(out) if out is not None else eval_dir_for(loaded, skill, split)
    shown, display = progress_listeners(progress)
    try:
        with run_lock(target, "skillgrad.evaluate"):
            result = asyncio.run(evaluate_skill(loaded.config, text, split, target,
                                                listeners=[*shown, *listeners], seeds=seeds, baselines=baselines))
    finally:
        if display is not None:
            display.close()
    return Evaluation.from_json(target, result)


def _skill_path(skill: str | Path | Run) -> Path:
    path = skill.best_skill_path if isinstance(skill, Run) else Path(skill)
    if not path.is_file():
        raise UsageError(f"skill: file not found: {path}")
    return path


def eval_dir_for(loaded: LoadedConfig, skill: str | Path | Run, split: str) -> Path:
    """Where `evaluate` writes when no `out` is given: runs/evals/<skill>-<split>-<key>. Under runs/evals/ so
    that `runs list runs` does not show evaluations as unfinished runs; the key (skill and config) keeps
    another skill's or config's saved results from being reused."""
    from skillgrad.engine.evaluate import eval_key

    path = _skill_path(skill)
    name = path.parent.name if isinstance(skill, Run) else path.stem
    text = path.read_text(encoding="utf-8")
    return Path("runs") / "evals" / f"{name}-{split}-{eval_key(loaded.config, text)[:8]}"


def load_run(path: str | Path) -> Run:
    """A run directory as typed objects: `summary` (None until it ends), `history` (one Step per step),
    `skills` (every saved version), `best_skill`, `config`. Damaged files give missing values and
    `run.warnings`, never an exception."""
    path = Path(path)
    if not path.is_dir():
        raise UsageError(f"{path} is not a directory; pass a run directory (skillgrad runs list shows them)")
    return read_run(path)
