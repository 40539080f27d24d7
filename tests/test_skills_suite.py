"""The skills suite (benchmarks/skills_suite/): its files hold what the benchmark promises, and the optimizer
trains one suite skill with the embedded model to a strict held-out gain."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skillgrad.envs.tasks import read_tasks, score_checks
from skillgrad.envs.tasks.records import Judge
from skillgrad.skill.examples import split_examples

SUITE = Path(__file__).resolve().parents[1] / "benchmarks" / "skills_suite"
SKILLS = sorted(p for p in SUITE.iterdir() if (p / "tasks.jsonl").is_file())
WORD = re.compile(r"[a-z]{4,}")
SUITE_SKILL = "ticket-tool"  # the integration run trains this one (oracle 10/10 held out, deficient 0/10; a call
# passes only with a title naming the broken thing, so the gain is a real ticket, not an empty call)


def test_eight_contracts_each_with_train_and_held_out_tasks():
    assert len(SKILLS) >= 8
    contracts = set()
    for skill in SKILLS:
        tasks = read_tasks(skill / "tasks.jsonl")
        by = {s: [t for t in tasks if t.split == s] for s in ("train", "val", "test")}
        assert len(by["train"]) >= 20 and len(by["test"]) >= 10 and by["val"], skill.name
        contracts.add(tuple(c.op for c in tasks[0].judge.checks))
        # held-out tasks are other requests than the training ones: none repeated, little shared vocabulary
        train_words = {w for t in by["train"] for w in WORD.findall(t.task.lower())}
        for t in by["test"]:
            assert t.task not in {x.task for x in by["train"]}
            words = set(WORD.findall(t.task.lower()))
            assert len(words & train_words) <= max(2, len(words) // 2), (skill.name, t.task)
    assert len(contracts) >= 6  # different output contracts, not one check eight times


@pytest.mark.parametrize("skill", SKILLS, ids=[p.name for p in SKILLS])
def test_the_oracle_shows_one_example_that_passes_and_the_deficient_skill_none(skill: Path):
    _, examples = split_examples((skill / "oracle.md").read_text(encoding="utf-8"))
    assert len(examples) == 1
    tasks = read_tasks(skill / "tasks.jsonl")
    judge = Judge.model_validate(tasks[0].judge.model_dump())
    # the example is about another request than task 0: its subject and gold checks are task 0's own
    form = [c for c in judge.checks if not _is_subject(c) and c.op not in CONTENT_OPS]
    gold = [c for c in judge.checks if c.op in CONTENT_OPS]
    assert form or gold, skill.name
    assert score_checks(form, examples[0][1])[0] == 1.0 if form else True  # the real scorer passes the example
    if gold:  # a label task: the example passes a task whose label it gives; an extraction copies its request
        q, a = examples[0]
        assert any(score_checks(t.judge.checks, a)[0] == 1.0 for t in tasks) or a in q, skill.name
    assert split_examples((skill / "SKILL.md").read_text(encoding="utf-8"))[1] == []


CONTENT_OPS = ("equals", "one_of", "fact")  # a gold value: the task's answer (envs/tasks/content.py)


def _is_subject(check) -> bool:
    """The check that holds a reply to its own task's subject (a word starting with one of its stems, case-insensitive)."""
    return check.op == "regex" and check.arg.startswith("(?i)\\b(")


# Content-free replies measured in suite runs (docs/benchmarks.md "Skills suite"): they passed the form checks.
GAMED = {"push-length": "Hey there, I'm so glad you're interested in our products! Check out the app now.",
         "support-signoff": "Brightline Support",
         "refusal-policy": "I can't help with that: I'm sorry for your loss. Please write to security@corp.example.",
         "three-steps": "1. This can be a bit concerning,\n2. especially if it happens often.\n3. It might just be "
                        "a temporary issue."}


@pytest.mark.parametrize("skill", SKILLS, ids=[p.name for p in SKILLS])
def test_every_task_checks_the_reply_is_about_its_own_subject(skill: Path):
    """Form alone no longer passes: every task needs its reply to name its own subject (ticket-tool's call does
    through its `title` value; a label task through its gold value), and a content-free reply seen in a suite run
    fails every held-out task."""
    for t in read_tasks(skill / "tasks.jsonl"):
        gold = [c for c in t.judge.checks if c.op in CONTENT_OPS]
        if gold:  # the label (or each field's value) is the content: a constant fails the other tasks
            assert t.judge.reference, t.task_id
            continue
        subject = [c for c in t.judge.checks if _is_subject(c) or (c.op == "tool_called" and c.value)]
        assert len(subject) == 1, t.task_id
        words = re.findall(r"[\w€][\w ./-]*", subject[0].arg[7:-1] if _is_subject(subject[0]) else subject[0].value)
        assert words and any(w.replace("\\", "").lower() in t.task.lower() for w in words), t.task_id
        assert subject[0].describe().startswith("contains ") or subject[0].op == "tool_called", t.task_id
    gamed = GAMED.get(skill.name)
    if gamed:
        for t in read_tasks(skill / "tasks.jsonl"):
            if t.split == "test":
                assert score_checks(t.judge.checks, gamed)[0] == 0.0, t.task_id


@pytest.mark.parametrize("skill", [p for p in SKILLS if any(
    c.op in CONTENT_OPS for c in read_tasks(p / "tasks.jsonl")[0].judge.checks)], ids=lambda p: p.name)
def test_a_label_tasks_constant_reply_or_its_request_stays_below_half(skill: Path):
    """The label skills (a gold value per task) balance their labels: no constant gold reply, and no reply that is
    the request itself, reaches 0.5 on the validation or held-out split."""
    tasks = read_tasks(skill / "tasks.jsonl")
    for split in ("val", "test"):
        items = [t for t in tasks if t.split == split]
        for reply in {t.judge.reference for t in tasks}:
            assert sum(score_checks(t.judge.checks, reply)[0] for t in items) / len(items) < 0.5, (split, reply)
        assert sum(score_checks(t.judge.checks, t.task)[0] for t in items) == 0, split


@pytest.mark.slow
def test_training_a_suite_skill_gains_on_held_out_tasks(tmp_path: Path, gguf_path: Path):
    """The default step (generic prompts, demonstrations, the gate; no per-skill settings), the embedded model in
    both roles, 6 tasks per split and one epoch without the epoch-end stages (kept small for CI): the trained
    skill must beat the deficient one on held-out tasks it never saw, and not by degenerate replies.
    (benchmarks/skills_suite.py runs every suite skill on full defaults.)"""
    from skillgrad.config.loader import load_config
    from skillgrad.engine.goodhart import degenerate_replies
    from skillgrad.engine.session import open_run, train_sync
    from skillgrad.runs.store import ResultsLog

    skill = SUITE / SUITE_SKILL
    cfg = load_config(None, ["env.name=tasks", f"env.tasks_file={skill / 'tasks.jsonl'}",
                             f"env.skill_init={skill / 'SKILL.md'}", "env.limit=6", "env.workers=1",
                             "train.num_epochs=1", "optimizer.use_slow_update=false", "optimizer.use_meta_skill=false",
                             "model.student.n_threads=1", "model.teacher.n_threads=1"])
    run_dir = tmp_path / "run"
    summary = train_sync(open_run(cfg, run_dir))
    assert summary["status"] == "completed" and summary["n_test"] == 6
    assert summary["baseline_test_hard"] <= 0.2
    assert summary["test_hard"] > summary["baseline_test_hard"], summary["sample_replies"]
    best = list(ResultsLog(run_dir / "test_eval").load().values())
    assert degenerate_replies(best) is None
    assert summary["sample_replies"] and summary["sample_replies"][0]["after"]["hard"] == 1.0
    assert '"title": "' in summary["sample_replies"][0]["after"]["reply"]  # an argument, not `"arguments": {}`
