"""Spending between the last checkpoint and a SIGKILL is not forgotten: every settled call is appended
to spend.jsonl, and restoring a meter or budget adds what the log holds after its checkpoint."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from train_helpers import TINY, events

from skillgrad.config.loader import packaged_config_path
from skillgrad.config.schema import BudgetSection, RoleConfig
from skillgrad.models.budget import Budget
from skillgrad.models.factory import build_llm
from skillgrad.models.meter import Meter
from skillgrad.models.spend_log import SpendLog


def _calls(llm, n: int, start: int = 0) -> None:
    async def go() -> None:
        for i in range(start, start + n):
            await llm.complete([{"role": "user", "content": f"q{i}"}], max_tokens=4, stage="rollout")

    asyncio.run(go())


def test_restore_adds_calls_logged_after_the_checkpoint(fault_server, tmp_path):
    log = SpendLog(tmp_path / "spend.jsonl")
    meter, budget = Meter(log=log), Budget(BudgetSection(), log=log)
    llm = build_llm(RoleConfig(provider="openai", model="m", base_url=fault_server.base_url), "student",
                    meter=meter, budget=budget)
    _calls(llm, 2)
    meter_ckpt, budget_ckpt = meter.summary(), budget.snapshot()  # what runtime_state.json holds
    _calls(llm, 3, start=2)  # spent after the checkpoint, then the process dies
    with open(log.path, "a", encoding="utf-8") as f:
        f.write('{"seq": 999, "kind": "bud')  # a line cut by the kill is skipped

    log2 = SpendLog(tmp_path / "spend.jsonl")
    meter2, budget2 = Meter(log=log2), Budget(BudgetSection(), log=log2)
    meter2.restore(meter_ckpt)
    budget2.restore(budget_ckpt)
    assert budget2.calls == 5 and budget2.tokens == 5 * 18
    total = meter2.summary()["total"]
    assert total["calls"] == 5 and total["provider_calls"] == 5 and total["prompt_tokens"] == 5 * 11
    # restoring again from the newest snapshot counts nothing twice
    meter3 = Meter(log=SpendLog(tmp_path / "spend.jsonl"))
    meter3.restore(meter2.summary())
    assert meter3.summary()["total"]["calls"] == 5


ARGS = ["--config", str(packaged_config_path("demo.yaml")), "--log-format", "jsonl",
        *[x for o in [*TINY, "train.num_epochs=1", "optimizer.use_slow_update=false",
                      "optimizer.use_meta_skill=false", "evaluation.edit_credit=false"] for x in ("-o", o)]]


def _cmd(run_dir: Path) -> list[str]:
    return [sys.executable, "-m", "skillgrad.cli", "train", *ARGS, "--out", str(run_dir)]


@pytest.mark.slow
def test_sigkill_mid_stage_then_resume_counts_every_call(tmp_path: Path, gguf_path: Path) -> None:
    run = tmp_path / "run"
    proc = subprocess.Popen(_cmd(run), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    assert proc.stdout is not None
    in_rollout = 0
    for line in proc.stdout:  # kill after 4 provider calls inside the first rollout (no checkpoint since)
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue
        if ev.get("event") == "stage_start" and ev.get("stage") == "rollout":
            in_rollout = 1
        elif in_rollout and ev.get("event") == "llm_call" and not ev.get("cached"):
            in_rollout += 1
            if in_rollout == 5:
                os.killpg(proc.pid, signal.SIGKILL)
                break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    ckpt = json.loads((run / "runtime_state.json").read_text())
    spent_before_kill = [e for e in events(run) if e["event"] == "llm_call" and not e["cached"]]
    assert ckpt["budget"]["calls"] < len(spent_before_kill)  # the checkpoint alone would forget some

    # Resume with room for 3 more calls: a budget that forgot the calls made since the checkpoint would
    # let the resumed run make more than 3 new provider calls.
    limit = len(spent_before_kill) + 3
    rerun = subprocess.run([sys.executable, "-m", "skillgrad.cli", "resume", str(run), "-o", f"budget.max_calls={limit}",
                            "--quiet"], capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 4, rerun.stderr[-2000:]  # stopped by its budget
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"] == "stopped" and summary["stopped"] == "budget"
    calls = [e for e in events(run) if e["event"] == "llm_call"]
    # Not spent: calls the budget refused, and the stage's other calls still in flight when one was refused,
    # cancelled as the run stopped (a cancelled call releases its reservation: models/budget.py, cancel).
    spent = [e for e in calls if not e["cached"]
             and not str(e.get("error") or "").startswith(("BudgetExceeded", "CancelledError"))]
    assert len(spent) <= limit  # before the spend log: up to limit + the calls since the checkpoint
    state = json.loads((run / "runtime_state.json").read_text())
    # A kill can land between a call's spend-log line and its event: at most that one call more.
    assert len(spent) <= state["budget"]["calls"] <= len(spent) + 1
    total = state["meter"]["total"]
    assert len(calls) <= total["calls"] <= len(calls) + 1
    assert total["provider_calls"] >= len(spent)
    assert summary["token_summary"]["token_counters"]["student"].startswith("local tokenizer")
