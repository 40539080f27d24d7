"""Pending changes cannot freeze learning (issue 32, finding 3): pooled held-out evidence that a pending change is
worse refutes it at once (the staging gate, the other way round); tasks accumulate across nights in the project's
task bank with their splits kept apart; `sleep status` lists pending changes with their evidence. Tasks mined
from real sessions (tests/fixtures/sessions/real_preferences_heldout.json)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from skillgrad.config.schema import EvaluationSection
from skillgrad.sleep import bank, heldout, mine
from skillgrad.sleep.cli import pending_changes
from skillgrad.sleep.night import heldout_decision
from skillgrad.sleep.recall import load_labelled
from skillgrad.sleep.settings import SleepSettings

FIX = Path(__file__).parent / "fixtures" / "sessions"
CFG = SimpleNamespace(evaluation=EvaluationSection())


def _result(i: int, before: float, after: float) -> dict:
    return {"task_id": f"t{i}", "task": f"task {i}", "night": "n1", "before": before, "after": after,
            "hard_before": before, "hard_after": after, "reply_before": "a", "reply_after": "b"}


def test_evidence_that_a_pending_change_is_worse_refutes_it_at_once():
    s = SleepSettings(min_heldout=5)
    d = heldout_decision(s, CFG, [_result(0, 1.0, 0.25)])  # the 1.00 -> 0.25 on one held-out task
    assert d["enough"] and d.get("refuted") and not d["accepted"], d
    pooled = heldout_decision(s, CFG, [_result(0, 1.0, 0.25), _result(1, 0.5, 0.25), _result(2, 0.25, 0.1)])
    assert pooled.get("refuted") and pooled["n_heldout"] == 3
    better = heldout_decision(s, CFG, [_result(0, 0.25, 1.0)])
    assert not better["enough"] and not better.get("refuted")  # a gain on one task waits for more evidence


def test_tasks_accumulate_across_nights_in_the_bank_with_their_splits(tmp_path: Path):
    digests, _, _ = load_labelled(FIX / "real_preferences_heldout.json")
    nights = [digests[i::3] for i in range(3)]
    kept: list = []
    held_out = []
    for n, ds in enumerate(nights):
        new = heldout.assign_splits(mine.dedupe(mine.mine_heuristic(ds)), seed=0, val_fraction=0.2,
                                    test_fraction=0.2)
        kept = bank.merge(bank.load_bank(tmp_path), new, seed=0, val_fraction=0.2, test_fraction=0.2)
        bank.save_bank(tmp_path, kept)
        held_out.append(sum(t.split == "test" for t in kept))
        assert not heldout.leaks(kept), n
    assert held_out == sorted(held_out) and held_out[0] < 5 <= held_out[-1], held_out  # one night is not enough
    first = {t.task_id: t.split for t in bank.merge([], heldout.assign_splits(
        mine.mine_heuristic(nights[0]), seed=0, val_fraction=0.2, test_fraction=0.2), seed=0, val_fraction=0.2,
        test_fraction=0.2)}
    assert all(t.split == first[t.task_id] for t in kept if t.task_id in first)  # a banked task keeps its split
    again = bank.merge(kept, kept[:3], seed=0, val_fraction=0.2, test_fraction=0.2)
    assert len(again) == len(kept)  # a task already banked is not added twice


def test_a_paraphrase_joins_its_banked_twins_split():
    digests, _, _ = load_labelled(FIX / "real_preferences.json")
    tasks = heldout.assign_splits(mine.mine_heuristic(digests), seed=0, val_fraction=0.2, test_fraction=0.2)
    twin = next(t for t in tasks if t.split == "test")
    para = twin.model_copy(update={"task_id": "para", "task": twin.task + " please", "split": "train"})
    merged = bank.merge(tasks, [para], seed=0, val_fraction=0.2, test_fraction=0.2)
    assert next(t for t in merged if t.task_id == "para").split == "test"


def test_status_lists_pending_changes_with_their_pooled_evidence(tmp_path: Path):
    root = tmp_path / ".skillgrad" / "sleep"
    heldout.save_pending(root, "skill", {"base": "x", "block": "b", "updated": "20260301-0200",
                                         "results": [_result(0, 0.5, 1.0), _result(1, 0.5, 0.5)]})
    p = pending_changes(tmp_path)["skill"]
    assert p["n_heldout"] == 2 and p["before"] == 0.5 and p["after"] == 0.75 and p["since"] == "20260301-0200"
