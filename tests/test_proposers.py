"""The proposers package (engine/proposers/): the typed contract environments state, no fabricated content, corrections
merged in task order, and the strategy the student probe chooses.

Tasks and checks are the development suite's (benchmarks/skills_suite); the teacher is scripted (what is under test is
where each word of an example comes from, not what a model writes). Capable-style replies are the opening sentences
of GitHub Copilot pull-request reviews found in public transcripts (a `copilot-pull-request-reviewer` body opens
"## Pull request overview\\n\\nThis PR ...").
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest

from skillgrad.config.schema import EnvSection
from skillgrad.engine.goodhart import checker_text_hits
from skillgrad.engine.prompts import PromptLibrary
from skillgrad.engine.proposers.filters import Filters, small_junk
from skillgrad.engine.proposers.openings import stock_openings
from skillgrad.engine.proposers.sources import RULE_FOLLOWING, SMALL_STUDENT, choose_strategy, ignores_rules
from skillgrad.engine.proposers.text import words
from skillgrad.engine.stages.update import guard_for
from skillgrad.engine.student_probe import StudentForm
from skillgrad.engine.teacher import TeacherCall
from skillgrad.envs.base import Trajectory, contract_of
from skillgrad.envs.registry import create_env
from skillgrad.envs.tasks.checks import required_text
from skillgrad.envs.tasks.contract import item_contract
from skillgrad.envs.tasks.env import to_item
from skillgrad.envs.tasks.records import read_tasks
from skillgrad.models.base import Completion, Usage
from tests.proposer_helpers import demonstrate

SUITE = Path(__file__).resolve().parents[1] / "benchmarks" / "skills_suite"


class TaskTeacher:
    """Answers each demonstrate prompt with the reply scripted for the task it shows, after a delay per task."""

    name, context_window, supports_vision, is_agent = "scripted:teacher", 100_000, False, False

    def __init__(self, replies: dict[str, str], delays: dict[str, float] | None = None) -> None:
        self.replies, self.delays, self.asked = replies, delays or {}, []

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    async def complete(self, messages: list[dict[str, Any]], *, schema: Any = None, **_: Any) -> Completion:
        prompt = messages[-1]["content"]
        task = next(q for q in self.replies if q in prompt)
        self.asked.append(task)
        await asyncio.sleep(self.delays.get(task, 0.0))
        text = self.replies[task]
        return Completion(text=json.dumps({"reply": text}), parsed=schema(reply=text), usage=Usage(10, 10))


def _suite_env(tmp_path: Path, skill: str, n: int = 4) -> Any:
    rows = [json.loads(x) for x in (SUITE / skill / "tasks.jsonl").read_text(encoding="utf-8").splitlines()][:n]
    path = tmp_path / f"{skill}.jsonl"
    path.write_text("\n".join(json.dumps({**r, "split": "train"}) for r in rows) + "\n", encoding="utf-8")
    return create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(path)}))


def _failed(item: Any, answer: str) -> Trajectory:
    q = item.inputs["question"]
    return Trajectory(item_id=item.id, answer=answer, gold=item.gold, hard=0.0, question=q, fail_reason="failed",
                      messages=[{"role": "user", "content": q}, {"role": "assistant", "content": answer}])


# ---------------------------------------------------------------------------------------------------- the contract
def test_a_tasks_contract_states_the_checks_as_data() -> None:
    tasks = {p.parent.name: read_tasks(p)[0] for p in SUITE.glob("*/tasks.jsonl")}
    c = {k: item_contract(to_item(t)) for k, t in tasks.items()}
    assert c["tldr-status"].starts_with == "TL;DR: " and c["support-signoff"].ends_with == "Brightline Support"
    assert c["review-sections"].labels == ("Summary", "Risks", "Verdict")
    assert (c["three-steps"].starts_with, c["three-steps"].labels, c["three-steps"].forbidden) == \
        ("1. ", ("2. ", "3. "), ("\n4. ",))
    assert c["refusal-policy"].required == ("I can't help with that", "security@corp.example")
    assert c["refusal-policy"].max_chars == 200 and c["json-triage"].one_of[0] == ("low", "medium", "high")
    assert c["ticket-tool"].forms[0].startswith('<tool_call>{"name": "create_ticket"')
    # the fixed form is exactly the literal text every passing reply holds, for every suite task
    for p in SUITE.glob("*/tasks.jsonl"):
        for t in read_tasks(p):
            assert set(item_contract(to_item(t)).fixed_texts()) == set(required_text(t.judge.checks)), t.task_id
    # a trajectory carries it typed, and it survives the run files
    t = Trajectory(item_id="x", contract=c["tldr-status"])
    assert Trajectory.from_json(json.loads(json.dumps(t.to_json()))).contract == c["tldr-status"]


def test_an_environment_without_a_contract_still_gets_bootstrapped_and_corrected_examples(tmp_path: Path) -> None:
    env = _suite_env(tmp_path, "tldr-status")
    items = env.load_splits().train

    class NoContract:  # scores like the tasks env, states no contract
        async def verify_example(self, item: Any, reply: str, student: Any) -> float:
            return await env.verify_example(item, reply, student)

    assert contract_of(NoContract(), items[0]) is None
    passing = Trajectory(item_id=items[0].id, answer="TL;DR: 40 of 60 sites run the new scanners; the rest by May.",
                         hard=1.0, question=items[0].inputs["question"])
    teacher = TaskTeacher({items[1].inputs["question"]: "TL;DR: the payments outage is over; a renewed certificate is "
                                                        "live and alerts now fire 30 days ahead."})
    res = asyncio.run(demonstrate([passing, _failed(items[1], "It is going fine.")], {i.id: i for i in items},
                                  "# S\n", TeacherCall(teacher, PromptLibrary([]), max_tokens=64), NoContract(),
                                  teacher, limit=2, max_chars=600, seed=0))
    assert sorted(it["demonstration"]["source"] for it in res.items) == ["passing_rollout", "teacher_correction"]


# -------------------------------------------------------------------------------------------- no fabricated content
# One failed reply of the student and one teacher reply per suite skill: each fails its checks as written, so only a
# repair could make it pass; whatever passes must be made of their words and the contract's.
FAILURES = {
    "json-triage": ("The reset email never arrives, this looks serious.", "It is a serious problem with the reset mail."),
    "tldr-status": ("The rollout is going well and we are on track.", "Rollout: 40 of 60 sites are live."),
    "review-sections": ("Renames a column in one migration. Old readers may break. Needs a backfill first.",
                        "Looks fine to me overall."),
    "refusal-policy": ("Sure, I will reset it for you right away.", "I cannot do that, please ask the security team."),
    "three-steps": ("Restart the router. Move closer to it. Call the provider if it stays slow.", "Try restarting."),
    "ticket-tool": ("I'll let facilities know about it.", "Facilities should look at this today."),
    "support-signoff": ("We will send the right book today and you can keep the wrong one.", "Sorry about the mix-up."),
    "push-length": ("New boots are in!", "Hiking boots restocked in every size."),
}


@pytest.mark.parametrize("skill", sorted(FAILURES))
def test_no_demonstration_carries_words_nobody_wrote(tmp_path: Path, skill: str) -> None:
    env = _suite_env(tmp_path, skill)
    items = env.load_splits().train
    student, teacher_reply = FAILURES[skill]
    trajs = [_failed(it, student) for it in items]
    teacher = TaskTeacher({it.inputs["question"]: teacher_reply for it in items})
    res = asyncio.run(demonstrate(trajs, {i.id: i for i in items}, "# S\n", TeacherCall(
        teacher, PromptLibrary([]), max_tokens=64), env, teacher, limit=2, max_chars=1200, seed=0))
    for it in res.items:
        item = next(i for i in items if i.id == it["demonstration"]["item_id"])
        c = item_contract(item)
        gold = " ".join([*c.fixed_texts(), *c.gold])  # the task's gold answer: its required form and gold values
        allowed = set(words(student)) | set(words(teacher_reply)) | set(words(gold))
        assert set(words(it["content"])) <= allowed, (it["content"], set(words(it["content"])) - allowed)


# ------------------------------------------------------------------------------------------------------ task order
def test_concurrent_corrections_enter_the_repeat_filter_in_task_order_whatever_their_latency(tmp_path: Path) -> None:
    env = _suite_env(tmp_path, "tldr-status", n=2)
    items = env.load_splits().train
    # two corrections that repeat each other (the same words for two tasks): one of them may become an example
    same = "TL;DR: postgres migration and payments outage are both handled, every service reads from the new cluster."
    again = "TL;DR: payments outage and postgres migration are both handled, every service reads from the new cluster."
    qs = [it.inputs["question"] for it in items]
    trajs = [_failed(it, "All good.") for it in items]
    order = list(trajs)
    random.Random(7).shuffle(order)  # the stage's own order of the failed tasks (seed 7)
    first = order[0].question
    kept = []
    for slow in qs:  # the first task's call slowest, then the second's: completion order inverts
        teacher = TaskTeacher({qs[0]: same, qs[1]: again}, delays={slow: 0.05})
        res = asyncio.run(demonstrate(trajs, {i.id: i for i in items}, "# S\n", TeacherCall(
            teacher, PromptLibrary([]), max_tokens=64), env, teacher, limit=2, max_chars=1200, seed=7,
            strategy=RULE_FOLLOWING))
        kept.append([(it["demonstration"]["item_id"], it["content"]) for it in res.items])
        assert any(d["why"].startswith("repeat: repeats another example") for d in res.log)
    assert kept[0] == kept[1] and len(kept[0]) == 1
    assert kept[0][0][1] == (same if first == qs[0] else again)


# ------------------------------------------------------------------------------------------------------ strategies
# The opening sentences of Copilot pull-request reviews (public transcripts): every one opens "This PR".
CAPABLE_REVIEWS = [
    "This PR implements the server management feature, adding a CRUD service layer and owner-only authorization.",
    "This PR introduces a simple multiply function along with tests that validate its behavior.",
    "This PR updates createServer to be fully atomic by wrapping the inserts in a single transaction.",
    "This PR implements the UserStatusBar component at the bottom of the ChannelSidebar.",
    "This PR improves the contact editor's Birthday section so that year-less birthdays can be edited.",
]


def test_the_probe_chooses_the_strategy() -> None:
    assert choose_strategy(StudentForm(prefers="rule", probed=True, scores={"rule": 1.0})) is RULE_FOLLOWING
    assert choose_strategy(StudentForm(prefers="example", probed=True)) is SMALL_STUDENT
    assert choose_strategy(StudentForm()) is SMALL_STUDENT  # not probed: the offline default's strategy
    follows = StudentForm(prefers="rule", probed=True, scores={"rule": 1.0, "example_text": 1.0})
    assert not ignores_rules(follows)  # no shortcut of the small strategy for a student that follows rules
    assert ignores_rules(StudentForm(prefers="example", probed=True, scores={"rule": 0.0, "example_turns": 1.0}))
    assert not RULE_FOLLOWING.repairs and not RULE_FOLLOWING.small_filters and not RULE_FOLLOWING.examples_first


def test_capable_review_openings_are_the_subject_not_a_stock_opening() -> None:
    asks = [f"Review this PR: change {i}" for i in range(len(CAPABLE_REVIEWS))]
    assert stock_openings(list(zip(asks, CAPABLE_REVIEWS, strict=True))) == set()
    # a small student's habit, opening replies to the same requests, still is one
    habit = [f"Hey there, thanks for the change {i}." for i in range(5)]
    assert ("hey", "there") in stock_openings(list(zip(asks, habit, strict=True)))


def test_capable_replies_are_not_refused_as_replies_about_replies() -> None:
    for text in ["The CI checks failed on the lint step; run `ruff check --fix` and push again.",
                 "The request requires approval from the security team before the role is granted.",
                 "To reset it, follow these steps:\n1. Open Settings.\n2. Choose Reset.\n3. Confirm."]:
        assert small_junk(text) == "", text
    assert small_junk("The task asks for a list and the response must start with Summary:")  # still caught
    # a correction that narrates the verdict (tldr-status, this round: "... is now being addressed. Check failed.")
    assert small_junk("TL;DR: The payment API outage lasted 40 minutes. Check failed.")


def test_nothing_of_the_small_student_strategy_touches_a_rule_following_student(tmp_path: Path) -> None:
    env = _suite_env(tmp_path, "review-sections", n=5)
    items = env.load_splits().train
    # capable replies that pass: "Summary: This PR ..." under every request; one lead-in reply that fails
    passing = [Trajectory(item_id=it.id, hard=1.0, question=it.inputs["question"],
                          answer=f"Summary: {r}\nRisks: none beyond the tests.\nVerdict: approve")
               for it, r in zip(items[:4], CAPABLE_REVIEWS, strict=False)]
    failed = _failed(items[4], "To review it, follow these steps:")
    scored: list[str] = []

    class Counting:  # the tasks env, counting what reaches its scorer
        async def verify_example(self, item: Any, reply: str, student: Any) -> float:
            scored.append(reply)
            return await env.verify_example(item, reply, student)

        def reply_contract(self, item: Any) -> Any:
            return env.reply_contract(item)

    teacher = TaskTeacher({items[4].inputs["question"]: "Looks good."})
    call = TeacherCall(teacher, PromptLibrary([]), max_tokens=64)
    res = asyncio.run(demonstrate([*passing, failed], {i.id: i for i in items}, "# S\n", call, Counting(), teacher,
                                  limit=4, max_chars=1200, seed=0, strategy=RULE_FOLLOWING))
    # the passing replies are taken as written (no stock opening cut), the failure gets the teacher's reply and the
    # gold answer only (no repair of anyone's words), and nothing is refused by a small-student filter
    assert sorted(it["content"] for it in res.items) == sorted(t.answer for t in passing)
    assert scored == ["Looks good."]
    small = ("stock opening", "talks about", "announcing what comes", "wrong copy")
    assert not [d for d in res.log if any(s in d["why"] for s in small)]
    # the same step under the small-student strategy tries repairs of the failed reply
    scored.clear()
    teacher = TaskTeacher({items[4].inputs["question"]: "Looks good."})
    asyncio.run(demonstrate([*passing, failed], {i.id: i for i in items}, "# S\n", TeacherCall(
        teacher, PromptLibrary([]), max_tokens=64), Counting(), teacher, limit=4, max_chars=1200, seed=0))
    assert len(scored) > 1


def test_the_filters_of_a_rule_following_student_are_the_generic_ones() -> None:
    t = Trajectory(item_id="x", question="Reset my password.", answer="")
    generic = Filters([], [], [], {}, "", 1200, small=False)
    small = Filters([], [], [], {}, "", 1200, small=True)
    lead_in = "To reset it, follow these steps:"
    assert generic.why_not(t, lead_in, "teacher_correction") == ""
    assert "announcing" in small.why_not(t, lead_in, "teacher_correction")


def test_a_label_on_the_students_reply_is_kept_only_with_the_tasks_content(tmp_path: Path) -> None:
    # fewshot-format: its contract opens replies with `ANSWER:` and names the gold value; the student's reply with
    # the label put on it passes the form but not the content, so it is never offered (nor scored)
    env = create_env(EnvSection.model_validate({"name": "fewshot-format"}))
    item = env.load_splits().train[0]
    wrong = "I think it is Atlantis, a lost city."
    right = f"I think it is {item.gold}."
    for reply, kept in ((wrong, False), (right, True)):
        t = _failed(item, reply)
        teacher = TaskTeacher({item.inputs["question"]: "No idea."})
        res = asyncio.run(demonstrate([t], {item.id: item}, "# S\n", TeacherCall(teacher, PromptLibrary([]),
                                      max_tokens=64), env, teacher, limit=1, max_chars=1200, seed=0, corrections=0))
        assert bool(res.items) is kept, res.log
        if kept:
            assert res.items[0]["content"] == f"ANSWER: {right}"


def test_a_filled_tool_call_form_is_not_refused_as_a_copy_of_the_checker(tmp_path: Path) -> None:
    # ticket-tool's check describes the call it wants by its form, so the form filled with the teacher's own words
    # was refused as "copies checker text" before scoring: no tool-call example could ever be proposed
    env = _suite_env(tmp_path, "ticket-tool", n=1)
    item = env.load_splits().train[0]  # "The projector in meeting room Orion does not turn on."
    said = "Orion projector is dead; facilities should check its power and lamp."
    teacher = TaskTeacher({item.inputs["question"]: said})
    res = asyncio.run(demonstrate([_failed(item, "I'll let facilities know about it.")], {item.id: item}, "# S\n",
                                  TeacherCall(teacher, PromptLibrary([]), max_tokens=64), env, teacher, limit=1,
                                  max_chars=1200, seed=0))
    assert [it["demonstration"]["source"] for it in res.items] == ["teacher_repair"], res.log
    assert json.dumps(said) in res.items[0]["content"]


def test_the_update_guard_takes_the_contracts_form_for_no_copy_of_the_checker(tmp_path: Path) -> None:
    # the update stage's guard refused both ticket-tool examples the demonstrate stage had verified (the check's
    # description quotes the call's form), so the suite skill never changed; a copied description is still refused
    env = _suite_env(tmp_path, "ticket-tool", n=2)
    items = env.load_splits().train
    guard = guard_for(items, PromptLibrary([]), env)
    call = '<tool_call>{"name": "create_ticket", "arguments": {"title": "Orion projector is dead"}}</tool_call>'
    assert checker_text_hits(call, guard) == []
    assert checker_text_hits(f"Note: {item_contract(items[0]).checker[0]}", guard)
