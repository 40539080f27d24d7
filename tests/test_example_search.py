"""The example-set search after the few-shot start (engine/example_search.py): candidates re-select and reorder only
the few-shot skill's verified examples, deterministically by seed, and each goes through the gate at step 0.
Scripted models on the toy environment (the plumbing); the demo's figures are in docs/benchmarks.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_baselines import VerifyingToy, run_env
from test_engine_plumbing import events

from skillgrad.engine.example_search import REFERENCE_HEADING, added_examples, example_sets, reference_list
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
    run_dir, summary = run_env(tmp_path, VerifyingToy(), "optimizer.example_search=3", "train.num_epochs=1", "optimizer.start_from=fewshot")
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

    run_dir, summary = run_env(tmp_path, FewerIsBetter(), "optimizer.example_search=6", "train.num_epochs=1", "optimizer.start_from=fewshot")
    g = [e for e in events(run_dir) if e["event"] == "gate" and e.get("step") == 0 and e.get("origin")]
    assert g[0]["origin"] == "fewshot_baseline" and g[0]["action"] == "reject"
    accepted = [e for e in g if e["action"].startswith("accept")]
    assert accepted and accepted[0]["origin"].startswith("example_set_")
    best = (run_dir / "best_skill.md").read_text()
    assert 2 <= len(find_examples(best)) <= 3 and summary["best_selection_gate_score"] > 0.0


def test_search_is_off_by_setting_zero(tmp_path: Path) -> None:
    run_dir, _ = run_env(tmp_path, VerifyingToy(), "optimizer.example_search=0", "train.num_epochs=1", "optimizer.start_from=fewshot")
    assert not [e for e in events(run_dir) if str(e.get("origin", "")).startswith("example_set")]
    assert not (run_dir / "baselines/example_search.json").exists()


# ---------------------------------------------------------------- the reference list (optimizer.reference_list)
def test_reference_list_lists_only_the_verified_pairs() -> None:
    fs = fewshot_of(3)
    fs, _ = add_example(fs, "a question\nwith two lines", "first line\nsecond line")
    ref = reference_list(INITIAL, fs)
    head, _, body = ref.partition(REFERENCE_HEADING + "\n")
    assert head.rstrip() == fs.rstrip()  # the few-shot skill unchanged above the list, its examples still turns
    assert [(e.question, e.reply) for e in find_examples(ref)] == [(e.question, e.reply) for e in find_examples(fs)]
    lines = [x for x in body.splitlines() if x.strip()]
    assert lines == ["- question 0 → reply 0", "- question 1 → reply 1", "- question 2 → reply 2",
                     "- a question with two lines → first line / second line"]
    assert "hand-written" not in body  # the initial skill's own example is not the few-shot's
    assert reference_list(INITIAL, ref) == ""  # never twice
    assert reference_list(INITIAL, fewshot_of(1)) == ""


class ListHelps(VerifyingToy):
    """Tasks t0, t1 pass with their example; t2, t3 only when their word is also in the skill's text (outside the
    worked examples, which the student receives as turns)."""

    async def run_task(self, item: Item, skill: str, student: Any, **kw: Any) -> Trajectory:
        t = await super().run_task(item, skill, student, **kw)
        from skillgrad.skill.examples import split_examples

        text, pairs = split_examples(skill)
        ok = any(item.gold in a for _, a in pairs) and (item.id in ("t0", "t1") or item.gold in text)
        t.hard = t.soft = 1.0 if ok else 0.0
        return t


def test_reference_list_goes_through_the_gate(tmp_path: Path) -> None:
    run_dir, summary = run_env(tmp_path, ListHelps(), "train.num_epochs=1", "optimizer.start_from=fewshot")
    g = [e for e in events(run_dir) if e["event"] == "gate" and e.get("step") == 0 and e.get("origin")]
    assert [(e["origin"], e["action"]) for e in g] == [("fewshot_baseline", "accept_new_best"),
                                                       ("reference_list", "accept_new_best")]
    assert g[0]["selection_hard"] == 0.5 and g[1]["selection_hard"] == 1.0
    assert REFERENCE_HEADING in (run_dir / "best_skill.md").read_text()


def test_reference_list_off_or_without_a_fewshot_start(tmp_path: Path) -> None:
    run_dir, _ = run_env(tmp_path / "off", ListHelps(), "train.num_epochs=1", "optimizer.reference_list=false", "optimizer.start_from=fewshot")
    assert not [e for e in events(run_dir) if e.get("origin") == "reference_list"]
    run_dir, _ = run_env(tmp_path / "initial", ListHelps(), "train.num_epochs=1", "optimizer.start_from=initial")
    assert not [e for e in events(run_dir) if e.get("origin") == "reference_list"]
