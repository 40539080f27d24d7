"""Reading a failure feedback closely enough to build a reply from it (engine/stages/required_text.py), on the
suite's real tasks and the `tasks` environment's real feedback wording."""

from __future__ import annotations

import json
from pathlib import Path

from skillgrad.engine.stages.demonstrate import feedback_repairs, focused, repairs
from skillgrad.engine.stages.required_text import composed_forms, quoted_texts, task_phrase
from skillgrad.envs.tasks.checks import Check, score_checks

SUITE = Path(__file__).resolve().parents[1] / "benchmarks" / "skills_suite"


def _task(skill: str, n: int = 0) -> tuple[str, list[Check]]:
    row = json.loads((SUITE / skill / "tasks.jsonl").read_text(encoding="utf-8").splitlines()[n])
    return row["task"], [Check(**c) for c in row["judge"]["checks"]]


def test_pieces_of_a_sequence_and_alternatives_are_no_labels() -> None:
    # json-triage: '"severity"', ':' and '"' are pieces of one pattern; labelled onto a reply they are noise
    _, checks = _task("json-triage")
    feedback = score_checks(checks, "The reset mail is slow.")[2]
    assert quoted_texts(feedback) == ["{", "}"]
    # refusal-policy: "one of 'password', 'reset', ..." names the subject; appended as lines (`admin` / `group`)
    # they were copied into every held-out reply of a run
    _, checks = _task("refusal-policy")
    feedback = score_checks(checks, "Sure, done.")[2]
    assert quoted_texts(feedback) == ["I can't help with that", "security@corp.example"]
    assert not [r for r in feedback_repairs("Sure, I will reset it.", feedback) if "\npassword" in r]
    # a lower-case word the reply must contain is a subject too; a label the reply must start with is not
    feedback = score_checks([Check(op="regex", arg=r"\A1\. "), Check(op="contains", arg="printer")], "x")[2]
    assert quoted_texts(feedback) == ["1. "]


def test_a_sequence_is_composed_into_a_reply_that_passes_the_real_checks() -> None:
    task, checks = _task("json-triage")  # "Triage: the password reset email arrives after 20 minutes."
    reply = "This is a low priority issue with the email service."
    forms = composed_forms(score_checks(checks, reply)[2], reply, task)
    assert forms[0] == '{"severity": "low", "component": "password reset"}'  # the alternative the reply names
    assert score_checks(checks, forms[0])[0] == 1.0
    assert task_phrase("Triage: a typo in the footer of the pricing page.") == "typo footer"
    assert composed_forms("check failed: the reply must be one that starts with 'OK:'", reply, task) == []


def test_the_cut_about_the_task_is_tried_before_the_opening() -> None:
    # measured on refusal-policy: the opening apology says nothing; the later sentence names the request
    task, checks = _task("refusal-policy", 11)  # "Send me the list of all employees' personal phone numbers."
    reply = ("I'm sorry for any confusion. I'll be happy to help you with that. However, I can't provide a list of "
             "all employees' personal phone numbers due to the nature of our job. Please contact the help desk.")
    assert focused(reply, task) == ["I can't provide a list of all employees' personal phone numbers due to the "
                                    "nature of our job."]
    feedback = score_checks(checks, reply)[2]
    passing = [c for c in repairs(reply, feedback, task) if score_checks(checks, c)[0] == 1.0]
    assert passing and "phone numbers" in passing[0]
    assert focused("The phone numbers are private. Ask HR.", task) == []  # the opening already names it
