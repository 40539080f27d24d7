"""The head to head's few-shot side (benchmarks/h2h/fewshot.py): the zero-call baseline shows only verified
training golds, and the scoring endpoint DSPy's metric asks is the task's own scorer. Real `tasks` environment
on a report-suite skill and a real HTTP endpoint on 127.0.0.1; the student object only counts tokens."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

from skillgrad.config.schema import EnvSection
from skillgrad.envs.registry import create_env
from skillgrad.skill.examples import split_examples

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

from h2h import fewshot  # noqa: E402

SKILL = BENCH / "report_suite" / "iso-date"


class Counter:
    """What verify_example asks of the student: its token count (about 4 characters a token)."""

    def count_tokens(self, text: str) -> int:
        return len(text) // 4


def _env():
    env = create_env(EnvSection.model_validate({"name": "tasks", "tasks_file": str(SKILL / "tasks.jsonl"),
                                                "skill_init": str(SKILL / "SKILL.md")}))
    return env, env.load_splits()


def test_the_fewshot_baseline_shows_verified_training_golds_only() -> None:
    env, splits = _env()
    skill, info = fewshot.fewshot_baseline(env, Counter(), list(splits.train), env.initial_skill(), seed=3)
    examples = split_examples(skill)[1]
    golds = {it.inputs["question"]: it.meta["judge"]["reference"] for it in splits.train}
    assert info["examples"] == len(examples) == fewshot.K_LABELED
    assert all(golds[q] == a for q, a in examples)  # every reply is that task's gold, every task a training one


def test_the_scoring_endpoint_is_the_tasks_own_scorer() -> None:
    env, splits = _env()
    item = splits.val[0]
    server = fewshot.ScoreServer(env, Counter(), [*splits.train, *splits.val])
    url = server.start()
    try:
        def score(reply: str, item_id: str = item.id) -> float:
            req = urllib.request.Request(url, data=json.dumps({"item_id": item_id, "reply": reply}).encode(),
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=30) as r:
                return float(json.loads(r.read())["score"])

        gold = item.meta["judge"]["reference"]
        assert score(gold) == 1.0 and score(f"Convert to ISO format: {gold}") == 0.0
        assert score(gold, "no-such-task") == 0.0
    finally:
        server.stop()


def test_mipro_is_sized_to_the_call_budget() -> None:
    # MIPROv2's light preset asks for hundreds of calls; the plan counts each phase's predicts (two calls each:
    # ChatAdapter, then its JSON retry) so that the whole run fits the budget every system gets
    def calls(p: dict[str, int]) -> int:
        n = p["num_candidates"]
        return fewshot.PER_PREDICT * ((2 + 3 * n) + (n + 1) * p["pool"] + (p["num_trials"] + 1) * p["val"])

    for budget in (40, 60, 100, 400):
        p = fewshot.mipro_plan(budget, n_train=20, n_val=10)
        assert calls(p) <= budget, (budget, p)
        assert 1 <= p["pool"] <= 20 and 1 <= p["val"] <= 10 and p["num_trials"] >= 1, p
    small, big = fewshot.mipro_plan(40, 20, 10), fewshot.mipro_plan(400, 20, 10)
    assert big["val"] == 10 and big["num_trials"] > small["num_trials"] and big["pool"] > small["pool"]
    assert fewshot.mipro_plan(400, 3, 2)["pool"] == 3  # never more tasks than the split has
