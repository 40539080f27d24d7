"""Mining on real sessions (issue 32, finding 1 and 5): the preferences and corrections people state in public
session exports, labelled by reading them (tests/fixtures/sessions/real_preferences*.json)."""

from __future__ import annotations

from pathlib import Path

from skillgrad.envs.tasks.checks import run_check
from skillgrad.sleep import mine
from skillgrad.sleep.harvest.digest import SessionDigest, Turn
from skillgrad.sleep.recall import load_labelled, recall
from skillgrad.sleep.statements import stated_preferences

FIX = Path(__file__).parent / "fixtures" / "sessions"


def test_the_default_miner_finds_most_labelled_preferences_in_real_sessions():
    for name, floor in (("real_preferences.json", 0.9), ("real_preferences_heldout.json", 0.7)):
        digests, labels, _ = load_labelled(FIX / name)
        r = recall(mine.mine_heuristic(digests), labels)
        assert r.rate >= floor, (name, r.found, r.total, r.missed[:5])


def test_statements_quoted_in_the_issue_become_checks_of_what_the_user_meant():
    def checks(text: str) -> list:
        return [s.check for s in stated_preferences(text)]

    [c] = checks("don't produce code, design solution first")
    assert run_check(c, "Design: a hook on /clear that ...", []) and not run_check(c, "```ts\nx()\n```", [])
    [c] = checks("TODO is not acceptable, implementation must be full")
    assert not run_check(c, "def f():\n    # TODO", [])
    [c] = checks("make sure you dont use CODEX_HOME")
    assert not run_check(c, "export CODEX_HOME=/tmp", []) and run_check(c, "use a temp dir", [])
    for said in ("don't overcomplicate", "don't refer to agent specific path/folder",
                 "important not to commit changes until final step"):
        [s] = stated_preferences(said)
        assert s.check is None and s.words  # judged against the user's words, never a made-up term
    [s] = stated_preferences("don't add notes, looks like there is a need to track progress")
    assert s.check is None  # not "the reply never contains the word notes"


def test_a_correction_of_a_correction_is_evidence_for_the_request():
    digests, _, _ = load_labelled(FIX / "real_preferences.json")
    d = next(x for x in digests if x.session_id.endswith("implementing-append-task-and-updating-tests"))
    [task] = [t for t in mine.mine_heuristic([d]) if t.meta["turn"] == 0]
    assert task.task.startswith("Add append_task")
    assert {e["turn"] for e in task.meta["evidence"]} == {1, 2}  # "Instead of ...", then "No you should never ..."
    reply = "def append_task(self, task_id: str) -> None: ..."
    assert not all(run_check(c, reply, []) for c in task.judge.checks)


def test_the_mining_prompt_shows_every_turn_that_holds_a_correction():
    turns = [Turn(prompt=f"step {i}: add the {i}th endpoint", answer="done") for i in range(12)]
    turns[9] = Turn(prompt="don't overcomplicate", answer="ok")
    turns[5] = Turn(prompt="TODO is not acceptable, implementation must be full", answer="ok")
    text = mine.session_text(SessionDigest(agent="claude_code", session_id="s", source_path="/x", turns=turns))
    assert "TODO is not acceptable" in text and "don't overcomplicate" in text and "step 4:" in text
    assert "step 7:" not in text
