"""Small configurations for training tests with the embedded model (kept tiny: 2 shared cores)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from skillgrad.config.loader import load_config, packaged_config_path

# 10 facts -> 10 train / 10 val / 10 test items; batch 5 -> 2 steps per epoch.
TINY = [
    "env.n_facts=10",
    "train.batch_size=5",
    "env.workers=1",
    "optimizer.slow_update_samples=4",
    "optimizer.use_slow_update=true",
    "optimizer.slow_update_gate_with_selection=true",
    "optimizer.use_meta_skill=true",
    # One selection evaluation per changed line: edit credit has its own tests (test_honest_*), and the
    # default-path integration run (test_train_integration) turns it back on.
    "evaluation.edit_credit=false",
    # One llama.cpp thread: with two on a busy 2-core machine a call spin-waits and gets up to 10x slower.
    "model.student.n_threads=1",
    "model.teacher.n_threads=1",
    # These tiny runs test the step stages: the default few-shot start can end one at the validation ceiling
    # before any step. The default start has its own embedded tests (test_resume, test_determinism).
    "optimizer.start_from=initial",
]


def tiny_config(*extra: str, epochs: int = 2) -> Any:
    return load_config(packaged_config_path("demo.yaml"), [*TINY, f"train.num_epochs={epochs}", *extra])


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "skillgrad.cli", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def events(run_dir: Path) -> list[dict[str, Any]]:
    out = []
    for line in (run_dir / "events.jsonl").read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def provider_keys(run_dir: Path) -> list[str]:
    """Cache keys of calls that reached a provider (not cache hits), in order."""
    return [e["key"] for e in events(run_dir) if e["event"] == "llm_call" and not e.get("cached") and e.get("ok")]
