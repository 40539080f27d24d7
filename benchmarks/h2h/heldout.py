"""Held-out scoring, the same for every system: the task's environment and student prompt, temperature 0,
through the proxy under the tag "eval" (so held-out calls never count against a system's budget)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from skillgrad.config.loader import load_config
from skillgrad.envs.registry import create_env
from skillgrad.models.factory import build_models


def load_task_env(config: Path, overrides: list[str]) -> tuple[Any, Any, Any]:
    cfg = load_config(config, [*overrides, "cache.enabled=false"])
    env = create_env(cfg.env)
    return cfg, env, env.load_splits()


def score(cfg: Any, env: Any, items: list[Any], skill: str) -> dict[str, Any]:
    """hard score per test item id; a task that errors scores 0 and is counted by the caller."""

    async def run_all() -> dict[str, Any]:
        models = build_models(cfg, cache_path=None)
        try:
            out = {}
            for it in items:
                t = await env.run_task(it, skill, models.student, feedback=False, temperature=0.0)
                out[it.id] = (t.hard, t.error)
            return out
        finally:
            await models.aclose()

    res = asyncio.run(run_all())
    return {"scores": {k: v[0] for k, v in res.items()},
            "errors": sum(1 for v in res.values() if v[1])}  # type: ignore[dict-item]
