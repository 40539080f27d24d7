"""Chaos: SIGKILL a real training run at points spread over every stage (rollout, reflect, aggregate,
select, update, gate, slow update, meta skill, final validation, test evaluation), resume after each,
and require zero repeated provider calls, a complete run directory, and the same best_skill.md and
gate decisions as an uninterrupted run with the same seed, which accepts at least one step.

benchmarks/chaos.py runs a longer list of kill points and prints how many held."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from chaos_driver import KillPoint, compare, finish, run_until, train_cmd

pytestmark = pytest.mark.slow

KILL_POINTS = [  # in run order; each is aimed at the process started after the previous kill
    KillPoint("baseline", after_calls=3),
    KillPoint("rollout", step=1, after_calls=2),
    KillPoint("reflect", step=1, after_calls=1),
    KillPoint("aggregate", step=1, after_calls=0),
    KillPoint("gate", step=1, after_calls=4),
    KillPoint("select", step=2, after_calls=0),
    KillPoint("update", step=2, after_calls=0),
    KillPoint("rollout", step=3, after_calls=4),
    KillPoint("reflect", step=3, after_calls=2),
    KillPoint("update", step=3, after_calls=0),  # with demo.yaml step 3 makes no edits (skip_no_edits): no gate
    KillPoint("rollout", step=4, after_calls=1),
    KillPoint("slow_update", epoch=2, after_calls=0),
    KillPoint("slow_update", epoch=2, after_calls=1),
    # no meta_skill point: after the last epoch it is not asked (no step uses its answer), and epoch 1 has none
    KillPoint("final_validation", after_calls=0),
    KillPoint("test_initial", after_calls=3),
    KillPoint("test_best", after_calls=1),
    KillPoint("test_final", after_calls=5),
]


def test_sigkill_at_every_stage_then_resume(tmp_path: Path, gguf_path: Path) -> None:
    clean, chaos = tmp_path / "clean", tmp_path / "chaos"
    # The uninterrupted run goes beside the chain (each process uses one thread).
    reference = subprocess.Popen(train_cmd(clean), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    reached = [p.label() for p in KILL_POINTS if run_until(chaos, p)]
    finish(chaos)
    _, err = reference.communicate(timeout=900)
    assert reference.returncode == 0, err[-2000:]

    history = json.loads((clean / "history.json").read_text())
    assert any(h["action"] in ("accept", "accept_new_best") for h in history), "no accepted step to compare"
    stages = {p.stage for p in KILL_POINTS if p.label() in reached}
    assert {"baseline", "rollout", "reflect", "aggregate", "select", "update", "gate", "slow_update",
            "final_validation", "test_initial", "test_best", "test_final"} <= stages, f"kill points not reached: {sorted(set(p.label() for p in KILL_POINTS) - set(reached))}"
    verdict = compare(chaos, clean)
    assert verdict.repeated_calls == 0
    assert verdict.missing_files == []
    assert verdict.finished and verdict.same_actions and verdict.same_best_skill
