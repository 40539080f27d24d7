"""Same inputs, same result: one tiny configuration trained twice with the embedded model, once with 1 worker
beside two busy loops and once with 4 workers on an idle machine, gives the same summary: scores, accepts and
rejects, provider calls and tokens (what the README's determinism sentence rests on).

The machine's load and the worker count change only how long calls wait for the model: the task clock does not
count that wait (core/task_clock.py), results merge in task order, the gate's early stop is looked at between
fixed groups of items (engine/gate/early.py), and the embedded model's numbers do not depend on call order
(models/providers/kv_states.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from train_helpers import tiny_config

from skillgrad.engine.session import open_run, train_sync

pytestmark = pytest.mark.slow

# two steps of five training tasks, five selection and five test items, one analyst call a step: about 40
# student and 4 teacher calls a run
SMALL = ("optimizer.use_slow_update=false", "optimizer.use_meta_skill=false", "optimizer.student_probe=off",
         "optimizer.demonstrations=0", "gradient.minibatch_size=5", "evaluation.sel_env_num=5",
         "evaluation.test_env_num=5", "env.exec_timeout=600",
         "optimizer.start_from=fewshot")  # the default start (train_helpers' TINY names the initial one)


def facts(summary: dict[str, Any], run_dir: Path) -> dict[str, Any]:
    tokens = summary["token_summary"]["total"]
    return {k: summary[k] for k in ("baseline_test_hard", "test_hard", "final_test_hard", "baseline_selection_hard",
                                    "best_selection_gate_score", "total_accepts", "total_rejects", "total_skips",
                                    "best_step", "total_errors")} | {
        "calls": tokens["calls"], "prompt_tokens": tokens["prompt_tokens"],
        "completion_tokens": tokens["completion_tokens"],
        "best_skill": (run_dir / "best_skill.md").read_text(encoding="utf-8")}


def train(run_dir: Path, workers: int, busy: int) -> dict[str, Any]:
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    try:
        summary = train_sync(open_run(tiny_config(*SMALL, f"env.workers={workers}", epochs=1), run_dir))
    finally:
        for p in loops:
            p.kill()
            p.wait()
    assert summary["status"] == "completed"
    return facts(summary, run_dir)


def test_load_and_workers_do_not_change_the_result(tmp_path: Path, gguf_path: Path) -> None:
    busy = train(tmp_path / "busy", workers=1, busy=2)
    idle = train(tmp_path / "idle", workers=4, busy=0)
    assert busy == idle
    assert busy["calls"] > 0 and busy["total_errors"] == 0
