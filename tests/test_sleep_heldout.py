"""Sleep's held-out (issue 18 item 2): near-duplicates never reach it, too few tasks decide nothing, and the
evidence for a pending change pools across nights."""

from __future__ import annotations

from pathlib import Path

from skillgrad.config.loader import config_from_mapping
from skillgrad.envs.tasks.records import Judge, TaskRecord
from skillgrad.sleep import heldout
from skillgrad.sleep.night import heldout_decision
from skillgrad.sleep.settings import SleepSettings

JUDGE = Judge(kind="rule", checks=[{"op": "regex", "arg": "^DONE:"}])


def _t(i: int, text: str, split: str | None = None) -> TaskRecord:
    return TaskRecord(task_id=f"t{i}", task=text, judge=JUDGE, split=split)


def test_paraphrases_are_near_duplicates_and_distinct_tasks_are_not() -> None:
    assert heldout.similarity("Give me the status of job 3.", "status of job 7 please") == 1.0
    assert heldout.similarity("Use pnpm to install the deps", "install the deps, use pnpm") == 1.0
    assert heldout.similarity("Give me the status of the nightly backup.", "Status of the login service?") < 0.5


def test_a_near_duplicate_group_goes_to_one_split() -> None:
    tasks = [_t(i, f"Give me the status of job {i}.") for i in range(12)]
    tasks += [_t(100 + i, f"Explain module {name} briefly") for i, name in enumerate("abcdefghij")]
    tasks += [_t(200 + i, text) for i, text in enumerate(
        ["Add a header row to the CSV export", "Rename the billing service", "Why does the login page hang?",
         "Write release notes for 2.3", "Bump the eslint preset", "Quote CSV fields with commas"])]
    out = heldout.assign_splits(tasks, seed=0, val_fraction=0.3, test_fraction=0.3)
    assert len({t.split for t in out[:12]}) == 1  # the recurring task never straddles training and held-out
    assert heldout.leaks(out) == []
    assert {t.split for t in out} == {"train", "val", "test"}


def test_a_task_file_whose_held_out_paraphrases_training_is_refused() -> None:
    tasks = [_t(1, "Give me the status of job 3.", "train"), _t(2, "What's the status of job 9?", "test"),
             _t(3, "Rename the billing service", "val")]
    assert heldout.leaks(tasks) == ["t2"]


def test_below_the_minimum_nothing_is_decided_and_the_shortfall_is_named() -> None:
    cfg = config_from_mapping({}, [], source="test")
    s = SleepSettings(min_heldout=5)
    rows = [{"task_id": f"t{i}", "task": f"task {i}", "night": "n1", "before": 0.0, "after": 1.0,
             "hard_before": 0.0, "hard_after": 1.0} for i in range(3)]
    d = heldout_decision(s, cfg, rows)
    assert not d["accepted"] and not d["enough"] and "2 more" in d["reason"]
    more = heldout.pool(rows, [{**r, "task_id": f"u{i}", "task": f"other {i}", "night": "n2"}
                               for i, r in enumerate(rows)])
    d = heldout_decision(s, cfg, more)
    assert d["enough"] and d["accepted"] and d["n_heldout"] == 6 and d["val_score_after"] == 1.0
    worse = [{**r, "after": 0.0, "hard_after": 0.0} for r in more]
    assert not heldout_decision(s, cfg, worse)["accepted"]


def test_pooling_counts_each_task_once_and_pending_is_tied_to_its_starting_block(tmp_path: Path) -> None:
    a = [{"task_id": "t1", "task": "Rename the service", "before": 0, "after": 1}]
    again = [{"task_id": "t1", "task": "Rename the service", "before": 0, "after": 0},
             {"task_id": "t9", "task": "rename  the SERVICE", "before": 0, "after": 0}]
    assert heldout.pool(a, again) == a  # the same task (by id or text) is not new evidence
    heldout.save_pending(tmp_path, "skill", {"base": "sha-a", "block": "B", "results": a})
    assert heldout.load_pending(tmp_path, "skill", "sha-a")["block"] == "B"
    assert heldout.load_pending(tmp_path, "skill", "sha-b") is None  # the live block changed: evidence void
    heldout.save_pending(tmp_path, "skill", None)
    assert heldout.load_pending(tmp_path, "skill", "sha-a") is None


def test_a_held_out_gain_made_of_one_repeated_reply_is_not_staged_and_replies_are_shown() -> None:
    # issue 17: every held-out reply became a pasted check description, which passed a max_chars check
    cfg = config_from_mapping({}, [], source="test")
    s = SleepSettings(min_heldout=5)
    pasted = "(a reply that is at most 1200 characters long)}"
    rows = [{"task_id": f"t{i}", "task": f"Summarise incident {i} for the channel", "night": "n1", "before": 0.0,
             "after": 1.0, "hard_before": 0.0, "hard_after": 1.0, "reply_before": f"Sure! Incident {i} was long",
             "reply_after": pasted} for i in range(6)]
    d = heldout_decision(s, cfg, rows)
    assert not d["accepted"] and "degenerate" in d["reason"] and "6 of 6" in d["degenerate"]
    assert d["sample_replies"][0]["after"]["reply"] == pasted
    varied = [{**r, "reply_after": f"DONE: incident {i} is closed; the {w} fix holds."}
              for i, (r, w) in enumerate(zip(rows, "abcdef", strict=True))]
    ok = heldout_decision(s, cfg, varied)
    assert ok["accepted"] and ok["sample_replies"][0]["before"]["reply"].startswith("Sure!")
