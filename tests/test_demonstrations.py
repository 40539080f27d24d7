"""Verified demonstrations: a worked example enters a candidate only when the environment's own scorer passes
its reply on its task (here the real rule checks of the `tasks` environment).

The teacher is scripted so that one corrected reply fails the checks and one passes: what is under test is
the verification and where the example goes, not what a model writes (the embedded-model run is
test_demonstrations_embedded.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from skillgrad.config.schema import EnvSection
from skillgrad.engine.modes import MODES
from skillgrad.engine.prompts import PromptLibrary
from skillgrad.engine.proposers.filters import repeats
from skillgrad.engine.proposers.repairs import candidates, label_repairs
from skillgrad.engine.proposers.sources import RULE_FOLLOWING
from skillgrad.engine.stages.select import select
from skillgrad.engine.stages.update import update
from skillgrad.engine.teacher import TeacherCall
from skillgrad.envs.base import Item, ReplyContract, Trajectory
from skillgrad.envs.registry import create_env
from skillgrad.models.base import Completion, Usage
from skillgrad.skill.examples import find_examples
from tests.proposer_helpers import demonstrate

FAILS = "(a reply that has a line that starts with 'OK:')"  # the check as the teacher reads it: never an example
WRONG = "The deploy is green and healthy."  # a plain reply that fails the ^OK: check
PASSES = "OK: the build passed on the main branch."


class ScriptedTeacher:
    """Replies to the demonstrate prompt in order; records the prompts it was shown."""

    name, context_window, supports_vision, is_agent = "scripted:teacher", 100_000, False, False

    def __init__(self, replies: list[str]) -> None:
        self.replies, self.prompts = list(replies), []

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    async def complete(self, messages: list[dict[str, Any]], *, schema: Any = None, **_: Any) -> Completion:
        self.prompts.append(messages[-1]["content"])
        text = self.replies.pop(0)
        return Completion(text=json.dumps({"reply": text}), parsed=schema(reply=text), usage=Usage(10, 10))


def _env(tmp_path: Path) -> Any:
    rows = [{"task_id": f"t{i}", "task": task, "judge": {"kind": "rule", "checks": [
        {"op": "regex", "arg": "^OK:"}, {"op": "max_chars", "arg": "200"}]}}
        for i, task in enumerate(["Give me the status of the build.", "Give me the status of the deploy.",
                                  "Give me the status of the cache."])]
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(path), "split_ratio": "1:0:0"}))


def _traj(item: Any, answer: str, hard: float, reason: str = "check: failed") -> Trajectory:
    return Trajectory(item_id=item.id, answer=answer, gold=item.gold, hard=hard, soft=hard,
                      question=item.inputs["question"], fail_reason="" if hard else reason)


def test_a_demonstration_that_fails_the_checks_never_enters_a_candidate(tmp_path: Path) -> None:
    env = _env(tmp_path)
    items = env.load_splits().train
    trajs = [_traj(items[0], "The build passed.", 0.0), _traj(items[1], "The deploy is fine.", 0.0),
             _traj(items[2], "OK: the cache is warm.", 1.0)]
    teacher_llm = ScriptedTeacher([WRONG, PASSES])
    teacher = TeacherCall(teacher_llm, PromptLibrary([]), max_tokens=64)
    skill = "# Status replies\n\nAnswer status questions.\n"

    # a student that follows rules: the teacher's reply is verified as written (no repair puts the form on it)
    res = asyncio.run(demonstrate(trajs, {i.id: i for i in items}, skill, teacher, env, teacher_llm, limit=2,
                                  max_chars=400, seed=0, compact=True, strategy=RULE_FOLLOWING))
    by_reply = {d["reply"]: d for d in res.log}
    assert by_reply[WRONG]["verified"] is False and by_reply[WRONG]["score"] == 0.0
    assert by_reply[WRONG]["why"].startswith("failed the checks")
    assert by_reply[PASSES]["verified"] is True and by_reply["OK: the cache is warm."]["source"] == "passing_rollout"
    assert {it["content"] for it in res.items} == {PASSES, "OK: the cache is warm."}
    assert len(teacher_llm.prompts) == 2 and all("Task: Give me the status" in p for p in teacher_llm.prompts)

    # the verified examples take the budget first, ahead of a rule, and reach the candidate as examples
    for it in res.items:
        it["first"] = True
    rule = {"op": "append", "content": "Start every status reply with OK:.", "source_type": "failure"}
    sel = asyncio.run(select([rule, *res.items], skill, teacher, mode=MODES["patch"], budget=2))
    assert [it["op"] for it in sel.selected] == ["example", "example"]
    upd = asyncio.run(update(skill, sel.selected, teacher, mode=MODES["patch"]))
    assert upd.candidate is not None and WRONG not in upd.candidate
    assert {e.reply for e in find_examples(upd.candidate)} == {PASSES, "OK: the cache is warm."}
    assert [o["status"] for o in upd.report["outcomes"]] == ["applied_example", "applied_example"]


def test_feedback_repairs_are_verified_and_a_checker_description_never_passes(tmp_path: Path) -> None:
    env = _env(tmp_path)
    items = env.load_splits().train
    reason = "check: reply should start with 'OK:'"
    trajs = [_traj(items[0], "The build passed.", 0.0, reason), _traj(items[1], "x" * 300, 0.0, reason)]
    # the teacher copies the check's description; the repair "OK: <description>" would pass the rule checks
    teacher_llm = ScriptedTeacher([FAILS, FAILS])
    teacher = TeacherCall(teacher_llm, PromptLibrary([]), max_tokens=64)
    res = asyncio.run(demonstrate(trajs, {i.id: i for i in items}, "# S\n", teacher, env, teacher_llm, limit=2,
                                  max_chars=400, seed=0))
    assert [it["content"] for it in res.items] == ["OK: The build passed."]  # the student's reply, repaired
    assert res.items[0]["demonstration"]["source"] == "own_reply_repair"
    assert all(FAILS not in it["content"] for it in res.items)
    # 300 x's + prefix fail max_chars; the request is not restated after a one-word label (see restated())
    rejected = [d for d in res.log if not d["verified"]]
    # the teacher's checker-description reply is logged as refused on both tasks (a repair took its place on one),
    # with the rule that refused it
    assert {d["item_id"] for d in rejected} == {items[0].id, items[1].id}
    assert all(d["why"].startswith("guard: ") for d in rejected if d["reply"] == FAILS)


def test_rule_first_students_get_examples_only_in_free_slots(tmp_path: Path) -> None:
    teacher = TeacherCall(ScriptedTeacher([]), PromptLibrary([]), max_tokens=64)
    demo = {"op": "example", "target": "q", "content": "r", "source_type": "demonstration", "first": False}
    rule = {"op": "append", "content": "A rule.", "source_type": "failure"}
    sel = asyncio.run(select([rule, demo], "# S\n", teacher, mode=MODES["patch"], budget=1))
    assert sel.selected == [rule]
    sel = asyncio.run(select([rule, demo], "# S\n", teacher, mode=MODES["patch"], budget=2))
    assert sel.selected == [rule, demo] and sel.budget == 2


def test_without_a_verifier_only_passing_rollouts_become_examples(tmp_path: Path) -> None:
    env = _env(tmp_path)
    items = env.load_splits().train

    class NoVerifier:  # an environment without verify_example
        pass

    teacher_llm = ScriptedTeacher([PASSES])
    teacher = TeacherCall(teacher_llm, PromptLibrary([]), max_tokens=64)
    trajs = [_traj(items[0], "The build passed.", 0.0), _traj(items[2], "OK: the cache is warm.", 1.0)]
    res = asyncio.run(demonstrate(trajs, {i.id: i for i in items}, "# S\n", teacher, NoVerifier(), teacher_llm,
                                  limit=2, max_chars=400, seed=0))
    assert [it["content"] for it in res.items] == ["OK: the cache is warm."] and teacher_llm.prompts == []


STEPS = ReplyContract(starts_with="1. ", labels=("2. ", "3. "))  # three-steps' checks as a contract


def test_a_repair_that_holds_only_the_required_text_is_never_proposed() -> None:
    """three-steps suite run: `1. 1.` / `2. '1.` passed a numbered-list check and said nothing."""
    assert candidates("1.", STEPS) == []  # the student's reply says nothing: no repair of it
    repairs = candidates("Stop the service. Copy the data folder. Start the new version.", STEPS)
    assert "1. Stop the service.\n2. Copy the data folder.\n3. Start the new version." in repairs


def test_a_missing_prefix_is_put_on_the_reply_from_the_contract_not_from_the_feedback() -> None:
    """fewshot-format: its contract states the `ANSWER:` opening (the feedback's "did not start with 'ANSWER:'" is
    never read); the repaired reply passes the environment's own scorer."""
    from skillgrad.envs.fewshot_format.env import FewshotFormatEnv, score_reply

    item = Item(id="q", inputs={"question": "What is the capital of Thailand?"}, gold="Bangkok")
    contract = FewshotFormatEnv.reply_contract(None, item)  # type: ignore[arg-type]
    repaired = candidates("The capital of Thailand is Bangkok.", contract)
    assert score_reply(repaired[0], "Bangkok")[0] == 1.0 and repaired[0].startswith("ANSWER:")
    # a text the contract forbids is never put on a reply
    assert all("4. " not in c for c in candidates("Restart it.", ReplyContract(forbidden=("4. ",))))


def test_a_form_with_a_placeholder_is_filled_with_the_reply():
    from skillgrad.envs.tasks.checks import Check, score_checks
    from skillgrad.envs.tasks.contract import task_contract

    check = Check(op="tool_called", arg="create_ticket", key="title", value="projector")
    contract = task_contract("rule", [check], "", "")
    repairs = label_repairs("The projector in room Orion is broken.", contract)
    passing = [r for r in repairs if score_checks([check], r)[0] == 1.0]
    assert passing == [repairs[0]]  # tried first, and the only one that passes
    assert '"title": "The projector in room Orion is broken."' in passing[0]
    assert label_repairs('Mark said "hello".', ReplyContract(forms=("x: ...",)))[0] == 'x: Mark said "hello".'


def test_the_students_own_reply_is_repaired_on_tasks_the_teacher_is_not_asked_about(tmp_path: Path) -> None:
    env = _env(tmp_path)
    items = env.load_splits().train
    reason = "check failed: the reply must be one that starts with 'OK:'"
    trajs = [_traj(it, f"The {w} looks healthy today.", 0.0, reason)
             for it, w in zip(items, ("build", "deploy", "cache"), strict=True)]
    teacher_llm = ScriptedTeacher([WRONG])  # one teacher call (limit 1), and its reply fails the checks
    teacher = TeacherCall(teacher_llm, PromptLibrary([]), max_tokens=64)
    res = asyncio.run(demonstrate(trajs, {i.id: i for i in items}, "# Status\n", teacher, env, teacher_llm,
                                  limit=1, max_chars=400, seed=0, compact=True))
    assert len(teacher_llm.prompts) == 1  # the own-reply repairs cost no teacher call
    # the teacher's reply, repaired, on its task; then the student's own reply on exactly one other task
    repaired, own = [d for d in res.log if d["verified"]]
    assert repaired["reply"] == f"OK: {WRONG}" and own["item_id"] != repaired["item_id"]
    assert own["reply"].startswith("OK: The ") and own["reply"].endswith("looks healthy today.")
    assert [it["content"] for it in res.items] == [repaired["reply"], own["reply"]]


def test_a_reply_about_replies_is_never_a_demonstration(tmp_path: Path) -> None:
    # measured on review-sections: the teacher wrote "This is a fixed answer. The response must have a section
    # named 'Summary' ..."; spread over the labels it passed every check and the student copied it held out
    env = _env(tmp_path)
    items = env.load_splits().train
    about = "This is a fixed answer. The response must start with OK: and be short."
    teacher_llm = ScriptedTeacher([about])
    teacher = TeacherCall(teacher_llm, PromptLibrary([]), max_tokens=64)
    res = asyncio.run(demonstrate([_traj(items[0], "", 0.0, "check failed: the reply must be one that starts with "
                                         "'OK:'")], {i.id: i for i in items}, "# Status\n", teacher, env,
                                  teacher_llm, limit=1, max_chars=400, seed=0, compact=True))
    assert res.items == [] and all(not d["verified"] for d in res.log)
    assert f"OK: {about}" not in [d["reply"] for d in res.log]


def test_a_label_is_never_given_an_empty_piece_of_the_reply():
    # measured on three-steps: "1. Check ..." split at "1." gave the example "1. 1.\n2. Check ...\n3. ..."
    assert not [c for c in candidates("1. Check the manual. Then call them. Wait.", STEPS) if "1. 1.\n" in c]
    assert "1. Restart it.\n2. Check the cables now.\n3. Call the provider." in candidates(
        "Restart it. Check the cables now. Call the provider.", STEPS)


def test_a_demonstration_says_more_than_the_required_text_and_never_echoes_the_skills_heading(tmp_path: Path) -> None:
    # measured on support-signoff: the teacher's "Brightline Support" alone passed and 5 of 10 held-out replies
    # became just that; on tldr-status a repaired reply began with the skill's heading and every reply copied it
    env = _env(tmp_path)
    items = env.load_splits().train
    reason = "check failed: the reply must be one that starts with 'OK:'"
    skill = "# Build status notes\n\nAnswer status questions.\n"
    teacher_llm = ScriptedTeacher(["OK:", "OK: # Build status notes. The deploy finished."])
    teacher = TeacherCall(teacher_llm, PromptLibrary([]), max_tokens=64)
    trajs = [_traj(items[0], "", 0.0, reason), _traj(items[1], "", 0.0, reason)]
    res = asyncio.run(demonstrate(trajs, {i.id: i for i in items}, skill, teacher, env, teacher_llm, limit=2,
                                  max_chars=400, seed=0, compact=True))
    assert res.items == [] and not [d for d in res.log if d["verified"]]


def test_no_json_form_is_composed_from_the_checks_pieces(tmp_path: Path) -> None:
    # json-triage's real checks: the 135M teacher wrote no JSON and the student wrote prose. The earlier optimizer
    # composed `{"severity": "high", "component": "password reset"}` from the checks' pieces and a phrase of the
    # request, with a severity picked by a hash of the request (issue 30): words nobody wrote. Now nothing is made.
    row = json.loads((Path(__file__).resolve().parents[1] / "benchmarks/skills_suite/json-triage/tasks.jsonl")
                     .read_text(encoding="utf-8").splitlines()[0])
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps({**row, "split": "train"}) + "\n", encoding="utf-8")
    env = create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(path)}))
    item = env.load_splits().train[0]
    reply = "The reset email is late, a high priority problem."
    score = asyncio.run(env.verify_example(item, reply, ScriptedTeacher([])))
    from skillgrad.envs.tasks.checks import Check, score_checks
    reason = score_checks([Check(**c) for c in row["judge"]["checks"]], reply)[2]
    teacher_llm = ScriptedTeacher(["{{ error }} 1.0.2.3.x: the settings icon moved."])
    teacher = TeacherCall(teacher_llm, PromptLibrary([]), max_tokens=64)
    res = asyncio.run(demonstrate([_traj(item, reply, score, reason)], {item.id: item}, "# Bug triage\n", teacher,
                                  env, teacher_llm, limit=1, max_chars=400, seed=0, compact=True))
    assert res.items == []
    assert not any("\"severity\"" in d["reply"] for d in res.log)


# Replies from the suite's push-length run (the student's template the guard then blocked: 6 of 6 near-duplicates)
TEMPLATE = [("Write a push notification: the Seattle store opens an hour earlier during the holidays.",
             "Hey there, I'm so glad you're interested in Seattle!"),
            ("Write a push notification: the app now shows trail conditions from other hikers.",
             "Hey there, I'm so glad you're interested in trail conditions!")]


def test_a_reply_that_repeats_another_examples_reply_for_another_task_is_a_repeat() -> None:
    (q1, r1), (q2, r2) = TEMPLATE
    assert repeats(q2, r2, [(q1, r1)]) == r1
    assert repeats(q2, "Trail conditions from other hikers are now live in the app: check before you go.",
                   [(q1, r1)]) == ""
    assert repeats(q1, r1, [(q1, r2)]) == ""  # the same task may be shown again (a replaced example)
    # labels every reply must hold are not what makes two reviews alike (suite review-sections, same labels)
    labels = ["Summary", "Risks", "Verdict"]
    a = ("Review this PR: adds a cache in front of the pricing service.",
         "Summary: Adds a cache for prices.\nRisks: Stale prices for a day.\nVerdict: request changes")
    b = ("Review this PR: logs the full request body on every 500 error.",
         "Summary: Logs request bodies on errors.\nRisks: Secrets and personal data land in logs.\nVerdict: request "
         "changes")
    assert repeats(*b, [a], labels) == ""


def test_a_passing_reply_that_repeats_an_example_is_not_taken(tmp_path: Path) -> None:
    rows = [{"task_id": f"p{i}", "task": q, "judge": {"kind": "rule", "checks": [{"op": "max_chars", "arg": "140"}]}}
            for i, (q, _) in enumerate(TEMPLATE)]
    (tmp_path / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    env = create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(tmp_path / "tasks.jsonl"),
                                                "split_ratio": "1:0:0"}))
    items = env.load_splits().train
    by_q = {i.inputs["question"]: i for i in items}
    (q1, r1), (q2, r2) = TEMPLATE
    skill = f"# Push\n\n## Examples\nQ: Write a push notification: tents are 30% off.\nA: {r1.replace('Seattle', 'tents')}\n"
    fresh = "Early hours in Seattle: the store opens at 8 all holiday season."
    trajs = [_traj(by_q[q2], r2, 1.0), _traj(by_q[q1], fresh, 1.0)]
    res = asyncio.run(demonstrate(trajs, {i.id: i for i in items}, skill, None, object(), None,  # type: ignore[arg-type]
                                  limit=2, max_chars=400, seed=0))
    assert [it["content"] for it in res.items] == [fresh]
    why = {d["reply"]: d["why"] for d in res.log}
    assert why[r2].startswith("repeats another example's reply")


def test_a_teacher_other_than_the_student_corrects_more_failures_and_its_corrections_lead(tmp_path: Path) -> None:
    """With a teacher that is another model (an agent, an API model), the demonstrate stage asks it about twice as
    many failed tasks, and its verified corrections come before the student's own passing replies, so the learning
    rate's budget takes them first."""
    rows = [{"task_id": f"t{i}", "task": f"Give me the status of service {name}.", "judge": {"kind": "rule", "checks": [
        {"op": "regex", "arg": "^OK:"}, {"op": "max_chars", "arg": "200"}]}}
        for i, name in enumerate(["alpha", "beta", "gamma", "delta", "epsilon", "zeta"])]
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    env = create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(path), "split_ratio": "1:0:0"}))
    items = env.load_splits().train
    trajs = [_traj(it, f"OK: {it.inputs['question'][-7:]} is up.", 1.0) if i < 2
             else _traj(it, "It is running fine.", 0.0, "check: reply should start with 'OK:'")
             for i, it in enumerate(items)]
    corrected = [f"OK: service {n} answers every health check." for n in ("one", "two", "three", "four")]
    teacher_llm = ScriptedTeacher(list(corrected))
    teacher = TeacherCall(teacher_llm, PromptLibrary([]), max_tokens=64)
    res = asyncio.run(demonstrate(trajs, {i.id: i for i in items}, "# S\n", teacher, env, teacher_llm, limit=2,
                                  max_chars=400, seed=0, corrections=4, teacher_first=True))
    assert len(teacher_llm.prompts) == 4  # every failed task, not `limit` of them
    sources = [it["demonstration"]["source"] for it in res.items]
    assert sources == ["teacher_correction"] * 4 + ["passing_rollout"] * 2
    assert {it["content"] for it in res.items[:4]} == set(corrected)
    # the default (a teacher that is the student's own model): `limit` corrections, the student's replies first
    teacher_llm = ScriptedTeacher(list(corrected))
    res = asyncio.run(demonstrate(trajs, {i.id: i for i in items}, "# S\n", TeacherCall(
        teacher_llm, PromptLibrary([]), max_tokens=64), env, teacher_llm, limit=2, max_chars=400, seed=0))
    assert len(teacher_llm.prompts) == 2
    assert [it["demonstration"]["source"] for it in res.items][:2] == ["passing_rollout"] * 2
