"""Mining: heuristic tasks from digests, dedup, cap, stable splits (real tasks only in validation), leak refusal,
and the LLM miner through the embedded model's grammar-constrained structured output."""

from __future__ import annotations

import asyncio

import pytest

from skillgrad.envs.tasks.records import Judge, TaskRecord
from skillgrad.sleep import heldout, mine
from skillgrad.sleep.harvest.digest import Feedback, SessionDigest, Turn


def _digest(i: int, prompt: str, answer: str, feedback: list[Feedback] | None = None) -> SessionDigest:
    return SessionDigest(agent="claude_code", session_id=f"s{i}", source_path=f"/x/s{i}.jsonl", project="/p",
                         turns=[Turn(prompt=prompt, answer=answer)], feedback=feedback or [])


def test_heuristic_miner_checks_what_the_user_asked_and_corrected_never_one_answers_headings():
    d = SessionDigest(agent="claude_code", session_id="s1", source_path="/x/s1.jsonl", project="/p", turns=[
        Turn(prompt="How do I run the unit tests?", answer="## Steps\nRun `npm test`.\n## Notes\nFast."),
        Turn(prompt="No, use pnpm, not npm. Don't call it 'done' before it ran."),
        Turn(prompt="Summarise the release.", answer="## Summary\nShipped 1.4.\n## Risks\nNone.")],
        feedback=[Feedback(kind="correction", text="No, use pnpm, not npm.", turn=0)])
    [task] = mine.mine_heuristic([d])  # the release summary has headings but nobody asked for them: no task
    ops = [(c.op, c.arg) for c in task.judge.checks]
    assert task.task == "How do I run the unit tests?" and ("contains", "pnpm") in ops
    assert not any(op == "section_present" for op, _ in ops)
    assert not any("t call it" in arg or "t control" in arg for _, arg in ops)  # apostrophes are not quotes
    assert {"session": "s1", "turn": 1} == {k: task.meta["evidence"][0][k] for k in ("session", "turn")}
    assert "use pnpm, not npm" in task.meta["evidence"][0]["words"]
    assert mine.mine_heuristic([_digest(2, "hi", "hello there")]) == []  # nothing asked: no task
    assert mine.mine_heuristic([_digest(3, "Status?", "")]) == []


def test_a_reply_opening_becomes_a_check_only_when_it_recurs_across_sessions():
    two = [_digest(i, f"Status of the {n}?", f"DONE: the {n} ran.") for i, n in enumerate(["backup", "cache"])]
    assert mine.mine_heuristic(two) == []  # two answers are an accident
    three = [*two, _digest(9, "Status of the mail queue?", "DONE: empty.")]
    tasks = mine.mine_heuristic(three)
    assert len(tasks) == 3 and all(("regex", "^DONE:") in [(c.op, c.arg) for c in t.judge.checks] for t in tasks)


def test_a_preference_for_every_reply_repeated_across_sessions_is_checked_on_every_task():
    ds = [_digest(1, "Start every reply with Summary: what does dunning do?", "Summary: reminders."),
          _digest(2, "Use pnpm, not npm: how do I add lodash?", "pnpm add lodash"),
          _digest(3, "Start every reply with Summary: why cents?", "Summary: floats."),
          _digest(4, "Never use var: sum the lines.", "const s = 0;")]
    tasks = {t.meta["session"]: [(c.op, c.arg) for c in t.judge.checks] for t in mine.mine_heuristic(ds)}
    summary = ("regex", r"^\s*Summary:")
    assert all(summary in checks for checks in tasks.values())  # said in 2 sessions: the user's rule for all
    assert ("contains", "pnpm") in tasks["s2"] and ("contains", "pnpm") not in tasks["s4"]  # a topic, not a rule
    assert not any("var" in arg for _, arg in tasks["s2"])  # `never use var` was said once
    [(check, evidence)] = mine.standing_preferences(ds)
    assert (check.op, check.arg) == summary and evidence["session"] == "s1" and "2 sessions" in evidence["why"]
    assert mine.standing_preferences(ds[:2]) == []


def test_llm_mined_tasks_must_restate_a_request_and_checks_must_be_grounded():
    d = _digest(1, "Add a header row to the CSV export", "Added the header row id,title.")
    assert mine.asked_in(d, "Add a CSV header row") == 0
    assert mine.asked_in(d, "Q: show tools A. ...") is None
    from skillgrad.envs.tasks.checks import Check
    assert mine.grounded(Check(op="contains", arg="header row"), d)
    assert not mine.grounded(Check(op="contains", arg="@"), d)


def _task(i: int, text: str | None = None, split: str | None = None, origin: str = "real") -> TaskRecord:
    name = "abcdefghijklmnopqrstuvwxyz"[i % 26] + "abcdefghijklmnopqrstuvwxyz"[i // 26]  # distinct words
    return TaskRecord(task_id=f"t{i}", task=text or f"task {name}", split=split, origin=origin,  # type: ignore[arg-type]
                      judge=Judge(kind="rubric", rubric="r"))


def test_dedupe_cap_and_stable_splits():
    tasks = [_task(1, "Do  X"), _task(2, "do x"), *[_task(i) for i in range(3, 40)], _task(99, origin="dream")]
    deduped = mine.dedupe(tasks)
    assert [t.task_id for t in deduped][:2] == ["t1", "t3"]
    assert len(mine.cap(deduped, 5)) == 5
    a = heldout.assign_splits(deduped, seed=7, val_fraction=0.34, test_fraction=0.0)
    b = heldout.assign_splits(list(reversed(deduped)), seed=7, val_fraction=0.34, test_fraction=0.0)
    assert {t.task_id: t.split for t in a} == {t.task_id: t.split for t in b}
    assert next(t for t in a if t.task_id == "t99").split == "train"
    assert 5 <= sum(t.split == "val" for t in a) <= 22


def test_validation_is_made_non_empty_and_leaks_are_found():
    two = heldout.assign_splits([_task(1), _task(2)], seed=0, val_fraction=0.01, test_fraction=0.0)
    assert sorted(t.split for t in two) == ["train", "val"]
    leaky = [_task(1, "same task", "train"), _task(2, "Same  task", "val"), _task(3, "other", "val")]
    assert heldout.leaks(leaky) == ["t2"]


@pytest.mark.slow
def test_llm_miner_uses_the_teachers_structured_output(embedded_teacher, event_sink):
    digests = [_digest(1, "Give me the status of the backup job.", "DONE: the backup finished at 02:10.")]
    tasks = asyncio.run(mine.mine_llm(digests, embedded_teacher, max_tokens=160))
    calls = event_sink.of("llm_call")
    assert calls and all(c.get("stage") == "mine" for c in calls)
    for t in tasks:  # whatever the 135M model wrote, only valid tasks survive
        assert t.task.strip() and t.meta["miner"] == "llm" and (t.judge.checks or t.judge.rubric)
        assert len(tasks) <= mine.MAX_PER_SESSION


def test_a_stated_preference_the_previous_reply_broke_is_a_correction():
    d = SessionDigest(agent="codex", session_id="s7", source_path="/x", project="/p", turns=[
        Turn(prompt="Write a function that sums invoice lines.", answer="var total = 0;"),
        Turn(prompt="Never use var in this codebase.", answer="let total = 0;")])  # no "no,"/"actually"
    [task] = mine.mine_heuristic([d])
    assert task.task.startswith("Write a function") and task.meta["evidence"][0]["turn"] == 1
