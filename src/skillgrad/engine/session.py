"""Setting up and running a training run: run directory, events, models, environment, trainer.

The default run directory is derived from the config (`runs/<stem>-<hash>`), so rerunning the same
command after a kill continues the same run. Budget keys are left out of the hash: raising a budget
and rerunning continues the stopped run.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillgrad import __version__
from skillgrad.config.fingerprint import config_fingerprint
from skillgrad.config.schema import Config
from skillgrad.core.atomic import damaged
from skillgrad.core.events import EventLog
from skillgrad.core.redact import REDACTED, redact_sources
from skillgrad.engine.trainer import Trainer
from skillgrad.envs.base import Environment
from skillgrad.envs.registry import create_env
from skillgrad.errors import UsageError
from skillgrad.exec.factory import make_executor
from skillgrad.models.factory import build_models, resolve_role
from skillgrad.runs.store import RunStore

Listener = Callable[[dict[str, Any]], None]


def default_run_dir(cfg: Config, config_path: str | Path | None) -> Path:
    if cfg.env.out_root:
        return Path(cfg.env.out_root)
    # `skillgrad:demo.yaml` (a packaged config) names its runs after demo
    stem = Path(str(config_path).split(":")[-1]).stem if config_path else (cfg.env.name or "run")
    fingerprint = config_fingerprint(cfg)
    path = Path("runs") / f"{stem}-{fingerprint}"
    if not path.exists():  # the same run named by an earlier release's fingerprint (of the whole config)
        named = Path("runs").glob(f"{stem}-{'[0-9a-f]' * 10}")
        return next((p for p in sorted(named) if saved_fingerprint(p) == fingerprint), path)
    return path


def saved_fingerprint(run_dir: Path) -> str | None:
    """The fingerprint of the config a run directory holds, as today's schema reads it (fields added since
    at their defaults), so a run written by an earlier release keeps its identity. None: no readable config;
    the recorded fingerprint when today's schema refuses the config (a newer release wrote it)."""
    from skillgrad.config.loader import config_from_mapping
    from skillgrad.errors import SkillgradError

    try:
        saved = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or not isinstance(saved.get("config"), dict):
        return None
    try:
        with warnings.catch_warnings():  # notices about the saved keys were shown when the run started
            warnings.simplefilter("ignore")
            return config_fingerprint(config_from_mapping(strip_redacted(saved["config"])))
    except SkillgradError:
        return str(saved.get("fingerprint") or "") or None


def strip_redacted(d: Any) -> Any:
    """A config.json read back for resume: redacted secrets become unset (taken from the environment)."""
    if isinstance(d, dict):
        return {k: strip_redacted(v) for k, v in d.items() if v != REDACTED}
    if isinstance(d, list):
        return [strip_redacted(v) for v in d]
    return d


@dataclass
class RunHandle:
    cfg: Config
    run_dir: Path
    resumed: bool


def check_run_dir(run_dir: Path) -> None:
    """A run folder (or where one will be made) must not be a file, nor lie under one."""
    blocker = next((p for p in [run_dir, *run_dir.parents] if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise UsageError(f"{run_dir}: {blocker} is a file, not a folder; choose another --out (or move that file)")


def open_run(cfg: Config, run_dir: Path, *, info: dict[str, Any] | None = None, fresh: bool = False) -> RunHandle:
    """Create the run directory or check that an existing one holds the same run."""
    check_run_dir(run_dir)
    store = RunStore(run_dir)
    saved = None if fresh else store.read_json("config.json")
    if saved is not None and not isinstance(saved, dict):
        raise damaged(run_dir / "config.json", f"a JSON {type(saved).__name__}, not an object")
    if saved and not fresh:
        if saved_fingerprint(run_dir) != config_fingerprint(cfg):
            raise UsageError(
                f"{run_dir} holds a run with a different config; continue it with `skillgrad resume {run_dir}` "
                "or choose another --out"
            )
        resumed = store.exists("runtime_state.json")
    else:
        if fresh and run_dir.exists():
            import shutil

            from skillgrad.runs.lock import LOCK_NAME

            for p in run_dir.iterdir():  # everything but this writer's lock
                if p.name != LOCK_NAME:
                    shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
            store = RunStore(run_dir)
        resumed = False
    record = {"version": __version__, "fingerprint": config_fingerprint(cfg), "config": cfg.redacted(),
              "sources": redact_sources(info or {})}  # an override may hold a key (-o model.student.api_key=...)
    store.write_json("config.json", record)
    return RunHandle(cfg, run_dir, resumed)


def load_saved_config(run_dir: Path, overrides: list[str]) -> Config:
    """The config of an existing run (for resume), with overrides applied."""
    from skillgrad.config.loader import config_from_mapping

    saved = RunStore(run_dir).read_json("config.json")
    if not saved:
        raise UsageError(f"{run_dir} is not a skillgrad run directory (no config.json); check the path")
    if not isinstance(saved, dict) or not isinstance(saved.get("config"), dict):
        raise damaged(run_dir / "config.json", "no \"config\" object in it")
    return config_from_mapping(strip_redacted(saved["config"]), overrides, source=str(run_dir / "config.json"))


def teacher_settings(cfg: Config) -> tuple[int, float]:
    rc = resolve_role(cfg, "teacher")
    max_tokens = rc.max_tokens or (512 if rc.provider == "local" else 4096)
    return max_tokens, rc.temperature if rc.temperature is not None else 0.0


async def run_training(handle: RunHandle, *, listeners: list[Listener] | None = None,
                       env: Environment | None = None) -> dict[str, Any]:
    """Train; `env`: an environment already built from `cfg.env` and given its data (the Python API's pyfunc)."""
    cfg, run_dir = handle.cfg, handle.run_dir
    store = RunStore(run_dir)
    emit = EventLog(run_dir / "events.jsonl", listeners=listeners)
    env = env if env is not None else create_env(cfg.env)
    models = build_models(cfg, cache_path=run_dir / "llm_cache.sqlite", emit=emit, env=env)
    max_tokens, temperature = teacher_settings(cfg)
    executor = make_executor(cfg.exec, cache=models.cache, meter=models.meter, budget=models.budget, emit=emit)
    trainer = Trainer(cfg, env, models, store, emit, teacher_max_tokens=max_tokens, teacher_temperature=temperature,
                      executor=executor)
    try:
        return await trainer.run()
    finally:
        executor.close()
        await models.aclose()


def train_sync(handle: RunHandle, *, listeners: list[Listener] | None = None,
               env: Environment | None = None) -> dict[str, Any]:
    return asyncio.run(run_training(handle, listeners=listeners, env=env))
