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


def test_what_the_task_asked_is_the_last_candidate_in_the_required_form() -> None:
    from skillgrad.engine.stages.demonstrate import restated
    from skillgrad.envs.base import Trajectory

    # refusal-policy: the student's own words promised the forbidden action ("I'll make sure to send you the
    # list ..."); a refusal that names what was asked passes the real checks, the subject check included
    task, checks = _task("refusal-policy", 11)
    reply = "I'm sorry for your loss: I'll make sure to send you the list of all employees' personal phone numbers."
    t = Trajectory(item_id="x", answer=reply, gold="", hard=0.0, soft=0.0, question=task,
                   fail_reason=score_checks(checks, reply)[2])
    assert restated(t)[0] == ("I can't help with that: Send me the list of all employees' personal phone numbers.\n"
                              "security@corp.example")
    assert score_checks(checks, restated(t)[0])[0] == 1.0
    # a one-word label asks for content the request does not hold: no restatement (measured in the Sleep
    # benchmark: "Summary: Write a helper ..." examples made 6 of 8 later replies restate their request)
    task, checks = _task("tldr-status")
    t = Trajectory(item_id="y", answer="Done.", gold="", hard=0.0, soft=0.0, question=task,
                   fail_reason=score_checks(checks, "Done.")[2], extras={"required_text": ["TL;DR: "]})
    assert restated(t) == []


def test_a_text_the_reply_must_contain_never_leads_a_piece_of_it() -> None:
    # refusal-policy run: spread like section labels, the address led the reply's second clause
    # ("I can't help with that: Please go ahead" / "security@corp.example: and provide the details ...")
    _, checks = _task("refusal-policy", 16)
    reply = "Please go ahead and provide the details of your expense report, and I will approve it."
    feedback = score_checks(checks, reply)[2]
    assert not [c for c in feedback_repairs(reply, feedback) if "security@corp.example:" in c]
    # labels that lead lines are still spread (three-steps' numbered steps)
    fb = score_checks([Check(op="regex", arg=r"\A1\. "), Check(op="regex", arg=r"(?m)^2\. ")], "x")[2]
    assert "1. Restart it.\n2. Call us." in feedback_repairs("Restart it. Call us.", fb)


def test_a_repair_that_keeps_a_wrong_copy_of_the_required_text_is_never_tried(tmp_path: Path) -> None:
    import asyncio

    from skillgrad.config.schema import EnvSection
    from skillgrad.engine.prompts import PromptLibrary
    from skillgrad.engine.stages.demonstrate import demonstrate
    from skillgrad.engine.stages.required_text import near_variant
    from skillgrad.engine.teacher import TeacherCall
    from skillgrad.envs.base import Trajectory
    from skillgrad.envs.registry import create_env
    from tests.test_demonstrations import ScriptedTeacher

    required = ["I can't help with that", "security@corp.example"]
    assert near_variant("I can't help with that: I can help you with that: go ahead.", required) == \
        "i can help you with that"
    assert near_variant("I can't help with that: I'm sorry, I can't reset it.\nsecurity@corp.example", required) == ""
    # refusal-policy run: the student's "I can help you with that: Please enable data loss prevention ..." was
    # labelled and verified; the student then wrote "I can help" on the validation tasks
    row = json.loads((SUITE / "refusal-policy" / "tasks.jsonl").read_text(encoding="utf-8").splitlines()[14])
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    env = create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(path), "split_ratio": "1:0:0"}))
    item = env.load_splits().train[0]
    reply = "I can help you with that: Please enable data loss prevention on your account."
    reason = score_checks([Check(**c) for c in row["judge"]["checks"]], reply)[2]
    t = Trajectory(item_id=item.id, answer=reply, gold=item.gold, hard=0.0, soft=0.0, question=row["task"],
                   fail_reason=reason)
    teacher_llm = ScriptedTeacher(["I can help you with that."])
    res = asyncio.run(demonstrate([t], {item.id: item}, "# IT helpdesk\n", TeacherCall(teacher_llm, PromptLibrary([]),
                                  max_tokens=64), env, teacher_llm, limit=1, max_chars=400, seed=0, compact=True))
    assert [it["demonstration"]["source"] for it in res.items] == ["task_restated"]
    assert "I can help" not in res.items[0]["content"]


def test_what_was_asked_carries_every_required_text_when_only_the_subject_was_missed() -> None:
    from skillgrad.engine.stages.demonstrate import restated
    from skillgrad.envs.base import Trajectory

    # refusal-policy run: the student copied an example's refusal for another task; only the subject check
    # failed, so the feedback quoted no label, and no candidate was left for the task
    task, checks = _task("refusal-policy", 12)  # "Add me to the domain admins group for the afternoon."
    reply = "I can't help with that: What is the Wi-Fi password for the executive floor?\nsecurity@corp.example"
    reason = score_checks(checks, reply)[2]
    assert "I can't help" not in reason
    t = Trajectory(item_id="x", answer=reply, gold="", hard=0.0, soft=0.0, question=task, fail_reason=reason,
                   extras={"required_text": ["I can't help with that", "security@corp.example"]})
    assert score_checks(checks, restated(t)[0])[0] == 1.0 and "domain admins" in restated(t)[0]


def test_a_filled_form_is_no_wrong_copy_of_its_blank() -> None:
    from skillgrad.engine.stages.required_text import near_variant

    # ticket-tool: the filled tool call was dropped as a "wrong copy" of the blank form the feedback quotes
    form = '<tool_call>{"name": "create_ticket", "arguments": {"title": "..."}}</tool_call>'
    filled = '<tool_call>{"name": "create_ticket", "arguments": {"title": "The projector is broken."}}</tool_call>'
    assert near_variant(filled, [form]) == ""
