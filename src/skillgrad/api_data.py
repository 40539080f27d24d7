"""`skillgrad.train(trainset=..., valset=..., metric=...)` and `skillgrad.evaluate(..., testset=..., metric=...)`:
the Python API for examples and a metric held in Python (the `pyfunc` environment, envs/pyfunc/).

The run is an ordinary run: a config (recorded in config.json with the data's fingerprint and the metric's
name), the same gate, budget, resume and run directory as `skillgrad train`. Calling `train` again with the
same examples, metric and settings continues the run; other examples are refused by their fingerprint.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, get_args

from skillgrad.api import (
    Listener,
    LoadedConfig,
    Overrides,
    Progress,
    load_config,
    progress_listeners,
    run_dir_for,
)
from skillgrad.config.schema import Provider
from skillgrad.errors import UsageError
from skillgrad.runs.lock import run_lock
from skillgrad.runs.results import Evaluation, Run, read_run

Role = str | Mapping[str, Any] | None
Data = Sequence[Any] | None
# The embedded model's tuned settings (a 135M teacher writes small grammar-constrained edits); an API model as
# teacher or student gets the project defaults (SkillOpt's shape).
LOCAL_BASE = "skillgrad:demo.yaml"
API_BASE = "skillgrad:_base_/default.yaml"


def role(spec: Role, what: str) -> dict[str, Any]:
    """A model role from None (the embedded model), "provider:model" or "provider/model" (as DSPy writes
    "openai/gpt-4o-mini"), a provider alone ("local"), or a mapping of the config's role keys."""
    if spec is None:
        return {"provider": "local"}
    if isinstance(spec, Mapping):
        return dict(spec)
    if not isinstance(spec, str) or not spec.strip():
        raise UsageError(f"{what}: give 'provider:model' (e.g. 'openai:gpt-5.4-mini'), 'local' or a dict, not {spec!r}")
    providers = get_args(Provider)
    for sep in (":", "/"):
        head, found, tail = spec.partition(sep)
        if found and head in providers:
            return {"provider": head, "model": tail}
    if spec in providers:
        return {"provider": spec}
    raise UsageError(f"{what}: {spec!r} names no provider; write 'provider:model' with one of "
                     f"{', '.join(providers)} (e.g. 'openai:gpt-5.4-mini')")


def skill_text(skill: str | Path | Run | None) -> str | None:
    """The initial skill: text, a markdown file, or a folder holding SKILL.md; None = the default."""
    if skill is None:
        return None
    if isinstance(skill, Run):
        return skill.best_skill
    if isinstance(skill, str) and ("\n" in skill or len(skill) > 1024 or
                                   (not skill.strip().endswith(".md") and not Path(skill).is_dir())):
        return skill
    path = Path(skill)
    if path.is_dir():
        path = path / "SKILL.md"
    if not path.is_file():
        raise UsageError(f"skill: file not found: {path} (pass the skill's text, a .md file or a folder with SKILL.md)")
    return path.read_text(encoding="utf-8")


def data_config(*, data: Mapping[str, Sequence[Any]], metric: Callable[..., Any], skill: str | None, teacher: Role,
                student: Role, config: Any, overrides: Overrides) -> LoadedConfig:
    from skillgrad.envs.pyfunc.data import fingerprint, metric_name
    from skillgrad.envs.pyfunc.env import skill_sha

    roles = {"teacher": role(teacher, "teacher"), "student": role(student, "student")}
    local = all(r.get("provider", "local") == "local" for r in roles.values())
    env = {"name": "pyfunc", "data_fingerprint": fingerprint(data), "metric": metric_name(metric),
           "skill_sha": skill_sha(skill) if skill is not None else "", "max_tokens": 256}
    mapping: dict[str, Any] = {"_base_": str(config) if config is not None else (LOCAL_BASE if local else API_BASE),
                               "model": roles, "env": env}
    if not data.get("test"):  # no testset: a run without a held-out score, said so in its summary
        mapping["evaluation"] = {"eval_test": False}
    return load_config(mapping, overrides)


def _data(trainset: Data, valset: Data, testset: Data, *, need_train: bool) -> dict[str, list[Any]]:
    for name, value in (("trainset", trainset), ("valset", valset), ("testset", testset)):
        if value is not None and (isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable)):
            raise UsageError(f"{name} must be a list of examples (dicts like {{'input': ..., 'answer': ...}})")
    data = {"train": list(trainset or []), "val": list(valset or []), "test": list(testset or [])}
    if need_train and (not data["train"] or not data["val"]):
        raise UsageError("train needs trainset=[...] and valset=[...] (the gate keeps an edit only when it scores "
                         "better on valset); testset=[...] is scored at the start and at the end")
    return data


def bound_env(loaded: LoadedConfig, data: Mapping[str, Sequence[Any]], metric: Callable[..., Any],
              skill: str | None) -> Any:
    from skillgrad.envs.pyfunc.env import PyFuncEnv
    from skillgrad.envs.registry import create_env

    env = create_env(loaded.config.env)
    if not isinstance(env, PyFuncEnv):
        raise UsageError(f"env.name {loaded.config.env.name!r}: examples and a metric given in Python train the "
                         "pyfunc environment; drop env.name from config/overrides")
    return env.bind(data, metric, skill)


def _check_same_data(run_dir: Path, loaded: LoadedConfig) -> None:
    """A clear line before open_run's generic "different config" when only the examples changed."""
    import json

    saved = run_dir / "config.json"
    try:
        env = json.loads(saved.read_text(encoding="utf-8"))["config"]["env"]
    except (OSError, ValueError, KeyError, TypeError):
        return
    had, now = env.get("data_fingerprint"), loaded.config.env.options().get("data_fingerprint")
    if env.get("name") == "pyfunc" and had and had != now:
        raise UsageError(f"{run_dir} holds a run on other examples (data fingerprint {had}, these {now}); pass "
                         "the same trainset/valset/testset to continue it, or another out=")


def train_on_data(*, trainset: Data, valset: Data, testset: Data, metric: Callable[..., Any] | None,
                  skill: str | Path | None, teacher: Role, student: Role, config: Any, overrides: Overrides,
                  out: str | Path | None, fresh: bool, progress: Progress, listeners: Iterable[Listener]) -> Run:
    from skillgrad.engine.session import open_run, train_sync

    if metric is None:
        raise UsageError("train needs metric=callable: metric(example, reply) -> score in [0, 1] "
                         "(or (score, feedback))")
    data = _data(trainset, valset, testset, need_train=True)
    text = skill_text(skill)
    loaded = data_config(data=data, metric=metric, skill=text, teacher=teacher, student=student, config=config,
                         overrides=overrides)
    env = bound_env(loaded, data, metric, text)
    run_dir = Path(out) if out is not None else run_dir_for(loaded)
    if not fresh:
        _check_same_data(run_dir, loaded)
    shown, display = progress_listeners(progress)
    try:
        with run_lock(run_dir, "skillgrad.train"):
            handle = open_run(loaded.config, run_dir, info=loaded.sources, fresh=fresh)
            train_sync(handle, listeners=[*shown, *listeners], env=env)
    finally:
        if display is not None:
            display.close()
    return read_run(run_dir)


def evaluate_on_data(*, skill: str | Path | Run | None, trainset: Data, valset: Data, testset: Data,
                     metric: Callable[..., Any] | None, student: Role, split: str, config: Any,
                     overrides: Overrides, out: str | Path | None, seeds: int, progress: Progress,
                     listeners: Iterable[Listener]) -> Evaluation:
    from skillgrad.engine.evaluate import eval_key, evaluate_skill

    if metric is None:
        raise UsageError("evaluate needs metric=callable with the examples: metric(example, reply) -> score")
    if seeds < 1:
        raise UsageError(f"seeds must be at least 1, not {seeds}")
    data = _data(trainset, valset, testset, need_train=False)
    names = {"train": "trainset", "val": "valset", "test": "testset"}
    wanted = ["train", "val", "test"] if split == "all" else [split]
    if any(s not in names for s in wanted) or not all(data[s] for s in wanted):
        given = ", ".join(f"{names[s]}=[...]" for s in wanted if s in names) or "split='train'|'val'|'test'|'all'"
        raise UsageError(f"evaluate split={split!r}: pass {given}")
    text = skill_text(skill)
    if text is None:
        raise UsageError("evaluate needs skill=: the skill's text, a .md file, a folder with SKILL.md or a Run")
    # The teacher is never called here; it follows the student so that no second model is configured.
    loaded = data_config(data=data, metric=metric, skill=None, teacher=student, student=student, config=config,
                         overrides=overrides)
    env = bound_env(loaded, data, metric, None)
    target = Path(out) if out is not None else Path("runs") / "evals" / \
        f"pyfunc-{split}-{eval_key(loaded.config, text)[:8]}"
    shown, display = progress_listeners(progress)
    try:
        with run_lock(target, "skillgrad.evaluate"):
            result = asyncio.run(evaluate_skill(loaded.config, text, split, target, env=env,
                                                listeners=[*shown, *listeners], seeds=seeds))
    finally:
        if display is not None:
            display.close()
    return Evaluation.from_json(target, result)

