"""The small-student filters on a capable teacher's corrections (issue 31, finding 6): a natural reply that passes the
task's checks is kept, the embedded student's habit is still refused.

Replies: `fixtures/capable/support_signoff_agent_teacher.json` holds the development suite's support-signoff
agent-teacher run (2026-11-27): the embedded SmolLM2-135M student's step-1 replies (9 of 11 open "I'm sorry for
..."), and the agent teacher's corrections, two of which the stock-opening filter refused as that habit. The public
transcript is the recorded "Sample Output" of microsoft/agent-framework's
`python/samples/getting_started/workflows/orchestration/handoff_simple.py` (an earlier version; Azure OpenAI agents).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from skillgrad.config.schema import EnvSection
from skillgrad.engine.prompts import PromptLibrary
from skillgrad.engine.proposers.filters import Filters
from skillgrad.engine.proposers.openings import names_task, stock_openings
from skillgrad.engine.teacher import TeacherCall
from skillgrad.envs.base import Trajectory
from skillgrad.envs.registry import create_env
from tests.proposer_helpers import demonstrate
from tests.test_proposers import TaskTeacher

ROOT = Path(__file__).resolve().parents[1]
RUN = json.loads((ROOT / "tests/fixtures/capable/support_signoff_agent_teacher.json").read_text(encoding="utf-8"))
HABIT = ("im", "sorry")

# microsoft/agent-framework handoff_simple.py, Sample Output: the user's message, then the triage agent's reply
PUBLIC_REQUEST = "My order 1234 arrived damaged and the packaging was destroyed."
PUBLIC_REPLY = ("I'm sorry to hear that your order arrived damaged and the packaging was destroyed. I will connect you "
                "with a specialist who can assist you further with this issue.")


def _env(tmp_path: Path) -> Any:
    rows = [json.loads(x) for x in (ROOT / "benchmarks/skills_suite/support-signoff/tasks.jsonl")
            .read_text(encoding="utf-8").splitlines() if x.strip()]
    path = tmp_path / "support-signoff.jsonl"
    path.write_text("\n".join(json.dumps({**r, "split": "train"}) for r in rows if r["split"] == "train") + "\n",
                    encoding="utf-8")
    return create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(path)}))


def _failed(item: Any, answer: str) -> Trajectory:
    q = item.inputs["question"]
    return Trajectory(item_id=item.id, answer=answer, gold=item.gold, hard=0.0, question=q, fail_reason="failed",
                      messages=[{"role": "user", "content": q}, {"role": "assistant", "content": answer}])


def _step(tmp_path: Path, *, compact: bool, other_model: bool = False) -> tuple[Any, list[dict[str, Any]]]:
    """Step 1 of the run again: the student's real replies, every failure corrected by the run's agent teacher (its
    refused and its verified corrections as written; a habit-only reply for the tasks it was not asked about)."""
    env = _env(tmp_path)
    items = {it.id: it for it in env.load_splits().train}
    trajs = [_failed(items[k], a) for k, a in RUN["student_replies"].items()]
    written = {**RUN["teacher_refused_as_stock_opening"], **RUN["teacher_verified"]}
    habit_only = "I'm sorry for any confusion. Please contact us again.\nBrightline Support"
    teacher = TaskTeacher({t.question: written.get(t.item_id, habit_only) for t in trajs})
    res = asyncio.run(demonstrate(trajs, items, "# Support\n", TeacherCall(teacher, PromptLibrary([]), max_tokens=256),
                                  env, teacher, limit=2, max_chars=1200, seed=0, corrections=len(trajs),
                                  compact=compact, teacher_first=other_model))
    return res, [it for it in res.items if it["demonstration"]["source"] == "teacher_correction"]


def test_a_capable_teachers_correction_that_names_the_task_is_kept_under_the_small_student_strategy(
        tmp_path: Path) -> None:
    res, kept = _step(tmp_path, compact=False)
    by_task = {it["demonstration"]["item_id"]: it["content"] for it in kept}
    for task, reply in RUN["teacher_refused_as_stock_opening"].items():
        assert by_task.get(task) == reply, res.log  # refused as "opens with the student's stock opening" before
    for task, reply in RUN["teacher_verified"].items():
        assert by_task.get(task) == reply
    # the teacher's replies that keep only the habit ("I'm sorry for any confusion.") are refused as before
    habit = [d for d in res.log if d["source"] == "teacher_correction" and d["reply"].startswith("I'm sorry for any")]
    assert habit and all("stock opening" in d["why"] for d in habit)
    # and no example opens with the student's own "I'm sorry for ...", the habit the filter measured
    assert HABIT in stock_openings([("q" + k, a) for k, a in RUN["student_replies"].items()])
    assert not [it for it in res.items if it["content"].startswith("I'm sorry for")]
    # a small teacher (the compact prompt: a 4,096-token window, the embedded model) writes the student's own kind
    # of reply, so the filter holds for its corrections whatever they name
    res, kept = _step(tmp_path, compact=True)
    assert not set(RUN["teacher_refused_as_stock_opening"]) & {it["demonstration"]["item_id"] for it in kept}
    refused = {d["item_id"]: d["why"] for d in res.log if d["source"] == "teacher_correction" and not d["verified"]}
    assert all("stock opening" in refused[k] for k in RUN["teacher_refused_as_stock_opening"])
    # an agent through handoff under a config that sets teacher.n_ctx: 4096 gets the compact prompt,
    # and is still another model than the student: its corrections are a capable teacher's
    _, kept = _step(tmp_path, compact=True, other_model=True)
    assert set(RUN["teacher_refused_as_stock_opening"]) <= {it["demonstration"]["item_id"] for it in kept}


def test_which_clause_names_the_task() -> None:
    t = Trajectory(item_id="p", question=PUBLIC_REQUEST, answer="")
    stock = {HABIT}
    capable = Filters([], [], [], {}, "", 1200, small=True, stock=stock, capable_teacher=True)
    small = Filters([], [], [], {}, "", 1200, small=True, stock=stock)
    assert capable.why_not(t, PUBLIC_REPLY, "teacher_correction") == ""
    assert "stock opening" in small.why_not(t, PUBLIC_REPLY, "teacher_correction")
    # the student's own words never get this way out, nor a repair of them, nor a teacher reply of habit only
    assert "stock opening" in capable.why_not(t, PUBLIC_REPLY, "own_reply_repair")
    for habit in ["I'm sorry for your loss. Please, find a way to get it open again.",
                  "I'm sorry for any misunderstanding, but as a customer support AI, I specialize in helping users."]:
        assert "stock opening" in capable.why_not(t, habit, "teacher_correction"), habit
    # the habit after the first clause ("Hey there, I'm so glad you're interested in ...", push-length's template)
    # names the task only where the clause holding it does
    hey = {("im", "so")}
    q = "Write a push notification: the headlamp on your wishlist dropped in price."
    assert names_task("Hey there, I'm so glad the headlamp on your wishlist dropped in price.", hey, q)
    assert not names_task("Hey there, I'm so glad you're here. The headlamp dropped in price.", hey, q)
    assert not names_task("Sorry, the headlamp on your wishlist dropped in price.", hey, q)  # no stock opening


def test_the_h2h_expense_run_refused_no_worked_example(tmp_path: Path) -> None:
    # report:expense-category with an agent teacher (h2h/capable, 2026-11-27), step 1 re-run on this code: the
    # teacher's two corrections ("software") passed and entered the candidate; the 8 unverified entries are the
    # student's own replies, none of which had a form to repair. The summary said "8 worked examples the optimizer's
    # own filters refused (too long, copying the checker, repeats, stock openings)".
    from skillgrad.engine.no_learning import refusal_counts
    from skillgrad.runs.store import RunStore

    demos = (ROOT / "tests/fixtures/capable/expense_category_step1_demonstrations.json").read_text(encoding="utf-8")
    log = json.loads(demos)["log"]
    assert [d["source"] for d in log if d["verified"]] == ["expected_answer", "expected_answer"]
    assert {d["why"] for d in log if not d["verified"]} == {"no repair to try"}
    (tmp_path / "steps/step_0001/patches").mkdir(parents=True)
    (tmp_path / "steps/step_0001/patches/demonstrations.json").write_text(demos, encoding="utf-8")
    assert refusal_counts(RunStore(tmp_path), [{"step": 1, "action": "blocked"}]) == {"gate_blocked": 1}
