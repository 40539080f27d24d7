"""A rubric judge with its own model (env.judge_provider / env.judge_model) is one of the run's models: its calls
are metered (events, role `judge`), limited by the run's budget, cached (a rerun re-sends nothing) and refused
under max_usd without a price. Plumbing against a scripted OpenAI-compatible server; before, the judge was built
outside the run: uncounted, unlimited and re-sent after resume."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillgrad.models.fakes import Fault, FaultServer

VERDICT = '{"score": 1, "reason": "meets it"}'


@pytest.fixture
def server() -> Iterator[FaultServer]:
    s = FaultServer(default=Fault.ok(VERDICT))
    s.start()
    yield s
    s.stop()


def _setup(tmp_path: Path, server: FaultServer) -> list[str]:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"task_id": f"t{i}", "task": f"Summarise item {i}.", "split": "test",
                                         "judge": {"kind": "rubric", "rubric": "Mentions the item number."}}) + "\n"
                             for i in range(3)), encoding="utf-8")
    (tmp_path / "skill.md").write_text("# Skill\n\nBe brief.\n", encoding="utf-8")
    cfg = {"env": {"name": "tasks", "tasks_file": str(tasks), "split_ratio": "0:0:1", "judge_provider": "openai",
                   "judge_model": "judge-m"},
           "model": {role: {"provider": "openai", "model": f"{role}-m", "base_url": server.base_url}
                     for role in ("student", "teacher")}}
    (tmp_path / "cfg.yaml").write_text(json.dumps(cfg), encoding="utf-8")
    return [sys.executable, "-m", "skillgrad.cli", "eval", "--config", str(tmp_path / "cfg.yaml"),
            "--skill", str(tmp_path / "skill.md"), "--split", "test", "--out", str(tmp_path / "ev"), "-q"]


def _run(args: list[str], server: FaultServer) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url}
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=180)


def test_the_judge_is_metered_cached_and_budgeted(tmp_path: Path, server: FaultServer) -> None:
    args = _setup(tmp_path, server)
    r = _run(args, server)
    assert r.returncode == 0, r.stderr
    events = [json.loads(x) for x in (tmp_path / "ev" / "events.jsonl").read_text().splitlines()]
    judge_calls = [e for e in events if e["event"] == "llm_call" and e["role"] == "judge"]
    assert len(judge_calls) == 3 and all(e["model"] == "judge-m" and e["ok"] for e in judge_calls)
    assert sum(req["body"].get("model") == "judge-m" for req in server.requests) == 3
    summary = json.loads((tmp_path / "ev" / "eval_summary.json").read_text())
    assert summary["splits"]["test"]["hard"] == 1.0  # the verdicts were read

    # Rerun from scratch results: every call, the judge's included, replays from the run's cache.
    shutil.rmtree(tmp_path / "ev" / "test")
    (tmp_path / "ev" / "eval_summary.json").unlink()
    sent = len(server.requests)
    r = _run(args, server)
    assert r.returncode == 0, r.stderr
    assert len(server.requests) == sent  # nothing re-sent

    # The run's call budget counts the judge: 3 student + 3 judge calls do not fit in 4.
    shutil.rmtree(tmp_path / "ev")
    served = len(server.requests)
    r = _run([*args, "-o", "budget.max_calls=4", "-o", "cache.enabled=false"], server)
    assert r.returncode != 0 and "budget.max_calls" in r.stderr, r.stderr
    assert len(server.requests) - served <= 4


def test_max_usd_refuses_an_unpriced_judge(tmp_path: Path, server: FaultServer) -> None:
    args = _setup(tmp_path, server)
    prices = tmp_path / "prices.json"  # student and teacher priced; the judge's model is not
    prices.write_text(json.dumps({"openai": {"student-m": {"input": 1, "output": 1},
                                             "teacher-m": {"input": 1, "output": 1}}}))
    r = _run([*args, "-o", "budget.max_usd=5", "-o", f"model.prices_file={prices}"], server)
    assert r.returncode == 2, r.stderr
    assert "judge model 'judge-m'" in r.stderr and "model.prices_file" in r.stderr, r.stderr
    assert server.requests == []
