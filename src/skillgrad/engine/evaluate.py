"""`skillgrad eval`: score one skill on one or all splits with the configured student (no teacher calls)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from skillgrad.config.schema import Config
from skillgrad.core.events import EventLog
from skillgrad.engine.baselines import eval_baselines
from skillgrad.engine.gate.intervals import seed_summary
from skillgrad.engine.stages.rollout import rollout
from skillgrad.envs.base import Environment, Trajectory
from skillgrad.envs.registry import create_env
from skillgrad.envs.splits import split_alias
from skillgrad.errors import UsageError
from skillgrad.exec.factory import make_executor
from skillgrad.models.factory import build_models
from skillgrad.runs.store import ResultsLog, RunStore
from skillgrad.skill import skill_hash


def eval_key(cfg: Config, skill: str) -> str:
    """Identifies what saved results in an eval directory belong to: the skill, the config and the release.
    The fingerprint hashes only non-default values, so a release whose new default scores differently must
    not reuse an older release's saved results."""
    from skillgrad import __version__
    from skillgrad.engine.session import config_fingerprint

    return hashlib.sha256(f"{skill_hash(skill)}:{config_fingerprint(cfg)}:{__version__}".encode()).hexdigest()[:16]


def learned_only_warning(skill_path: Path, cfg: Config) -> str | None:
    """A warning when `skill_path` is the best_skill.md of an `env.learned_only` run (only the learned block's
    inner text) but is scored without `env.learned_only`: the student would then see that block alone, without
    the hand-written skill around it, and the score says nothing about the trained skill."""
    import json

    saved = skill_path.parent / "config.json"
    if not saved.is_file() or getattr(cfg.env, "learned_only", False):
        return None
    try:
        env = (json.loads(saved.read_text(encoding="utf-8")).get("config") or {}).get("env") or {}
    except (OSError, ValueError):
        return None
    if not env.get("learned_only"):
        return None
    return (f"{skill_path} is the learned block of an env.learned_only run ({saved}); score it with "
            f"-o env.learned_only=true -o env.skill_init={env.get('skill_init') or '<the hand-written skill>'}, "
            "or the student sees the block without the skill around it")


async def evaluate_skill(cfg: Config, skill: str, split: str, out_dir: Path,
                         listeners: list[Callable[[dict[str, Any]], None]] | None = None,
                         seeds: int = 1, env: Environment | None = None, baselines: bool = False) -> dict[str, Any]:
    """Score `skill`; results already in `out_dir` for the same skill and config are reused (a rerun resumes).

    seeds > 1: every item is run once per student sample index (0..seeds-1; seed 0 in `<split>/`, seed s in
    `<split>/seed_s/`); the split's result adds per-seed means, per-item scores over seeds and the mean's
    bootstrap interval over items (`engine/gate/intervals.py`). `baselines`: the initial skill and the zero-call
    few-shot skill scored on the same items, and the gain over the better one (engine/baselines.py).
    """
    names = ["train", "val", "test"] if split == "all" else [split_alias(split)]
    env = env if env is not None else create_env(cfg.env)  # given: built from cfg.env and bound (pyfunc)
    splits = env.load_splits()  # data problems stop here, before any model call
    key = eval_key(cfg, skill)
    saved = RunStore(out_dir).read_json("eval_key.json") if (out_dir / "eval_key.json").exists() else None
    if saved and saved.get("key") != key:
        raise UsageError(f"--out {out_dir} holds results for another skill or config; choose another --out "
                         "or delete that directory")
    store = RunStore(out_dir)
    store.write_json("eval_key.json", {"key": key, "skill_hash": skill_hash(skill)})
    emit = EventLog(out_dir / "events.jsonl", listeners=listeners)
    models = build_models(cfg, cache_path=out_dir / "llm_cache.sqlite", emit=emit, env=env)
    check = getattr(env, "check_student", None)
    if check is not None:
        check(models.student)
    executor = make_executor(cfg.exec, cache=models.cache, meter=models.meter, budget=models.budget, emit=emit)
    result: dict[str, Any] = {"skill_hash": skill_hash(skill), "env": cfg.env.name, "student": models.student.name,
                              "splits": {}}
    given: dict[str, list[Trajectory]] = {}
    try:
        for name in names:
            items = splits.get(name)
            if name == "test" and cfg.evaluation.test_env_num:
                items = items[: cfg.evaluation.test_env_num]
            per_seed = []
            for s in range(max(1, seeds)):  # seed 0 keeps the single-run layout
                log = store.results(name if s == 0 else f"{name}/seed_{s}")
                existing = log.load()
                # A provider that keeps failing raises (ProviderFatal) instead of being scored; finished tasks
                # are kept in results.jsonl and a rerun reuses them.
                def on_done(t: Trajectory, ex: dict[str, Trajectory] = existing, lg: ResultsLog = log) -> None:
                    if t.item_id not in ex or ex[t.item_id].env_error:  # an error is run again
                        lg.append(t)

                with log.saving():  # results are written off the event loop; on disk when the rollout ends
                    per_seed.append(await rollout(env, items, skill, models.student, workers=cfg.env.workers,
                                                  timeout_s=cfg.env.exec_timeout,
                                                  temperature=cfg.evaluation.eval_temperature, feedback=False,
                                                  existing=existing, on_done=on_done, executor=executor, sample=s))
            res = per_seed[0]
            given[name] = res.trajectories
            result["splits"][name] = {"n": res.n, "hard": res.hard, "soft": res.soft, "errors": res.n_env_errors,
                                      "by_task_type": res.by_task_type()}
            if seeds > 1:
                result["splits"][name].update(seed_summary([r.trajectories for r in per_seed],
                                                           cfg.evaluation.eval_temperature))
            emit("eval", split=name, skill="given", hard=res.hard, soft=res.soft, n=res.n)
        if baselines:
            async def score(rel: str, text: str, items: list[Any], train: bool) -> list[Trajectory]:
                log = store.results(rel)
                existing = log.load()
                with log.saving():
                    r = await rollout(env, items, text, models.student, workers=cfg.env.workers,
                                      timeout_s=cfg.env.exec_timeout, feedback=train, existing=existing,
                                      temperature=cfg.evaluation.train_temperature if train
                                      else cfg.evaluation.eval_temperature,
                                      on_done=lambda t: None if t.item_id in existing else log.append(t),
                                      executor=executor)
                return r.trajectories

            result["baselines"] = await eval_baselines(cfg, env, splits, models.student, store, score, given)
    finally:
        result["token_summary"] = models.meter.summary()
        executor.close()
        await models.aclose()
    store.write_text("skill.md", skill)
    store.write_json("eval_summary.json", result)
    return result
