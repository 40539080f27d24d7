"""Mining: heuristic tasks from digests, dedup, cap, stable splits (real tasks only in validation), leak refusal,
and the LLM miner through the embedded model's grammar-constrained structured output."""

from __future__ import annotations

import asyncio

import pytest

from skillgrad.envs.tasks.records import Judge, TaskRecord
from skillgrad.sleep import mine
from skillgrad.sleep.harvest.digest import Feedback, SessionDigest, Turn


def _digest(i: int, prompt: str, answer: str, feedback: list[Feedback] | None = None) -> SessionDigest:
    return SessionDigest(agent="claude_code", session_id=f"s{i}", source_path=f"/x/s{i}.jsonl", project="/p",
                         turns=[Turn(prompt=prompt, answer=answer)], feedback=feedback or [])


def test_heuristic_miner_reads_checks_off_the_accepted_answer_and_corrections():
    d = _digest(1, "Summarise the release.", "## Summary\nShipped 1.4.\n## Risks\nNone.",
                [Feedback(kind="correction", text="always mention the \"rollback plan\"", turn=0)])
    [task] = mine.mine_heuristic([d])
    ops = [(c.op, c.arg) for c in task.judge.checks]
    assert ("section_present", "Summary") in ops and ("section_present", "Risks") in ops
    assert ("contains", "rollback plan") in ops and task.origin == "real" and task.meta["session"] == "s1"
    assert mine.mine_heuristic([_digest(2, "hi", "hello there")]) == []  # no recognisable shape: no task
    assert mine.mine_heuristic([_digest(3, "Status?", "")]) == []


def _task(i: int, text: str | None = None, split: str | None = None, origin: str = "real") -> TaskRecord:
    return TaskRecord(task_id=f"t{i}", task=text or f"task {i}", split=split, origin=origin,  # type: ignore[arg-type]
                      judge=Judge(kind="rubric", rubric="r"))


def test_dedupe_cap_and_stable_splits():
    tasks = [_task(1, "Do  X"), _task(2, "do x"), *[_task(i) for i in range(3, 40)], _task(99, origin="dream")]
    deduped = mine.dedupe(tasks)
    assert [t.task_id for t in deduped][:2] == ["t1", "t3"]
    assert len(mine.cap(deduped, 5)) == 5
    a = mine.assign_splits(deduped, seed=7, val_fraction=0.34)
    b = mine.assign_splits(list(reversed(deduped)), seed=7, val_fraction=0.34)
    assert {t.task_id: t.split for t in a} == {t.task_id: t.split for t in b}
    assert next(t for t in a if t.task_id == "t99").split == "train"
    assert 5 <= sum(t.split == "val" for t in a) <= 22


def test_validation_is_made_non_empty_and_leaks_are_found():
    two = mine.assign_splits([_task(1), _task(2)], seed=0, val_fraction=0.01)
    assert sorted(t.split for t in two) == ["train", "val"]
    leaky = [_task(1, "same task", "train"), _task(2, "Same  task", "val"), _task(3, "other", "val")]
    assert mine.holdout_leaks(leaky) == ["t2"]


@pytest.mark.slow
def test_llm_miner_uses_the_teachers_structured_output(embedded_teacher, event_sink):
    digests = [_digest(1, "Give me the status of the backup job.", "DONE: the backup finished at 02:10.")]
    tasks = asyncio.run(mine.mine_llm(digests, embedded_teacher, max_tokens=160))
    calls = event_sink.of("llm_call")
    assert calls and all(c.get("stage") == "mine" for c in calls)
    for t in tasks:  # whatever the 135M model wrote, only valid tasks survive
        assert t.task.strip() and t.meta["miner"] == "llm" and (t.judge.checks or t.judge.rubric)
        assert len(tasks) <= mine.MAX_PER_SESSION
