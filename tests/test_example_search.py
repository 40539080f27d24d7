"""The example-set search after the few-shot start (engine/example_search.py): candidates re-select and reorder only
the few-shot skill's verified examples, deterministically by seed, and each goes through the gate at step 0.
Scripted models on the toy environment (the plumbing); the demo's figures are in docs/benchmarks.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_baselines import VerifyingToy, run_env
from test_engine_plumbing import events

from skillgrad.engine.example_search import added_examples, example_sets
from skillgrad.envs.base import Item, Trajectory
from skillgrad.skill.examples import add_example, find_examples

INITIAL = "# Skill\n\nAnswer briefly.\n\n## Examples\nQ: hand-written question\nA: hand-written reply\n"


def fewshot_of(n: int) -> str:
    skill = INITIAL
    for i in range(n):
        skill, _ = add_example(skill, f"question {i}", f"reply {i}")
    return skill


def test_candidates_hold_only_the_fewshot_examples_and_keep_the_initial_ones() -> None:
    fs = fewshot_of(8)
    pool = set(added_examples(INITIAL, fs))
    assert len(pool) == 8 and ("hand-written question", "hand-written reply") not in pool
    cands = example_sets(INITIAL, fs, seed=0, n=6)
    assert cands and fs not in cands and len(set(cands)) == len(cands)
    for c in cands:
        ex = [(e.question, e.reply) for e in find_examples(c)]
        assert ex[0] == ("hand-written question", "hand-written reply")  # the initial skill's own example stays first
        added = ex[1:]
        assert set(added) <= pool and len(set(added)) == len(added)  # nothing written: only verified pairs
        assert 4 <= len(added) <= 8  # half to all of them
        assert c.startswith("# Skill\n\nAnswer briefly.")


def test_candidates_follow_the_seed() -> None:
    fs = fewshot_of(8)
    assert example_sets(INITIAL, fs, seed=3, n=4) == example_sets(INITIAL, fs, seed=3, n=4)
    assert example_sets(INITIAL, fs, seed=3, n=4) != example_sets(INITIAL, fs, seed=4, n=4)
    assert example_sets(INITIAL, fs, seed=3, n=2) == example_sets(INITIAL, fs, seed=3, n=4)[:2]


def test_nothing_to_search_without_two_examples() -> None:
    assert example_sets(INITIAL, fewshot_of(1), seed=0, n=4) == []
    assert example_sets(INITIAL, INITIAL, seed=0, n=4) == []
    assert example_sets(INITIAL, fewshot_of(5), seed=0, n=0) == []


def test_search_runs_through_the_gate_at_step_zero(tmp_path: Path) -> None:
    """Every word is needed: a subset scores lower and is refused; the few-shot skill stays the start."""
    run_dir, summary = run_env(tmp_path, VerifyingToy(), "optimizer.example_search=3", "train.num_epochs=1")
    gates = [e for e in events(run_dir) if e["event"] == "gate" and str(e.get("origin", "")).startswith("example_set")]
    assert gates and all(g["step"] == 0 and g["stage"] == "example_search" for g in gates)
    assert all(g["action"] == "reject" for g in gates if (g["selection_hard"] or 0) < 1.0)
    assert summary["best_origin"] == "fewshot_baseline"
    rec = json.loads((run_dir / "baselines/example_search.json").read_text())
    assert [r["origin"] for r in rec] == [g["origin"] for g in gates]


def test_search_replaces_the_start_with_a_set_the_gate_prefers(tmp_path: Path) -> None:
    """A student that fails once the skill holds more than three worked examples: the few-shot skill (four) is
    refused, a re-selected set of three or fewer passes the gate and becomes the start; no teacher is involved."""
    class FewerIsBetter(VerifyingToy):
        async def run_task(self, item: Item, skill: str, student: Any, **kw: Any) -> Trajectory:
            t = await super().run_task(item, skill, student, **kw)
            if len(find_examples(skill)) > 3:
                t.hard = t.soft = 0.0
            return t

    run_dir, summary = run_env(tmp_path, FewerIsBetter(), "optimizer.example_search=6", "train.num_epochs=1")
    g = [e for e in events(run_dir) if e["event"] == "gate" and e.get("step") == 0 and e.get("origin")]
    assert g[0]["origin"] == "fewshot_baseline" and g[0]["action"] == "reject"
    accepted = [e for e in g if e["action"].startswith("accept")]
    assert accepted and accepted[0]["origin"].startswith("example_set_")
    best = (run_dir / "best_skill.md").read_text()
    assert 2 <= len(find_examples(best)) <= 3 and summary["best_selection_gate_score"] > 0.0


def test_search_is_off_by_setting_zero(tmp_path: Path) -> None:
    run_dir, _ = run_env(tmp_path, VerifyingToy(), "optimizer.example_search=0", "train.num_epochs=1")
    assert not [e for e in events(run_dir) if str(e.get("origin", "")).startswith("example_set")]
    assert not (run_dir / "baselines/example_search.json").exists()
