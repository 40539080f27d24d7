"""A worked example is asked without the opening every training request of the step shares
(engine/proposers/wording.py). The requests are the review-sections suite skill's training tasks; its held-out
requests are worded otherwise ("Can you look at this change? ..."), and the same three verified examples scored
0.40 held-out asked "Review this PR: <change>" and 0.90 asked "<change>"."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from skillgrad.config.schema import EnvSection
from skillgrad.engine.gate.tiebreak import unseen
from skillgrad.engine.prompts import PromptLibrary
from skillgrad.engine.proposers.wording import Wordings, asks, example_request, shared_opening
from skillgrad.engine.teacher import TeacherCall
from skillgrad.envs.base import Trajectory
from skillgrad.envs.registry import create_env
from skillgrad.models.base import Completion, Usage
from tests.proposer_helpers import demonstrate

REVIEWS = [
    "Review this PR: renames the `user_id` column to `account_id` in one migration.",
    "Review this PR: adds a cache in front of the pricing service with a 24 hour TTL.",
    "Review this PR: makes the email worker process jobs in parallel with 32 threads.",
    "Review this PR: makes the CSV importer skip rows that fail validation silently.",
    "Review this PR: stores uploaded files on local disk instead of object storage.",
]
# a passing reply of the run (review-sections, step 1, a repair of the student's own reply)
PASSING = ("Summary: The CSV importer is designed to handle errors gracefully.\n"
           "Risks: This can be a serious issue in production environments where data quality matters.\n"
           "Verdict: To fix this issue, you should consider rewriting the importer.")


def test_the_opening_every_request_shares_is_found_and_left_out() -> None:
    assert shared_opening(REVIEWS) == "Review this PR:"
    assert example_request(REVIEWS[3], "Review this PR:") == \
        "Makes the CSV importer skip rows that fail validation silently."
    pushes = ["Write a push notification: new waterproof hiking boots are in stock.",
              "Write a push notification: your order of trekking poles has shipped.",
              "Write a push notification: sleeping bags are 25% off until Sunday.",
              "Write a push notification: the fall catalogue is live in the app."]
    assert shared_opening(pushes) == "Write a push notification:"
    assert example_request(REVIEWS[0], "") == REVIEWS[0]  # no opening: the request as it is


def test_no_opening_without_a_sentence_or_label_end_enough_requests_or_words_after_it() -> None:
    support = ["Can I change the delivery address of my order?", "Can I buy a gift card for a friend?",
               "Can I cancel my order? I placed it an hour ago.", "Can I pay with PayPal?"]
    assert shared_opening(support) == ""  # "Can I" ends no sentence: it is part of each request
    assert shared_opening(REVIEWS[:3]) == ""  # three requests alike can be chance
    assert shared_opening([*REVIEWS, "Review this PR: bumps ORM."]) == ""  # 3 words after it at least
    assert shared_opening([*REVIEWS, "Can you look at this change? The mobile app stores the token."]) == ""
    assert shared_opening(["Files I named:\n\na.py:\n```x```\n\nFix the bug in a.py please"] * 5) == ""


def test_examples_are_asked_with_the_opening_and_without_in_turn() -> None:
    # json-triage (this round): asked only without "Triage:", the student named "triage" as the component of 3 of 6
    # validation reports, which open with "Triage:" like the training ones
    w = Wordings("Review this PR:", [])
    asked = [w.ask(q) for q in REVIEWS[:4]]
    assert asked == [example_request(REVIEWS[0], "Review this PR:"), REVIEWS[1],
                     example_request(REVIEWS[2], "Review this PR:"), REVIEWS[3]]
    # the skill's examples count: two asked with the opening already, so the next two are asked without it
    w = Wordings("Review this PR:", REVIEWS[:2])
    assert [w.ask(q) for q in REVIEWS[2:4]] == [example_request(q, "Review this PR:") for q in REVIEWS[2:4]]
    assert Wordings("", []).ask(REVIEWS[0]) == REVIEWS[0]


def test_an_example_asked_so_is_still_its_tasks_example() -> None:
    assert asks(REVIEWS[0], "Renames the `user_id`  column to `account_id` in one migration.")
    assert asks(REVIEWS[0], REVIEWS[0].upper())
    assert not asks(REVIEWS[0], "in one migration.")  # a short tail is no request
    assert not asks(REVIEWS[1], "Renames the `user_id` column to `account_id` in one migration.")
    skill = "# S\n\n## Examples\nQ: Renames the `user_id` column to `account_id` in one migration.\nA: Summary: x\n"
    trajs = [Trajectory(item_id=f"t{i}", question=q, hard=1.0) for i, q in enumerate(REVIEWS[:2])]
    assert [t.item_id for t in unseen(trajs, skill)] == ["t1"]  # the tie-break leaves the example's task out


class _NoTeacher:
    name, context_window, supports_vision, is_agent = "scripted:none", 100_000, False, False

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    async def complete(self, messages: list[dict[str, Any]], **_: Any) -> Completion:
        return Completion(text="{}", usage=Usage(1, 1))


def test_a_demonstration_is_asked_without_the_shared_opening_and_not_proposed_again(tmp_path: Path) -> None:
    checks = [{"op": "section_present", "arg": x} for x in ("Summary", "Risks", "Verdict")]
    rows = [{"task_id": f"r{i}", "task": q, "judge": {"kind": "rule", "checks": checks}} for i, q in enumerate(REVIEWS)]
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    env = create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(path), "split_ratio": "1:0:0"}))
    items = env.load_splits().train
    trajs = [Trajectory(item_id=it.id, question=it.inputs["question"], answer=PASSING if it.id == "r3" else "",
                        hard=1.0 if it.id == "r3" else 0.0, fail_reason="" if it.id == "r3" else "x")
             for it in items]
    llm = _NoTeacher()
    teacher = TeacherCall(llm, PromptLibrary([]), max_tokens=64)
    res = asyncio.run(demonstrate(trajs, {i.id: i for i in items}, "# S\n", teacher, env, llm, limit=1,
                                  max_chars=1200, seed=0))
    assert [it["target"] for it in res.items] == ["Makes the CSV importer skip rows that fail validation silently."]
    skill = f"# S\n\n## Examples\nQ: {res.items[0]['target']}\nA: Summary: x\n"
    again = asyncio.run(demonstrate(trajs, {i.id: i for i in items}, skill, teacher, env, llm, limit=1,
                                    max_chars=1200, seed=0))
    assert all(it["demonstration"]["item_id"] != "r3" for it in again.items)


# review-sections run (this round), step 2: the passing rollout that made 6 of 6 validation replies near-duplicates
TEMPLATE_RISK = ("Summary: This PR adds rate limiting of 100 requests per minute to the API key.\n"
                 "Risks: but also a performance improvement, as it allows for more efficient load balancing.\n"
                 "Verdict: This feature should be added to the API gateway.")
OTHER = ("Summary: Moves secrets from environment variables to the vault client.\n"
         "Risks: The vault client can be slow at startup.\nVerdict: This change is safer for production.")


def test_an_example_in_a_candidate_the_gate_refused_is_not_proposed_again(tmp_path: Path) -> None:
    from skillgrad.engine.proposers.stage import refused_examples
    from skillgrad.runs.store import RunStore

    rows = [{"task_id": f"r{i}", "task": q, "judge": {"kind": "rule", "checks": [
        {"op": "section_present", "arg": x} for x in ("Summary", "Risks", "Verdict")]}}
        for i, q in enumerate([*REVIEWS, "Review this PR: adds rate limiting of 100 requests per minute per API key.",
                               "Review this PR: moves secrets from environment variables to the vault client."])]
    (tmp_path / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    env = create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(tmp_path / "tasks.jsonl"),
                                                "split_ratio": "1:0:0"}))
    items = env.load_splits().train
    trajs = [Trajectory(item_id=it.id, question=it.inputs["question"], hard=0.0, fail_reason="x") for it in items[:5]]
    trajs += [Trajectory(item_id="r5", question=items[5].inputs["question"], answer=TEMPLATE_RISK, hard=1.0),
              Trajectory(item_id="r6", question=items[6].inputs["question"], answer=OTHER + " It also needs a test for the startup path and a note in the runbook.",
                         hard=1.0)]
    llm = _NoTeacher()
    teacher = TeacherCall(llm, PromptLibrary([]), max_tokens=64)
    run = tmp_path / "run"

    def step(g: int, refused: dict[tuple[str, str], int]) -> Any:
        return asyncio.run(demonstrate(trajs, {i.id: i for i in items}, "# S\n", teacher, env, llm, limit=1,
                                       max_chars=1200, seed=0, refused=refused))

    first = step(2, {})
    assert [it["demonstration"]["item_id"] for it in first.items] == ["r5"]  # the shorter passing reply first
    store = RunStore(run)
    store.write_json("steps/step_0002/patches/demonstrations.json", first.to_json())
    store.write_text("steps/step_0002/candidate_skill.md",
                     f"# S\n\n## Examples\nQ: {first.items[0]['target']}\nA: {TEMPLATE_RISK.replace(chr(10), chr(10) + '   ')}\n")
    history = [{"step": 1, "action": "accept_new_best"}, {"step": 2, "action": "blocked"}]
    refused = refused_examples(store, history, 3)
    assert list(refused.values()) == [2]
    again = step(3, refused)
    assert [it["demonstration"]["item_id"] for it in again.items] == ["r6"]
    assert any("which the gate refused" in d["why"] for d in again.log if d["item_id"] == "r5")
    assert refused_examples(store, [{"step": 2, "action": "accept"}], 3) == {}  # an accepted step's are kept


def test_a_reply_that_is_its_request_as_asked_is_no_example(tmp_path: Path) -> None:
    # push-length run (this round), step 3: the passing reply was the request without its shared opening
    pushes = ["Write a push notification: the app now shows trail conditions from other hikers.",
              "Write a push notification: a price drop on the headlamp in your wishlist.",
              "Write a push notification: sleeping bags are 25% off until Sunday.",
              "Write a push notification: the fall catalogue is live in the app."]
    rows = [{"task_id": f"p{i}", "task": q, "judge": {"kind": "rule", "checks": [
        {"op": "min_chars", "arg": "40"}, {"op": "max_chars", "arg": "140"}]}} for i, q in enumerate(pushes)]
    (tmp_path / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    env = create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(tmp_path / "tasks.jsonl"),
                                                "split_ratio": "1:0:0"}))
    items = env.load_splits().train
    echo = "The app now shows trail conditions from other hikers."
    news = "We just added a price drop on the headlamp in your wishlist."
    trajs = [Trajectory(item_id="p0", question=pushes[0], answer=echo, hard=1.0),
             Trajectory(item_id="p1", question=pushes[1], answer=news, hard=1.0),
             *(Trajectory(item_id=f"p{i}", question=pushes[i], hard=0.0, fail_reason="x") for i in (2, 3))]
    llm = _NoTeacher()
    res = asyncio.run(demonstrate(trajs, {i.id: i for i in items}, "# S\n", TeacherCall(llm, PromptLibrary([]),
                                  max_tokens=64), env, llm, limit=2, max_chars=1200, seed=0))
    assert [it["content"] for it in res.items if it["demonstration"]["source"] == "passing_rollout"] == [news]
    assert {d["why"] for d in res.log if d["reply"] == echo} == {"restates its request"}


def test_a_label_leads_a_sentence_not_a_clause_or_a_piece_of_code() -> None:
    from skillgrad.engine.proposers.repairs import label_repairs
    from skillgrad.envs.base import ReplyContract

    # review-sections, step 1 of this round: two verified spreads the student then copied
    fb = ReplyContract(labels=("Summary", "Risks", "Verdict"))
    clauses = ("The email worker process is not only a performance improvement, but also an optimization of the "
               "existing 32-threaded process, and this feature was added to the email client in 2018")
    code = "The original code is:\n```python\ndef create_user(username, password):\n    return {}\n```"
    for reply in (clauses, code):
        assert not [c for c in label_repairs(reply, fb) if c.startswith("Summary:") and "\nRisks: " in c]
    sentences = "The CSV importer skips bad rows. Data can be lost silently. Request changes."
    assert ("Summary: The CSV importer skips bad rows.\nRisks: Data can be lost silently.\nVerdict: Request changes."
            in label_repairs(sentences, fb))


def test_a_refused_expected_answer_is_proposed_again() -> None:
    # the facts demo (seed 42, this round): step 3's candidate of ten facts was rejected, after which steps 4 and 6
    # could propose none of those facts again (the teacher's corrections failed their checks): 43 % -> 23 % held-out.
    # A fact has one right reply; a refused candidate says nothing against each of its examples.
    env = create_env(EnvSection.model_validate({"name": "facts", "n_facts": 10}))
    item = env.load_splits().train[0]
    t = Trajectory(item_id=item.id, question=item.inputs["question"], answer="I am not sure.", hard=0.0,
                   fail_reason="wrong_answer", gold=item.gold)
    llm = _NoTeacher()
    teacher = TeacherCall(llm, PromptLibrary([]), max_tokens=64)
    refused = {(item.id, " ".join(str(item.gold).split()).casefold()): 3}
    res = asyncio.run(demonstrate([t], {item.id: item}, "# S\n", teacher, env, llm, limit=1, max_chars=1200,
                                  seed=0, refused=refused))
    assert [(it["demonstration"]["item_id"], it["content"]) for it in res.items] == [(item.id, str(item.gold))]
