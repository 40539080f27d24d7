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
