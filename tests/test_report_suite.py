"""The report suite (benchmarks/report_suite/): replies that restate the request score below 0.5 on every skill,
the gold replies pass, the files are what benchmarks/report_suite/build_tasks.py writes, and the suite shares no
contract or request with the development suite."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from skillgrad.envs.tasks import read_tasks, score_checks
from skillgrad.envs.tasks.checks import CONTENT_OPS
from skillgrad.skill.examples import split_examples

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
SUITE = BENCH / "report_suite"
SKILLS = sorted(p for p in SUITE.iterdir() if (p / "tasks.jsonl").is_file())

# Each skill's required form filled with its request: what a content-free optimizer kept (issue 30)
FORMS = {
    "expense-category": ["{request}", "travel: {request}"],
    "sentiment-line": ["Sentiment: {request}", "Sentiment: neutral. {request}"],
    "order-extract": ['{{"order_id": "{request}", "city": "{request}"}}', '{{"order_id": "{digits}", "city": "{request}"}}'],
    "iso-date": ["{request}", "2024-01-01 {request}"],
    "title-slug": ["{slug}"],
    "price-lookup": ["{request} EUR", "{number} EUR"],
    "lang-code": ["{request}", "en: {request}"],
    "csv-contact": ["{request},{request}", "{request}"],
}


def _fill(form: str, request: str) -> str:
    digits = re.findall(r"\d+", request)
    return form.format(request=request.replace('"', "'"), digits=digits[0] if digits else "0",
                       number=digits[0] if digits else "0", slug=re.sub(r"[^a-z0-9]+", "-", request.lower()).strip("-"))


def _mean(checks_and_replies: list[tuple[list, str]]) -> float:
    return sum(score_checks(c, r)[0] for c, r in checks_and_replies) / len(checks_and_replies)


def test_eight_skills_of_their_own_with_gold_content():
    assert len(SKILLS) >= 8
    dev = BENCH / "skills_suite"
    dev_requests = {t.task for p in dev.iterdir() if (p / "tasks.jsonl").is_file() for t in read_tasks(p / "tasks.jsonl")}
    assert not {p.name for p in SKILLS} & {p.name for p in dev.iterdir()}
    for skill in SKILLS:
        tasks = read_tasks(skill / "tasks.jsonl")
        assert Counter(t.split for t in tasks) == {"train": 20, "val": 6, "test": 10}, skill.name
        assert all(any(c.op in CONTENT_OPS for c in t.judge.checks) for t in tasks), skill.name
        assert all(t.judge.reference for t in tasks) and not {t.task for t in tasks} & dev_requests
        test = [t for t in tasks if t.split == "test"]
        assert not {t.task for t in test} & {t.task for t in tasks if t.split != "test"}


@pytest.mark.parametrize("skill", SKILLS, ids=[p.name for p in SKILLS])
def test_restating_the_request_scores_below_half_and_gold_replies_pass(skill: Path):
    tasks = read_tasks(skill / "tasks.jsonl")
    for split in ("val", "test"):
        part = [t for t in tasks if t.split == split]
        assert _mean([(t.judge.checks, t.judge.reference) for t in part]) == 1.0
        families = {"the request": [t.task for t in part]}
        for form in FORMS[skill.name]:
            families[form] = [_fill(form, t.task) for t in part]
        # a constant reply: every gold reply of the split, given to every task of it
        for gold in {t.judge.reference for t in part}:
            families[f"constant {gold!r}"] = [gold] * len(part)
        for name, replies in families.items():
            score = _mean([(t.judge.checks, r) for t, r in zip(part, replies, strict=True)])
            assert score < 0.5, (skill.name, split, name, score)


@pytest.mark.parametrize("skill", SKILLS, ids=[p.name for p in SKILLS])
def test_the_oracle_shows_the_form_and_the_deficient_skill_does_not(skill: Path):
    tasks = read_tasks(skill / "tasks.jsonl")
    form = [c for c in tasks[0].judge.checks if c.op not in CONTENT_OPS]
    examples = split_examples((skill / "oracle.md").read_text(encoding="utf-8"))[1]
    assert examples and not split_examples((skill / "SKILL.md").read_text(encoding="utf-8"))[1]
    asked = {t.task for t in tasks}
    for question, reply in examples:
        assert question not in asked  # the oracle's example is none of the tasks
        assert score_checks(form, reply)[0] == 1.0 if form else reply.strip()


def test_the_task_files_are_what_the_builder_writes(tmp_path: Path):
    sys.path.insert(0, str(SUITE))
    try:
        import build_tasks
    finally:
        sys.path.remove(str(SUITE))
    for name in build_tasks.SKILLS:
        want = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in build_tasks.records(name))
        assert (SUITE / name / "tasks.jsonl").read_text(encoding="utf-8") == want, name
