"""Run directories for dashboard tests and benchmarks: a synthetic run written the way the trainer
writes one (same file names and event shapes as a real embedded-model run), any number of steps."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

FIXTURES = Path(__file__).parent / "fixtures"
SECRET = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234"  # must never appear in a page


def _w(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=1), encoding="utf-8")


def make_run(root: Path, name: str = "synth", steps: int = 4, *, finished: bool = True, seed: int = 0,
             tasks: int = 5) -> Path:
    run = root / name
    t0 = 1_790_000_000.0 + seed * 10_000
    cfg = {"env": {"name": "facts"}, "train": {"num_epochs": 2, "batch_size": tasks, "seed": seed},
           "model": {"teacher": {"provider": "local", "model": "SmolLM2", "api_key": "***"},
                     "student": {"provider": "local", "model": "SmolLM2"}},
           "optimizer": {"learning_rate": 2 + seed}, "budget": {"max_calls": 100_000, "max_usd": 0.0}}
    _w(run / "config.json", {"version": "0.1.0", "fingerprint": f"f{seed}", "config": cfg})
    ev: list[dict[str, Any]] = []
    ts = t0

    def emit(event: str, **f: Any) -> None:
        nonlocal ts
        ts += 0.5
        ev.append({"ts": round(ts, 3), "event": event, **f})

    emit("run_start", env="facts", teacher="local:SmolLM2", student="local:SmolLM2", resumed=False)
    emit("stage_start", stage="baseline", step=0, epoch=0)
    emit("stage_end", stage="baseline", step=0, epoch=0, seconds=2.0, counts={}, calls=tasks)
    emit("gate", step=0, epoch=0, action="baseline", candidate_score=0.1, current_score=0.1, best_score=0.1,
         selection_hard=0.1, selection_soft=0.1)
    lines = ["# Assistant skill", "", "Answer the user's question briefly and accurately."]
    _w(run / "skills" / "skill_v0000.md", "\n".join(lines) + "\n")
    history: list[dict[str, Any]] = []
    current = best = 0.1
    best_step = 0
    per_epoch = max(1, steps // 2)
    for step in range(1, steps + 1):
        epoch = (step - 1) // per_epoch + 1
        sdir = run / "steps" / f"step_{step:04d}"
        new_line = f"- Fact {step}: the answer to question q{step} is value{step}."
        results = []
        for i in range(tasks):
            ok = (i + step) % 3 == 0
            answer = f"value{step}" if ok else (f"my key is {SECRET}" if i == 1 and step == 1 else "no idea")
            results.append({"item_id": f"q{step}-{i}", "task_type": "fact", "question": f"What is q{step}-{i}?",
                            "answer": answer, "gold": f"value{step}", "hard": 1.0 if ok else 0.0,
                            "soft": 1.0 if ok else 0.0, "fail_reason": None if ok else "missing_knowledge",
                            "messages": []})
            if i == 0:
                emit("stage_start", stage="rollout", step=step, epoch=epoch)
            emit("llm_call", role="student", stage="rollout", provider="local", model="SmolLM2", cached=False,
                 prompt_tokens=60, completion_tokens=12, seconds=0.3, cost=0.0, ok=True)
            emit("task_done", stage="rollout", done=i + 1, total=tasks, item=f"q{step}-{i}", hard=results[-1]["hard"])
        _w(sdir / "rollout" / "results.jsonl", "".join(json.dumps(r) + "\n" for r in results))
        hard = sum(r["hard"] for r in results) / tasks
        emit("stage_end", stage="rollout", step=step, epoch=epoch, seconds=1.5, counts={"n": tasks},
             calls=tasks, prompt_tokens=60 * tasks, completion_tokens=12 * tasks, cost=0.0)
        edit = {"op": "append", "content": new_line, "target": ""}
        _w(sdir / "patches" / "minibatch_fail_000.json",
           {"source_type": "failure", "index": 0, "task_ids": [f"q{step}-0"], "items": [{**edit, "failure_kind": "missing_knowledge"}],
            "reply": {"ok": True, "raw": json.dumps({"edits": [edit]}), "error": None}})
        _w(sdir / "patches" / "minibatch_fail_001.json",
           {"source_type": "failure", "index": 1, "task_ids": [f"q{step}-1"], "items": [],
            "reply": {"ok": False, "raw": "{\"edits\": [ {\"op\": ", "error": "truncated JSON"}})
        for stage in ("reflect", "aggregate", "select", "update"):
            emit("stage_start", stage=stage, step=step, epoch=epoch)
            if stage == "reflect":
                emit("llm_call", role="teacher", stage="reflect", provider="local", model="SmolLM2", cached=False,
                     prompt_tokens=300, completion_tokens=60, seconds=1.0, cost=0.0, ok=True)
            emit("stage_end", stage=stage, step=step, epoch=epoch, seconds=0.5, counts={},
                 calls=1 if stage == "reflect" else 0, prompt_tokens=300 if stage == "reflect" else 0,
                 completion_tokens=60 if stage == "reflect" else 0, cost=0.0)
        _w(sdir / "merged_patch.json", {"edits": [edit]})
        _w(sdir / "ranked_edits.json", {"edits": [edit]})
        skipped = {"index": 1, "op": "insert_after", "status": "skipped_anchor_missing",
                   "detail": "anchor not found", "match": None, "content": "- never", "target": "Nope"}
        _w(sdir / "edit_apply_report.json",
           {"outcomes": [{"index": 0, "op": "append", "status": "applied_append", "detail": "", "match": None,
                          **edit}, skipped], "total": 2, "applied": 1, "skipped": 1, "errors": 0})
        candidate_lines = [*lines, "", new_line]
        candidate = "\n".join(candidate_lines) + "\n"
        _w(sdir / "candidate_skill.md", candidate)
        score = round(min(1.0, current + (0.05 if step % 3 else -0.03)), 3)
        action = "accept_new_best" if score > best else ("accept" if score > current else "reject")
        emit("stage_start", stage="gate", step=step, epoch=epoch)
        emit("stage_end", stage="gate", step=step, epoch=epoch, seconds=1.0, counts={}, calls=tasks)
        score_before = current
        if action != "reject":
            current, lines = score, candidate_lines
            if action == "accept_new_best":
                best, best_step = score, step
        emit("gate", step=step, epoch=epoch, action=action, candidate_score=score, score_before=score_before,
             current_score=current, best_score=best, selection_hard=score, selection_soft=score)
        rec = {"step": step, "epoch": epoch, "rollout_hard": hard, "rollout_soft": hard, "candidate_gate_score": score,
               "score_before": score_before, "selection_hard": score, "selection_soft": score, "gate_metric": "hard",
               "action": action, "current_score": current, "best_score": best, "best_step": best_step,
               "edit_budget": 2, "edit_apply_summary": {"total": 2, "applied": 1, "skipped": 1, "errors": 0}}
        _w(sdir / "step_record.json", rec)
        history.append(rec)
        _w(run / "skills" / f"skill_v{step:04d}.md", "\n".join(lines) + "\n")
        if step == best_step:
            _w(run / "best_skill.md", "\n".join(lines) + "\n")
    if not (run / "best_skill.md").exists():
        _w(run / "best_skill.md", (run / "skills" / "skill_v0000.md").read_text())
    _w(run / "history.json", history)
    _w(run / "runtime_state.json", {"last_completed_step": steps, "best_step": best_step, "best_score": best,
                                   "current_score": current, "baseline_done": True})
    if finished:
        for label in ("initial", "best", "final"):
            emit("eval", split="test", skill=label, hard=0.1 if label == "initial" else best, soft=0.2, n=tasks)
        emit("run_end", status="completed", seconds=ts - t0)
        _w(run / "summary.json", {"status": "completed", "best_step": best_step, "best_selection_gate_score": best,
                                 "baseline_selection_gate_score": 0.1, "baseline_test_hard": 0.1, "test_hard": best,
                                 "total_wall_time_s": ts - t0})
    _w(run / "events.jsonl", "".join(json.dumps(e) + "\n" for e in ev))
    return run


def copy_sample(root: Path, name: str = "sample") -> Path:
    return Path(shutil.copytree(FIXTURES / "sample_run", root / name))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """`skillgrad ui` as a real process on a free loopback port."""

    def __init__(self, root: Path, *extra: str, cwd: Path | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = root.parent / f"ui-{self.port}.log"
        cmd = [sys.executable, "-m", "skillgrad.cli", "ui", "--root", str(root), "--port", str(self.port), *extra]
        self._out = open(self.log, "wb")
        self.proc = subprocess.Popen(cmd, stdout=self._out, stderr=subprocess.STDOUT, cwd=cwd or root,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"skillgrad ui exited: {self.log.read_text()}")
            try:
                httpx.get(self.url + "/static/app.css", timeout=1.0)
                return
            except httpx.HTTPError:
                time.sleep(0.2)
        self.close()
        raise RuntimeError(f"skillgrad ui did not start: {self.log.read_text()}")

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self._out.close()


def chromium_path() -> str:
    """Debian's Chromium; a missing browser fails under SKILLGRAD_REQUIRE_ALL=1 and skips otherwise."""
    path = "/usr/bin/chromium"
    if not Path(path).exists():
        if os.environ.get("SKILLGRAD_REQUIRE_ALL") == "1":
            pytest.fail("Chromium is required (SKILLGRAD_REQUIRE_ALL=1) but /usr/bin/chromium is missing")
        pytest.skip("Chromium (/usr/bin/chromium) is not installed")
    return path


CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
