"""`skillgrad.train(trainset=..., valset=..., metric=...)`: examples and a metric held in Python (envs/pyfunc).

The example in docs/api.md ("Examples and a metric in Python") runs as written on the embedded model; calling it
again continues its run without a new model call; other examples under the same `out=` are refused by their
fingerprint; `skillgrad resume` on such a run says the metric lives in Python. GEPA's own default-adapter
evaluator and data format (gepa.adapters.default_adapter) are accepted unchanged.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import skillgrad
from skillgrad.api_data import role
from skillgrad.config.schema import EnvSection
from skillgrad.envs.base import Item
from skillgrad.envs.pyfunc import PyFuncEnv, PyFuncOptions
from skillgrad.envs.pyfunc.data import fingerprint, read_score, to_item
from skillgrad.envs.registry import create_env
from skillgrad.errors import ConfigError, UsageError

ROOT = Path(__file__).resolve().parents[1]


def docs_block() -> str:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    section = text.split("## Examples and a metric in Python", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block, "docs/api.md lost its examples-and-metric example"
    return block.group(1)


def bound(data: dict, metric, **options) -> PyFuncEnv:
    env = create_env(EnvSection.model_validate({"name": "pyfunc", **options}))
    assert isinstance(env, PyFuncEnv)
    return env.bind(data, metric)


def test_scores_in_every_shape_a_metric_returns() -> None:
    class Pred:  # what DSPy's Prediction / GEPA's ScoreWithFeedback look like: attributes
        score, feedback = 0.5, "half"

    assert read_score(True, "m") == (1.0, "")
    assert read_score(0.25, "m") == (0.25, "")
    assert read_score((0.0, "wrong city"), "m") == (0.0, "wrong city")
    assert read_score({"score": 1, "feedback": None}, "m") == (1.0, "")
    assert read_score(Pred(), "m") == (0.5, "half")
    for bad in ("yes", 1.5, -0.1, float("nan"), None, {"feedback": "x"}):
        with pytest.raises(ValueError, match=r"metric m returned .*score in \[0, 1\]"):
            read_score(bad, "m")


def test_gepa_default_adapter_evaluator_and_data_work_unchanged() -> None:
    gepa_adapter = pytest.importorskip("gepa.adapters.default_adapter.default_adapter")
    evaluator = gepa_adapter.ContainsAnswerEvaluator()
    example = {"input": "Capital of Chile?", "additional_context": {}, "answer": "Santiago"}
    env = bound({"train": [example], "val": [example], "test": []}, evaluator)
    item = env.load_splits().train[0]
    assert item.inputs["question"] == "Capital of Chile?" and item.gold == "Santiago"
    import asyncio

    hard, soft, reason = asyncio.run(env.score(item, "It is Lima."))
    assert (hard, soft) == (0.0, 0.0) and reason.startswith("metric: The generated response is incorrect.")
    assert asyncio.run(env.score(item, "Santiago."))[:2] == (1.0, 1.0)


def test_partial_scores_pass_at_the_threshold() -> None:
    import asyncio

    env = bound({"train": ["q1"], "val": ["q2"]}, lambda ex, reply: len(reply) / 10, pass_at=0.5)
    item = env.load_splits().val[0]
    assert item.id == "val-0" and item.gold is None
    assert asyncio.run(env.score(item, "abc")) == (0.0, 0.3, "metric: score 0.30")
    assert asyncio.run(env.score(item, "abcdef"))[:2] == (1.0, 0.6)


def test_bad_examples_and_arguments_are_one_line_usage_errors() -> None:
    with pytest.raises(UsageError, match=r"trainset\[1\]: no input field; give each example one of input, question"):
        to_item({"answer": "x"}, "train", 1)
    with pytest.raises(UsageError, match=r"valset\[0\]: an example must be a dict"):
        to_item(42, "val", 0)
    with pytest.raises(UsageError, match="used twice"):
        bound({"train": [{"id": "a", "input": "x"}], "val": [{"id": "a", "input": "y"}]}, lambda e, r: 1.0)
    with pytest.raises(UsageError, match="train needs trainset=.* and valset="):
        skillgrad.train(trainset=[{"input": "x"}], metric=lambda e, r: 1.0)
    with pytest.raises(UsageError, match="train needs metric=callable"):
        skillgrad.train(trainset=["x"], valset=["y"])
    with pytest.raises(UsageError, match="trainset must be a list of examples"):
        skillgrad.train(trainset="x", valset=["y"], metric=lambda e, r: 1.0)
    with pytest.raises(UsageError, match="evaluate split='test': pass testset="):
        skillgrad.evaluate(skill="Be brief.", valset=["y"], metric=lambda e, r: 1.0)
    assert role(None, "student") == {"provider": "local"}
    assert role("openai:gpt-5.4-mini", "t") == role("openai/gpt-5.4-mini", "t") == {"provider": "openai",
                                                                                   "model": "gpt-5.4-mini"}
    with pytest.raises(UsageError, match="'gpt-5.4' names no provider; write 'provider:model'"):
        role("gpt-5.4", "teacher")


def test_the_fingerprint_covers_every_example_and_the_registry_builds_it_unbound() -> None:
    data = {"train": [{"input": "a", "answer": "1"}], "val": [{"input": "b"}], "test": []}
    other = {**data, "val": [{"input": "b", "answer": "2"}]}
    assert fingerprint(data) == fingerprint(json.loads(json.dumps(data)))
    assert fingerprint(data) != fingerprint(other)
    env = create_env(EnvSection.model_validate({"name": "pyfunc", "data_fingerprint": fingerprint(data)}))
    with pytest.raises(ConfigError, match=r"live in Python; start or continue this run with skillgrad.train"):
        env.load_splits()
    with pytest.raises(UsageError, match="the examples differ from this run's"):
        env.bind(other, lambda e, r: 1.0)  # type: ignore[attr-defined]
    two = [PyFuncEnv(EnvSection(name="pyfunc"), PyFuncOptions()).bind(d, lambda e, r: 1.0) for d in (data, other)]
    assert two[0].load_splits().val[0].gold is None and two[1].load_splits().val[0].gold == "2"  # no shared state
    assert isinstance(two[0].load_splits().train[0], Item)


@pytest.mark.slow
def test_docs_example_trains_resumes_and_refuses_other_data(tmp_path: Path, gguf_path: Path) -> None:
    code = docs_block()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=900)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert "starting run: env pyfunc" in p.stdout
    held = re.search(r"^held-out: (\S+) -> (\S+)$", p.stdout, re.M)
    assert held, p.stdout[-2000:]
    rescored = re.search(r"^re-scored: (\S+) on 6 examples$", p.stdout, re.M)
    assert rescored and float(rescored.group(1)) == pytest.approx(float(held.group(2)))
    run_dir = tmp_path / "runs" / "zelvora"
    saved = json.loads((run_dir / "config.json").read_text())["config"]["env"]
    assert saved["name"] == "pyfunc" and len(saved["data_fingerprint"]) == 16 and saved["metric"] == "metric"
    run = skillgrad.load_run(run_dir)
    assert run.status == "completed" and run.skills[0].startswith("# Zelvora helper")

    # The same call again continues the run: nothing is redone, no uncached model call.
    before = (run_dir / "events.jsonl").read_text().count('"llm_call"')
    again = code.split("print(\"held-out:\"")[0]
    p = subprocess.run([sys.executable, "-c", again], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "continuing run: env pyfunc" in p.stdout
    calls = [json.loads(x) for x in (run_dir / "events.jsonl").read_text().splitlines() if '"llm_call"' in x]
    assert all(c.get("cached") for c in calls[before:])

    # Other examples under the same out= are refused, naming both fingerprints.
    changed = again.replace('("What does Zelvora sell?", "kites")', '("What does Zelvora sell?", "boats")')
    p = subprocess.run([sys.executable, "-c", changed], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode != 0
    assert re.search(r"UsageError: runs/zelvora holds a run on other examples \(data fingerprint \w{16}, these "
                     r"\w{16}\)", p.stderr), p.stderr[-2000:]

    # The command line cannot call a Python metric: resume says where to continue it.
    r = subprocess.run([sys.executable, "-m", "skillgrad.cli", "resume", str(run_dir)], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr
    assert "live in Python; start or continue this run with skillgrad.train(" in r.stderr


def test_without_a_testset_the_run_has_no_test_stage_rather_than_an_error() -> None:
    from skillgrad.api_data import data_config

    metric = lambda e, r: 1.0  # noqa: E731
    data = {"train": ["a"], "val": ["b", "c", "d"], "test": []}
    loaded = data_config(data=data, metric=metric, skill=None, teacher=None, student=None, config=None,
                         overrides=None)
    assert loaded.config.evaluation.eval_test is False and loaded.config.env.name == "pyfunc"
    with_test = data_config(data={**data, "test": ["e"]}, metric=metric, skill=None, teacher="openai:gpt-5",
                            student="openai/gpt-5-mini", config=None, overrides={"train.num_epochs": 3})
    assert with_test.config.evaluation.eval_test is True and with_test.config.train.num_epochs == 3
    assert with_test.config.model.teacher.model == "gpt-5" and with_test.config.model.student.provider == "openai"
