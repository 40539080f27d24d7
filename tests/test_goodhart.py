"""The Goodhart guard (engine/goodhart.py): checker text copied into a skill is found, degenerate replies are
found, and legitimate rules, examples and replies pass. The known failure of issue 17 is reproduced first."""

import json
from pathlib import Path

import pytest

from skillgrad.engine.goodhart import (
    Guard,
    _is_gold_answer,
    checker_text_hits,
    checker_texts_of_items,
    degenerate_kind,
    degenerate_replies,
    sample_replies,
)
from skillgrad.envs.base import ReplyContract, Trajectory
from skillgrad.envs.tasks.checks import Check, score_checks
from skillgrad.envs.tasks.contract import item_contract
from skillgrad.envs.tasks.env import to_item
from skillgrad.envs.tasks.records import TaskRecord, read_tasks

SUITE = Path(__file__).resolve().parents[1] / "benchmarks" / "skills_suite"
# Held-out replies of real suite runs (embedded SmolLM2-135M student), by item id: content-free gains the guard
# must name, and replies in a required form it must let through (tests/fixtures/suite_replies.json)
REPLIES = json.loads((Path(__file__).parent / "fixtures" / "suite_replies.json").read_text(encoding="utf-8"))

PASTED = "(a reply that is at most 1200 characters long)}"


def _task(i, checks, text="Summarise the incident for the channel."):
    return TaskRecord.model_validate({"task_id": f"t{i}", "task": f"{text} ({i})",
                                      "judge": {"kind": "rule", "checks": checks}})


def _traj(i, answer, *, question=None, gold="", system="You are a helpful assistant.\n\n# Status updates"):
    return Trajectory(item_id=f"t{i}", answer=answer, question=question or f"Question number {i} about topic {i}",
                      gold=gold, messages=[{"role": "system", "content": system}])


def test_the_known_failure_is_refused_and_blocked():
    # the run of issue 17: the teacher turned a check description into a chat-turn example; every reply became it
    checks = [{"op": "max_chars", "arg": "1200"}]
    items = [to_item(_task(i, checks)) for i in range(6)]
    guard = Guard.build(checker_texts=checker_texts_of_items(items, item_contract)[0])
    edit = f"Q: Summarise the incident. A: {PASTED}"
    assert checker_text_hits(edit, guard)
    # ... and the replies it produced pass the real scorer yet are degenerate
    trajs = [_traj(i, PASTED, gold=it.gold) for i, it in enumerate(items)]
    assert all(score_checks([Check(op="max_chars", arg="1200")], t.answer)[0] == 1.0 for t in trajs)
    assert "same short reply for 6 of 6" in degenerate_replies(trajs)


def test_a_copied_regex_or_description_is_refused():
    regex = r"[Rr]ecommendation\s*[:=]"
    items = [to_item(_task(i, [{"op": "regex", "arg": regex}])) for i in range(3)]
    texts, regexes = checker_texts_of_items(items, item_contract)
    guard = Guard.build(checker_texts=texts, regexes=regexes)
    assert any("regex" in h for h in checker_text_hits(rf"Always write {regex} in the reply.", guard))
    # the check as the teacher reads it, copied: known from the contract's `checker` words, not from their wording
    assert checker_text_hits("A: (the reply must be one that contains 'Recommendation')", guard)
    # the teacher sees the regex in words, never the regex itself
    assert regex not in items[0].gold and "Recommendation" in items[0].gold


def test_the_analyst_prompts_own_example_is_refused():
    prompt = "Example of a good edit:\nQ: Give me the status of the web server. A: OK: the web server is up.\n"
    guard = Guard.build(prompt_texts=[prompt])
    assert checker_text_hits("Q: Give me the status of the web server.\nA: OK: the web server is up.", guard)


def test_legitimate_rules_and_examples_pass():
    checks = [{"op": "regex", "arg": r"\ATL;DR: \S"}, {"op": "max_chars", "arg": "400"}]
    items = [to_item(_task(i, checks)) for i in range(4)]
    texts, regexes = checker_texts_of_items(items, item_contract)
    guard = Guard.build(checker_texts=texts, regexes=regexes,
                        prompt_texts=["Propose one edit that helps the student on the failed task below."])
    for edit in ["Start every update with a first line `TL;DR: <one sentence>`, then the details.",
                 "Q: Write a status update: the index rebuild finished.\n"
                 "A: TL;DR: The index rebuild is done.\n   Latency is back to normal.",
                 "Keep updates under 400 characters."]:
        assert checker_text_hits(edit, guard) == [], edit


def test_varied_or_long_replies_are_not_degenerate():
    varied = [_traj(i, f"TL;DR: service {i} is back after the {w} fix.") for i, w in enumerate("abcdef")]
    assert degenerate_replies(varied) is None
    refusal = "I can't help with that. Credentials are only issued by the security team: security@corp.example."
    fixed = [_traj(i, refusal) for i in range(5)]
    for t in fixed:  # a fixed policy sentence the task requires is the contract, not a repeat
        t.contract = ReplyContract(required=(refusal,))
    assert degenerate_replies(fixed) is None
    # ... the same 93 characters for every task when the task does not require them do not vary with the task
    assert degenerate_kind(degenerate_replies([_traj(i, refusal) for i in range(5)]) or "") == "shared opening"
    assert degenerate_replies([_traj(i, "OK") for i in range(2)]) is None  # too few to say
    # measured on the suite: content-free lists that pass every list check, each a little different
    hollow = ["1. 1.\n2. '1.\n3. '4.\n'5.\n6. '7", "1. 1.\n2. '1.\n3. '2.\n4. '5.\n'6", "1. 2.\n'3. '4.\n5. '6"]
    assert "hold no words" in degenerate_replies([_traj(i, r) for i, r in enumerate(hollow)])


def test_a_bare_value_that_is_the_tasks_gold_answer_is_content_not_a_wordless_reply():
    """The few-shot baseline of the facts demo answers `9219`, `1987`: the facts' own gold values (a start from it
    was blocked as "17 of 30 replies hold no words"). A wordless reply without the gold stays degenerate."""
    golds = ["9219", "1987", "42", "7", "310"]
    answers = [_traj(i, g) for i, g in enumerate(golds)]
    for t, g in zip(answers, golds, strict=True):
        t.contract = ReplyContract(gold=(g,))
    assert degenerate_replies(answers) is None
    wrong = [_traj(i, "12") for i in range(5)]
    for t, g in zip(wrong, golds, strict=True):
        t.contract = ReplyContract(gold=(g,))
    assert degenerate_replies(wrong) is not None


def test_replies_that_restate_the_skill_or_the_task_are_degenerate():
    system = "You are a helpful assistant.\n\n# Status updates\nWrite status updates for the channel about incidents."
    restating = [_traj(i, f"Write status updates for the channel about incidents {i}.", system=system)
                 for i in range(4)]
    assert "skill's instructions" in degenerate_replies(restating)
    echo = [_traj(i, f"Please summarise the outage of service {i} for me", question=f"Please summarise the "
                  f"outage of service {i} for me.") for i in range(4)]
    assert "the task" in degenerate_replies(echo)
    # the request handed back in the required form is a restatement too, not only a word-for-word echo (issue 30)
    tldr = ReplyContract(starts_with="TL;DR: ")
    built = [_traj(i, f"TL;DR: the DNS switch for region {i} is complete.",
                   question=f"Write a status update: the DNS switch for region {i} is complete.") for i in range(4)]
    for t in built:
        t.contract = tldr
    assert "the task's request" in degenerate_replies(built)
    # ... while an update that says what the request does not (a number, a cause, what comes next) is none
    news = ["3 stale records were purged", "TTLs drop to 300 s tomorrow", "the old resolver retires Friday",
            "cache hit rate is back to 97%"]
    said = [_traj(i, f"TL;DR: region {i} resolves through the new servers; {news[i]}.",
                  question=f"Write a status update: the DNS switch for region {i} is complete.") for i in range(4)]
    for t in said:
        t.contract = tldr
    assert degenerate_replies(said) is None


def _suite_trajs(replies: dict[str, str]) -> list[Trajectory]:
    """The replies as the tasks environment records them: with the task and the literal text its checks require."""
    tasks = {t.task_id: t for p in SUITE.glob("*/tasks.jsonl") for t in read_tasks(p)}
    return [Trajectory(item_id=i, answer=a, question=tasks[i].task, contract=item_contract(to_item(tasks[i])))
            for i, a in replies.items()]


@pytest.mark.parametrize("name", list(REPLIES["degenerate"]))
def test_measured_content_free_gains_are_degenerate(name):
    why = degenerate_replies(_suite_trajs(REPLIES["degenerate"][name]))
    kinds = ("restated text",) if "restating" in name else ("shared opening", "near-duplicates", "shared run")
    assert why and degenerate_kind(why) in kinds, why


def test_one_stock_sentence_under_every_label_is_degenerate():
    # the Summary lines differ, so no reply is a near-duplicate as a whole; 6 of 6 hold the same 15+ words
    name = next(n for n in REPLIES["degenerate"] if n.startswith("review-sections, one stock"))
    why = degenerate_replies(_suite_trajs(REPLIES["degenerate"][name]))
    assert why and degenerate_kind(why) == "shared run" and "6 of 6" in why, why


def test_passing_replies_that_are_their_request_plus_one_stock_sentence_are_degenerate():
    # every reply adds "Grab your order before Sunday night." (8 of 10 to their request), so none alone restates it
    (name, replies), = REPLIES["stock_line"].items()
    trajs = _suite_trajs(replies)
    for t in trajs:
        t.hard = 1.0
    why = degenerate_replies(trajs)
    assert why and degenerate_kind(why) == "restated text" and "8 of 10" in why, why
    for t in trajs:  # the same replies failing gained nothing: no template to refuse
        t.hard = 0.0
    assert degenerate_replies(trajs) is None


@pytest.mark.parametrize("name", list(REPLIES["legitimate"]))
def test_measured_replies_in_a_required_form_are_not_degenerate(name):
    # e.g. every ticket-tool reply opens with the same 62-character `<tool_call>{"name": "create_ticket", ...`
    assert degenerate_replies(_suite_trajs(REPLIES["legitimate"][name])) is None


def test_a_fixed_refusal_followed_by_the_tasks_own_words_is_not_degenerate():
    asked = {"01": "Global admin rights for the auditor need an approved access request",
             "02": "Your former colleague's laptop and documents are released by his manager and",
             "03": "Removing the endpoint detection agent from the design Macs needs an exception from",
             "04": "The deploy pipeline's service account password is never shared; ask",
             "05": "Signing you into the CFO's Outlook is not possible; delegated calendar access comes from",
             "06": "A password that never expires is against policy; exceptions go to"}
    replies = {f"refusal-policy-test-{k}": f"I can't help with that. {v} security@corp.example." for k, v in
               asked.items()}
    trajs = _suite_trajs(replies)
    assert degenerate_replies(trajs) is None
    # the same sentence and address with nothing of the task after them is a repeat
    same = _suite_trajs({i: "I can't help with that. Please contact the security team for this kind of request "
                            "so they can review it: security@corp.example." for i in replies})
    assert degenerate_kind(degenerate_replies(same) or "") == "shared opening"


def test_sample_replies_show_gains_first():
    before = [Trajectory(item_id=f"t{i}", answer=f"old {i}", hard=0.0, question=f"q{i}") for i in range(4)]
    after = [Trajectory(item_id=f"t{i}", answer=f"new {i}", hard=float(i == 2), question=f"q{i}") for i in range(4)]
    s = sample_replies(before, after, k=2)
    assert [x["item_id"] for x in s] == ["t2", "t0"] and s[0]["before"]["reply"] == "old 2"
    assert s[0]["after"] == {"hard": 1.0, "reply": "new 2"}


def test_junk_slow_update_text_is_named():
    from skillgrad.engine.goodhart import junk_text

    for junk in ['"..."', "...", "2026-11-24T06:50:55Z", "12:30", "TODO", "", "  ok  ", "N/A"]:
        assert junk_text(junk), junk
    # a copy of the checker's words, known from the items' contracts
    items = [to_item(_task(i, [{"op": "max_chars", "arg": "1200"}])) for i in range(2)]
    guard = Guard.build(checker_texts=checker_texts_of_items(items, item_contract)[0])
    assert junk_text("A reply that is at most 1200 characters long, always.", guard)
    assert junk_text("- Start each update with a one-line TL;DR, then the details.", guard) is None


def test_the_update_stage_refuses_a_copied_regex_and_reports_it():
    import asyncio

    from skillgrad.engine.modes import MODES
    from skillgrad.engine.stages.update import update

    regex = r"[Rr]ecommendation\s*[:=]"
    items = [to_item(_task(i, [{"op": "regex", "arg": regex}])) for i in range(3)]
    texts, regexes = checker_texts_of_items(items, item_contract)
    guard = Guard.build(checker_texts=texts, regexes=regexes)
    edits = [{"op": "append", "content": f"Match {regex} in every reply."},
             {"op": "append", "content": "End every reply with a line `Recommendation: <what to do>`."}]
    skill = "# Reviews\n"
    upd = asyncio.run(update(skill, edits, None, mode=MODES["patch"], guard=guard))  # type: ignore[arg-type]
    statuses = [o["status"] for o in upd.report["outcomes"]]
    assert statuses[0] == "refused_checker_text" and statuses[1].startswith("applied")
    assert upd.report["refused_checker_text"] == 1 and regex not in upd.candidate
    assert "Recommendation: <what to do>" in upd.candidate
    allowed = asyncio.run(update(skill, edits, None, mode=MODES["patch"], guard=guard,  # type: ignore[arg-type]
                                 allow_checker_text=True))
    assert regex in allowed.candidate and "regex" in allowed.report["outcomes"][0]["checker_text"]
    rewrite = asyncio.run(update(skill, [{"new_skill": f"# Reviews\n{regex}\n"}], None,  # type: ignore[arg-type]
                                 mode=MODES["full_rewrite_minibatch"], guard=guard))
    assert rewrite.candidate is None and rewrite.rewrite["status"] == "refused_checker_text"


def test_the_update_stage_refuses_a_rule_that_says_nothing():
    """The facts demo (seed 42) accepted `1.0.2.3.4` as a rule when one more validation answer came out right."""
    import asyncio

    from skillgrad.engine.modes import MODES
    from skillgrad.engine.stages.update import update

    edits = [{"op": "append", "content": "1.0.2.3.4"}, {"op": "append", "content": "N/A"},
             {"op": "append", "content": "Answer with the exact value from the examples, nothing else."}]
    upd = asyncio.run(update("# Facts\n", edits, None, mode=MODES["patch"]))  # type: ignore[arg-type]
    statuses = [o["status"] for o in upd.report["outcomes"]]
    assert statuses.count("refused_no_content") == 2 and upd.report["refused_no_content"] == 2
    assert "1.0.2.3.4" not in upd.candidate and "exact value" in upd.candidate


def test_the_report_shows_what_the_gain_is_made_of(tmp_path):
    from skillgrad.runs.report_data import RunData
    from skillgrad.runs.report_honest import honest_blocks
    from skillgrad.runs.report_render import render_markdown

    samples = sample_replies([Trajectory(item_id="t1", answer="Sure, noted.", hard=0.0, question="Desk 3 broke")],
                             [Trajectory(item_id="t1", answer='<tool_call>{"name": "create_ticket"}</tool_call>',
                                         hard=1.0, question="Desk 3 broke")])
    data = RunData(tmp_path, summary={"sample_replies": samples, "refused_checker_text": 2, "degenerate_blocked": 1,
                                      "degenerate_by_kind": {"shared opening": 1}})
    md = render_markdown("run", honest_blocks(data, []), "assets")
    assert "What the gain is made of" in md and "Sure, noted." in md and "create_ticket" in md
    assert "2 edit(s) refused" in md and "1 candidate(s) blocked" in md and "shared opening 1" in md


def test_a_subject_checks_words_copied_from_its_description_are_checker_text():
    # three-steps: an example that quotes the subject check as the teacher reads it is a copy of the checker; the
    # guard knows it from the task's contract (its `checker` words), not from the wording of checks in general
    task = next(t for t in read_tasks(SUITE / "three-steps" / "tasks.jsonl"))
    guard = Guard.build(checker_texts=checker_texts_of_items([to_item(task)], item_contract)[0])
    said = task.judge.checks[-1].describe()  # "contains one of 'evening', 'slow', ..."
    copied = f"1. Check your router for anything that {said}\n2. Restart it.\n3. Test again."
    assert any("checker text" in h for h in checker_text_hits(copied, guard)), said
    assert checker_text_hits("1. Pick one of the two bands.\n2. Restart the router.\n3. Test the speed.", guard) == []


def _request(task: str) -> str:
    """A suite request without its leading instruction ("Write a status update: ...")."""
    import re

    return re.sub(r"^\s*[A-Za-z ]{1,30}:\s+", "", task.strip(), count=1)


RESTATEMENTS = {  # issue 30's content-free replies: the request put in each skill's required form
    "tldr-status": lambda r: f"TL;DR: {r}",
    "review-sections": lambda r: f"Summary: {r}\nRisks: None.\nVerdict: approve",
    "refusal-policy": lambda r: f"I can't help with that: {r}. Write to security@corp.example.",
    "ticket-tool": lambda r: '<tool_call>{"name": "create_ticket", "arguments": {"title": %s}}</tool_call>'
                             % json.dumps(r),
    "three-steps": lambda r: "1. " + "\n2. ".join(r.split(". ")),
    "push-length": lambda r: r,
}


@pytest.mark.parametrize("skill", sorted(RESTATEMENTS))
def test_replies_that_restate_their_request_in_the_required_form_are_degenerate(skill):
    # the development suite's own requests (benchmarks/skills_suite): the thresholds are set here, never on the
    # report suite
    tasks = read_tasks(SUITE / skill / "tasks.jsonl")
    trajs = [Trajectory(item_id=t.task_id, question=t.task, answer=RESTATEMENTS[skill](_request(t.task)),
                        contract=item_contract(to_item(t))) for t in tasks]
    why = degenerate_replies(trajs)
    assert why and degenerate_kind(why) == "restated text" and "request" in why, why


def test_a_shared_template_is_measured_among_the_replies_long_enough_to_show_one():
    # 4 of 10 replies open with the same long text; the other 6 are too short to show an opening at all. Measured
    # over all 10 the template held no majority and passed; among the 4 it can measure, it is all of them.
    stock = "Thank you for reaching out to our support team about this matter today"
    long_ones = [_traj(i, f"{stock}, item {i} is on its way.") for i in range(4)]
    short = [_traj(i + 4, f"Done: {w}.") for i, w in enumerate(["alpha", "beta", "gamma", "delta", "eps", "zeta"])]
    why = degenerate_replies(long_ones + short)
    assert why and degenerate_kind(why) == "shared opening" and "4 of 4" in why, why


def test_a_tool_call_is_no_restatement_of_a_requirement_that_quotes_its_scaffold():
    # ticket-tool with an agent teacher (2026-11-27), step 2: the candidate's six validation replies passed every
    # check and were blocked as "5 of 6 replies restate the task's requirement", whose text quotes the call's form
    form = '<tool_call>{"name": "create_ticket", "arguments": {"title": "..."}}</tool_call>'
    asked = [("The microwave in the kitchen sparks.", "Microwave sparks", "microwave"),
             ("The door of meeting room Vega squeaks loudly.", "Squeaking door", "door"),
             ("The TV in the lobby shows no signal.", "TV signal lost", "tv"),
             ("The toilet on floor 5 keeps running.", "Toilet running", "toilet"),
             ("The shower in the gym has no hot water.", "Fridge is not available for shower", "shower"),
             ("A power outlet at desk 9C is dead.", "Power outlet dead", "outlet")]
    trajs = []
    for i, (question, title, word) in enumerate(asked):
        gold = (f"no fixed answer; the reply calls the tool 'create_ticket' with a 'title' argument that mentions "
                f"'{word}' (a chat reply writes the call as '{form}')")
        trajs.append(Trajectory(item_id=f"v{i}", question=question, gold=gold, hard=1.0,
                                answer=form.replace("...", title), contract=ReplyContract(forms=(form,))))
    assert degenerate_replies(trajs) is None
    # the requirement restated beyond the form is still found
    echoed = [Trajectory(item_id=t.item_id, question=t.question, gold=t.gold, contract=t.contract,
                         answer=form.replace("...", t.gold[:120])) for t in trajs]
    assert "restate the task's requirement" in (degenerate_replies(echoed) or "")


# ------------------------------------------------- replies a content check judges (the label skills of the suite)
LABEL_SKILLS = ("animal-class", "team-route", "book-title")  # a gold value per task: `equals` or a `fact`


def _label_tasks(skill: str, split: str) -> list[TaskRecord]:
    return [t for t in read_tasks(SUITE / skill / "tasks.jsonl") if t.split == split]


@pytest.mark.parametrize("name", list(REPLIES["content_checked"]))
def test_replies_a_content_check_passes_are_content_not_restatements_or_wordless(name):
    # measured on the development suite: the guard before this rule refused each of these sets (the reason is in the
    # name): a gold title holds the request's words and the requirement quotes it, a bare label has one word
    replies = REPLIES["content_checked"][name]
    trajs = _suite_trajs(replies)
    assert degenerate_replies(trajs) is None, name
    for t in trajs:  # the same replies without the contract's gold (no content check to establish a pass)
        t.contract = ReplyContract()
    assert degenerate_replies(trajs) is not None, name


def test_one_label_for_items_whose_gold_is_that_label_is_the_answer_not_a_constant():
    mammals = [t for t in _label_tasks("animal-class", "train") if t.judge.reference == "mammal"]
    bird = next(t for t in _label_tasks("animal-class", "train") if t.judge.reference == "bird")
    trajs = _suite_trajs({t.task_id: t.judge.reference for t in [*mammals, bird]})
    assert degenerate_replies(trajs) is None  # 5 of 6 `mammal`, each a mammal's gold
    trajs[-1].answer = "mammal"  # ... and once for the bird: one reply whatever the gold
    assert degenerate_kind(degenerate_replies(trajs) or "") == "same short reply"


def _scored(replies: dict[str, str]) -> list[Trajectory]:
    trajs = _suite_trajs(replies)
    tasks = {t.task_id: t for p in SUITE.glob("*/tasks.jsonl") for t in read_tasks(p)}
    for t in trajs:  # scored by the task's own checks, as a run's validation replies are
        t.hard = score_checks(tasks[t.item_id].judge.checks, t.answer)[0]
    return trajs


def test_a_label_reply_for_most_items_is_degenerate_only_where_it_passes_no_more_than_that_label_alone():
    (name, replies), = REPLIES["label_constant"].items()
    unscored = degenerate_replies(_suite_trajs(replies))  # no pass recorded: the label is all there is
    assert degenerate_kind(unscored or "") == "same short reply" and "IT support" in unscored, unscored
    # scored: the 2 `Team: network` replies pass their tasks, where `Team: IT support` (no such team) passes none
    # of the 6, so the replies depend on the task beyond that label (before: blocked as a constant)
    trajs = _scored(replies)
    assert sum(t.hard for t in trajs) == 2 and degenerate_replies(trajs) is None
    # the same label where the other replies pass nothing beyond it stays a constant
    for t in trajs:
        if t.answer == "Team: network":
            t.answer, t.hard = "Team: hardware", 0.0
    assert degenerate_kind(degenerate_replies(trajs) or "") == "same short reply"


def test_a_constant_label_is_degenerate_though_it_matches_some_golds():
    for skill in LABEL_SKILLS:  # every gold reply of a split given to every task of it (e.g. always `mammal`)
        for split in ("val", "test"):
            tasks = _label_tasks(skill, split)
            for gold in {t.judge.reference for t in tasks}:
                trajs = _suite_trajs({t.task_id: gold for t in tasks})
                for t in trajs:
                    t.hard = float(t.answer == next(x.judge.reference for x in tasks if x.task_id == t.item_id))
                assert degenerate_kind(degenerate_replies(trajs) or "") == "same short reply", (skill, gold)


@pytest.mark.parametrize("skill", LABEL_SKILLS)
def test_a_label_tasks_request_restated_is_still_degenerate(skill):
    form = "Team: {}" if skill == "team-route" else "{}"  # the request in the required form, whole or trimmed
    for split in ("val", "test"):
        tasks = _label_tasks(skill, split)
        for restate in (lambda task: task, _request):
            why = degenerate_replies(_suite_trajs({t.task_id: form.format(restate(t.task)) for t in tasks}))
            assert degenerate_kind(why or "") == "restated text", (split, why)


# ------------------------------------------------- a reference reply in its own form (the suite's room-booking skill)
def _recorded(split: str, answer) -> list[Trajectory]:
    """room-booking replies as a run records them: the item's gold is the requirement in words, which quotes the
    task's hand-written reference reply."""
    tasks = [t for t in read_tasks(SUITE / "room-booking" / "tasks.jsonl") if t.split == split]
    return [Trajectory(item_id=t.task_id, answer=answer(t), question=t.task, gold=to_item(t).gold, hard=1.0,
                       contract=item_contract(to_item(t))) for t in tasks]


@pytest.mark.parametrize("split", ["val", "test"])
def test_the_reference_reply_in_its_json_form_is_the_answer_not_a_restated_requirement(split):
    # before: "6 of 6 replies restate the task's requirement": the JSON keys beyond the gold values were read as
    # words of the requirement, which quotes the reference
    assert degenerate_replies(_recorded(split, lambda t: t.judge.reference)) is None
    assert degenerate_replies(_recorded(split, lambda t: t.judge.reference.replace('", "', '","'))) is None
    # the request restated, bare or inside the JSON form, is still found
    for restate in (lambda t: t.task, lambda t: '{"room": "%s"}' % t.task):
        assert degenerate_kind(degenerate_replies(_recorded(split, restate)) or "") == "restated text"


def test_a_reply_with_the_references_keys_but_not_its_values_is_not_excused_as_the_answer():
    trajs = _recorded("val", lambda t: t.judge.reference)
    other = {t.item_id: t.answer for t in trajs}
    for i, t in enumerate(trajs):  # every reply carries another task's values
        t.answer = other[trajs[(i + 1) % len(trajs)].item_id]
    assert not any(_is_gold_answer(t) for t in trajs)
