"""Content checks of the `tasks` format (equals, one_of, fact; a reference answer graded with a rubric): a reply
that restates its request in the required form fails them, a correct reply passes, and a bad check is a one-line
error naming the task."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from skillgrad.envs.tasks import Check, Judge, read_tasks, score_checks
from skillgrad.envs.tasks.checks import CHECK_OPS, CONTENT_OPS
from skillgrad.envs.tasks.judge import JudgeVerdict, grade
from skillgrad.errors import DataError

SUITE = Path(__file__).resolve().parents[1] / "benchmarks" / "skills_suite"


def _c(**kw: Any) -> Check:
    return Check.model_validate(kw)


@pytest.mark.parametrize("check,reply,ok", [
    ({"op": "equals", "arg": "high"}, "High.", True),
    ({"op": "equals", "arg": "high"}, "`high`", True),
    ({"op": "equals", "arg": "high"}, "high severity", False),
    ({"op": "equals", "arg": "1200"}, "1,200", True),
    ({"op": "equals", "arg": "42"}, "42.0", True),
    ({"op": "equals", "key": "severity", "arg": "high"}, 'Here: {"severity": "High", "component": "cdn"}', True),
    ({"op": "equals", "key": "severity", "arg": "high"}, '{"severity": "low"}', False),
    ({"op": "equals", "key": "severity", "arg": "high"}, "severity: high", False),  # no JSON object
    ({"op": "equals", "key": "total", "arg": "17.5"}, '```json\n{"total": 17.50}\n```', True),
    ({"op": "one_of", "values": ["refund", "credit"]}, "Credit", True),
    ({"op": "one_of", "key": "action", "values": ["refund", "credit"]}, '{"action": "ignore"}', False),
    ({"op": "fact", "arg": "40"}, "TL;DR: 40 of 60 sites are live.", True),
    ({"op": "fact", "arg": "40"}, "TL;DR: 140 sites are live.", False),
    ({"op": "fact", "arg": "40"}, "TL;DR: 40.5 percent done.", False),
    ({"op": "fact", "arg": "in progress", "wrong": ["complete", "finished"]}, "Rollout in progress.", True),
    ({"op": "fact", "arg": "in progress", "wrong": ["complete", "finished"]},
     "Rollout in progress, now complete.", False),  # the fact and a value contradicting it
    ({"op": "fact", "arg": "Oslo", "key": "city"}, '{"city": "oslo"}', True),
    ({"op": "fact", "arg": "Oslo", "key": "city"}, '{"city": "Bergen", "note": "not Oslo"}', False),
])
def test_content_ops(check: dict[str, Any], reply: str, ok: bool) -> None:
    hard, soft, reason = score_checks([_c(**check)], reply)
    assert hard == float(ok) and (reason == "") == ok


def test_content_ops_are_said_in_words_and_kept_apart_from_the_miners_ops() -> None:
    assert set(CONTENT_OPS) == {"equals", "one_of", "fact"} and not set(CONTENT_OPS) & set(CHECK_OPS)
    assert _c(op="equals", key="severity", arg="high").describe() == "has a JSON object whose 'severity' is 'high'"
    assert _c(op="one_of", values=["a", "b"]).describe() == "is one of 'a', 'b'"
    assert _c(op="fact", arg="40", wrong=["60"]).describe() == "states '40' (never '60')"
    assert _c(op="equals", arg="high").required_text() == []  # a task's own gold, not a form every reply shares
    judge = Judge(kind="rule", checks=[_c(op="equals", arg="high")])
    assert judge.describe() == "the reply is 'high'"  # a gold value: no longer "no fixed answer"


# Requests of the development suite with a value each reply must compute from them: a restatement in the
# required form passed the suite's checks and fails these
RESTATED = [
    ("tldr-status", "tldr-status-test-01", "TL;DR: {task}", [{"op": "fact", "arg": "20 sites", "wrong": ["all"]}],
     "TL;DR: The barcode scanner rollout is at 40 of 60 sites; 20 sites remain."),
    ("tldr-status", "tldr-status-test-08", "TL;DR: {task}", [{"op": "equals", "key": "done_share", "arg": "0.4"}],
     'TL;DR: 120 of 300 German articles are translated. {"done_share": 0.4}'),
    ("json-triage", "json-triage-test-01", '{{"severity": "medium", "component": "{task}"}}',
     [{"op": "equals", "key": "severity", "arg": "high"}], '{"severity": "high", "component": "shipping"}'),
]


@pytest.mark.parametrize("skill,task_id,form,checks,good", RESTATED)
def test_a_restated_request_fails_content_checks_a_correct_reply_passes(skill: str, task_id: str, form: str,
                                                                        checks: list[dict[str, Any]],
                                                                        good: str) -> None:
    task = next(t for t in read_tasks(SUITE / skill / "tasks.jsonl") if t.task_id == task_id)
    restated = form.format(task=task.task.replace('"', "'"))
    assert score_checks(task.judge.checks, restated)[0] == 1.0  # the form and subject checks pass a restatement
    content = [_c(**c) for c in checks]
    assert score_checks([*task.judge.checks, *content], restated)[0] == 0.0
    assert score_checks(content, good)[0] == 1.0


def test_fact_checks_fail_the_false_replies_a_run_kept() -> None:
    """The replies issue 30 quotes from a 24-call tldr-status run (1.00 held-out): each misstates its request."""
    rollout = [_c(op="fact", arg="40 of 60", wrong=["completed", "complete"])]
    assert score_checks(rollout, "TL;DR: The rollout completed successfully, and 40 sites are now live.")[0] == 0.0
    assert score_checks(rollout, "TL;DR: The scanner rollout is at 40 of 60 sites.")[0] == 1.0
    slip = [_c(op="fact", arg="a week", wrong=["7 weeks", "seven weeks"])]
    assert score_checks(slip, "TL;DR: The redesign is now 7 weeks past the deadline.")[0] == 0.0
    assert score_checks(slip, "TL;DR: Design sign-off slipped a week.")[0] == 1.0


def _write(tmp_path: Path, row: dict[str, Any]) -> Path:
    p = tmp_path / "t.jsonl"
    p.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("checks,judge_extra,needle", [
    ([{"op": "equals"}], {}, "equals needs a non-empty arg"),
    ([{"op": "one_of", "arg": "x"}], {}, "one_of needs `values`"),
    ([{"op": "one_of", "values": ["a", " "]}], {}, "one_of needs `values`"),
    ([{"op": "contains", "arg": "x", "values": ["a"]}], {}, "values is for one_of"),
    ([{"op": "equals", "arg": "x", "wrong": ["y"]}], {}, "wrong is for fact"),
    ([{"op": "contains", "arg": "x", "key": "k"}], {}, "key is for tool_called, equals, one_of, fact"),
    ([{"op": "fact", "arg": "40", "wrong": ["40."]}], {}, "the fact is among its own wrong values"),
    ([{"op": "equals", "arg": "x"}], {"reference": "y"}, "the reference answer fails the judge's own checks"),
])
def test_bad_content_checks_are_one_line_errors_naming_the_task(tmp_path: Path, checks: list[dict[str, Any]],
                                                                judge_extra: dict[str, Any], needle: str) -> None:
    path = _write(tmp_path, {"task_id": "gold-7", "task": "Classify.",
                             "judge": {"kind": "rule", "checks": checks, **judge_extra}})
    with pytest.raises(DataError) as e:
        read_tasks(path)
    msg = str(e.value)
    assert needle in msg and "task 'gold-7'" in msg and f"{path}:1" in msg and "\n" not in msg
    assert "Value error" not in msg


class ScriptedJudge:
    """The rubric judge as plumbing: records what it was shown and returns a fixed verdict."""

    def __init__(self, score: float) -> None:
        self.score, self.seen = score, []

    async def complete(self, messages: list[dict[str, str]], **_: Any) -> SimpleNamespace:
        self.seen.append(messages[-1]["content"])
        return SimpleNamespace(parsed=JudgeVerdict(score=self.score, reason="scripted"))


def test_a_reference_answer_reaches_the_judge_and_gates_a_rule_task() -> None:
    spec = Judge(kind="rule", checks=[_c(op="equals", key="label", arg="billing")], rubric="Same cause as the reference.",
                 reference='{"label": "billing", "cause": "double charge"}')
    judge = ScriptedJudge(0.9)
    assert asyncio.run(grade(spec, "Classify: charged twice", '{"label": "billing"}', judge=judge))[0] == 1.0  # type: ignore[arg-type]
    assert "Reference answer: {\"label\": \"billing\"" in judge.seen[0]
    wrong = asyncio.run(grade(spec, "Classify: charged twice", '{"label": "shipping"}', judge=judge))  # type: ignore[arg-type]
    assert wrong[0] == 0.0 and len(judge.seen) == 1  # a failed gold value costs no judge call
    low = asyncio.run(grade(spec, "Classify", '{"label": "billing"}', judge=ScriptedJudge(0.3)))  # type: ignore[arg-type]
    assert low[0] == 0.0 and low[1] == pytest.approx((1 + 0.3) / 2)
    assert "reference answer" in spec.describe() and spec.graded
    gold = Judge(kind="rule", checks=[_c(op="equals", arg="high")], reference="high")  # a gold reply, not graded
    assert not gold.graded and "'high'" in gold.describe()
    rubric_only = Judge(kind="rubric", rubric="Names the bug.", reference="The footer typo.")
    judge2 = ScriptedJudge(1.0)
    assert asyncio.run(grade(rubric_only, "What broke?", "A typo.", judge=judge2))[0] == 1.0  # type: ignore[arg-type]
    assert "Reference answer: The footer typo." in judge2.seen[0]


def test_a_tasks_reference_stays_in_its_judge_and_the_gold_is_the_requirement_in_words() -> None:
    from skillgrad.envs.tasks.env import to_item
    from skillgrad.envs.tasks.records import TaskRecord

    checks = [{"op": "equals", "arg": "travel"}]
    task = TaskRecord.model_validate({"task_id": "a", "task": "Taxi, 38 EUR.",
                                      "judge": {"kind": "rule", "checks": checks, "reference": "travel"}})
    item = to_item(task)
    assert item.gold == "the reply is 'travel', and is correct, as the reply 'travel' is"
    assert item.meta["judge"]["reference"] == "travel"  # where a few-shot baseline finds the gold reply
