"""The student's stock opening is cut from its replies before they become worked examples.

The replies are the embedded student's own, from a push-length suite run (2026-11-26, engine defaults): most opened
"Hey everyone, ..." or "Hey there, I'm so glad you're interested in ...", and the skill that kept them gave 10 of
10 held-out replies that opening. The scorer is the real rule checks of the `tasks` environment on the suite's own
push-length tasks (40-140 characters, names the subject)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from skillgrad.config.schema import EnvSection
from skillgrad.engine.prompts import PromptLibrary
from skillgrad.engine.proposers.openings import stock_opening, stock_openings, without_stock_opening
from skillgrad.engine.teacher import TeacherCall
from skillgrad.envs.base import Trajectory
from skillgrad.envs.registry import create_env
from skillgrad.models.base import Completion
from tests.proposer_helpers import demonstrate

SUITE = Path(__file__).resolve().parents[1] / "benchmarks" / "skills_suite" / "push-length" / "tasks.jsonl"
REPLIES = [  # the student's replies to the suite's first 8 push-length training tasks
    "Hey everyone,  We just added a new waterproof hiking boots to the Trailhead outdoor gear app!",
    "Hey there, I'm so glad you're interested in trekking poles!",
    "Hey everyone, it's a great day to enjoy free shipping! We're offering free shipping on orders over 50 dollars "
    "this weekend.",
    "Hey everyone, I'm so glad you're interested in winter jackets!",
    "Hey everyone, it's a great day to celebrate with a trail running meetup at the Denver store!",
    "Hey everyone, it's a great promotion for members! You get double rewards on climbing gear this week.",
    "Hey there, I'm so glad you're interested in camping stoves!",
    "This is a great day to celebrate your rental kayak!",
]


class NoTeacher:
    name, context_window, supports_vision, is_agent = "scripted:none", 100_000, False, False

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    async def complete(self, messages: list[dict[str, Any]], *, schema: Any = None, **_: Any) -> Completion:
        raise AssertionError("no failed task here: the teacher is not asked")


def test_stock_openings_are_the_student_habit_at_the_start_and_after_the_first_clause() -> None:
    pairs = [(f"task {i}", r) for i, r in enumerate(REPLIES)]
    stock = stock_openings(pairs)
    assert {("hey", "everyone"), ("im", "so"), ("its", "a")} <= stock
    assert ("hey", "there") not in stock  # 2 of 8: not yet a habit, but what follows it is
    assert stock_opening(REPLIES[1], stock) == "im so"
    assert ("this", "is") not in stock
    assert stock_opening(REPLIES[0], stock) == "hey everyone"
    assert stock_opening(REPLIES[-1], stock) == ""
    # a sentence after the greeting survives the cut; a one-sentence reply loses its first clause, unless what
    # follows is a habit too ("I'm so glad you're interested in ...")
    assert without_stock_opening(REPLIES[5], stock) == "You get double rewards on climbing gear this week."
    assert without_stock_opening(REPLIES[0], stock) == \
        "We just added a new waterproof hiking boots to the Trailhead outdoor gear app!"
    assert without_stock_opening(REPLIES[1], stock) == ""
    # the same task three times is one task, not a habit
    assert stock_openings([("one task", r) for r in REPLIES]) == set()


def test_a_required_opening_json_or_list_is_form_not_habit() -> None:
    tldr = [(f"t{i}", f"TL;DR: the {x} is done. More later.") for i, x in enumerate("abcdefgh")]
    assert stock_openings(tldr, ["TL;DR:"]) == set()
    js = [(f"t{i}", '{"severity": "low", "component": "x"}') for i in range(6)]
    assert stock_openings(js) == set()
    steps = [(f"t{i}", "1. Restart it.\n2. Check it.\n3. Call us.") for i in range(6)]
    assert stock_openings(steps) == set()
    # the cut never takes a required text with it
    stock = {("im", "sorry")}
    assert without_stock_opening("I'm sorry but I can't help with that: the VPN. Write to security@corp.example",
                                 stock, ["I can't help with that"]) == ""
    assert without_stock_opening("I'm sorry, I can't help with that: the VPN.", stock, ["I can't help with that"]) \
        == "I can't help with that: the VPN."
    assert without_stock_opening("I'm sorry for any confusion. I can't help with that: the VPN.", stock,
                                 ["I can't help with that"]) == "I can't help with that: the VPN."


def _env(tmp_path: Path) -> Any:
    rows = [json.loads(x) for x in SUITE.read_text(encoding="utf-8").splitlines() if x.strip()]
    train = [r for r in rows if r.get("split") == "train"][:len(REPLIES)]
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(json.dumps({**r, "split": "train"}) for r in train) + "\n", encoding="utf-8")
    return create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(path)}))


def test_passing_replies_become_examples_without_the_stock_opening(tmp_path: Path) -> None:
    env = _env(tmp_path)
    items = env.load_splits().train
    assert len(items) == len(REPLIES)
    trajs = []
    for it, reply in zip(items, REPLIES, strict=True):
        score = asyncio.run(env.verify_example(it, reply, NoTeacher()))
        trajs.append(Trajectory(item_id=it.id, answer=reply, gold=it.gold, hard=score, soft=score,
                                question=it.inputs["question"], fail_reason="" if score else "check failed"))
    assert sum(t.hard for t in trajs) == len(REPLIES)  # the template passes the checks: that is the trap
    teacher = TeacherCall(NoTeacher(), PromptLibrary([]), max_tokens=64)
    passing = [t for t in trajs if not t.failed]
    res = asyncio.run(demonstrate(passing, {i.id: i for i in items}, "# Push copy\n", teacher, env, NoTeacher(),
                                  limit=4, max_chars=600, seed=0))
    examples = [it["content"] for it in res.items]
    assert examples, res.log
    assert not any(e.lower().startswith(("hey", "i'm so glad")) for e in examples), examples
    cut = "You get double rewards on climbing gear this week."
    assert cut in examples
    sources = {d["reply"]: d for d in res.log}
    assert sources[cut]["source"] == "passing_rollout_trimmed" and sources[cut]["verified"] is True
    # a template reply that cannot be cut is logged as refused, with the reason
    refused = sources["Hey there, I'm so glad you're interested in camping stoves!"]
    assert refused["verified"] is False and "stock opening" in refused["why"]
