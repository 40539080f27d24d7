"""The real CLI's exit codes, signals and run lock, against a scripted OpenAI-compatible server on loopback
(plumbing: the model's replies do not matter here, only how the process ends and what it leaves).

0 completed, 1 failed, 2 usage (also: locked, or max_usd on an unpriced model), 3 answers needed (tests/test_handoff),
4 stopped by budget, 130 interrupted (SIGINT, or SIGTERM even with SIGINT ignored); each with one line.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_cli_support import DEMO_YAML, TINY

from skillgrad.models.fakes import Fault, FaultServer
from skillgrad.runs.lock import LOCK_NAME
from skillgrad.ui.jobs import Job, Jobs


@pytest.fixture
def slow_server() -> Iterator[FaultServer]:
    server = FaultServer(default=Fault.slow(0.15))
    server.start()
    yield server
    server.stop()


def _args(server: FaultServer, run_dir: Path, *extra: str) -> list[str]:
    endpoint = ["-o", "model.backend=openai", "-o", "model.student.model=m", "-o", "model.teacher.model=m",
                "-o", f"model.student.base_url={server.base_url}", "-o", f"model.teacher.base_url={server.base_url}",
                "-o", "model.student.max_retries=0", "-o", "model.teacher.max_retries=0"]
    return [sys.executable, "-m", "skillgrad.cli", "train", "--config", DEMO_YAML, *TINY, *endpoint,
            "--out", str(run_dir), "--quiet", *extra]


ENV = {**os.environ, "OPENAI_API_KEY": "sk-test", "PYTHONUNBUFFERED": "1"}


def _run(args: list[str], timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, env=ENV, timeout=timeout)


def _start(args: list[str], *, ignore_sigint: bool = False) -> subprocess.Popen[str]:
    def child() -> None:  # what a shell script's background job gets
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
                            preexec_fn=child if ignore_sigint else None)


def _wait_for_calls(run_dir: Path, n: int, proc: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        log = run_dir / "events.jsonl"
        if log.is_file() and log.read_text(encoding="utf-8").count('"llm_call"') >= n:
            return
        time.sleep(0.1)
    raise AssertionError("the run made no calls")


def _lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.strip()]


def _summary(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))


def _assert_stopped_interrupted(run_dir: Path) -> None:
    """The interrupted run ends with a run_end record, so listings say "stopped (interrupted)", not "incomplete"."""
    events = [json.loads(x) for x in (run_dir / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {k: events[-1].get(k) for k in ("event", "status", "stopped")} == \
        {"event": "run_end", "status": "stopped", "stopped": "interrupted"}
    shown = _run([sys.executable, "-m", "skillgrad.cli", "runs", "show", str(run_dir), "--json"])
    assert shown.returncode == 0 and json.loads(shown.stdout)["info"]["status"] == "stopped (interrupted)", shown
    listed = _run([sys.executable, "-m", "skillgrad.cli", "runs", "list", str(run_dir.parent)])
    assert "stopped (interrupted)" in " ".join(listed.stdout.split()), listed.stdout


def test_sigint_exits_130_with_one_line_and_the_run_resumes(tmp_path: Path, slow_server: FaultServer) -> None:
    run_dir = tmp_path / "run"
    proc = _start(_args(slow_server, run_dir))
    _wait_for_calls(run_dir, 3, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert _lines(err) == [_lines(err)[-1]] and _lines(err)[-1].startswith("interrupted"), err
    assert not (run_dir / LOCK_NAME).exists()  # released on the way out
    _assert_stopped_interrupted(run_dir)
    done = _run([sys.executable, "-m", "skillgrad.cli", "resume", str(run_dir), "--quiet"])
    assert done.returncode == 0, done.stderr
    assert _summary(run_dir)["status"] == "completed"


def test_sigterm_stops_a_run_that_ignores_sigint(tmp_path: Path, slow_server: FaultServer) -> None:
    """A Stop/cancel from a dashboard or MCP server started by a script: SIGINT is ignored, SIGTERM is not."""
    run_dir = tmp_path / "run"
    proc = _start(_args(slow_server, run_dir), ignore_sigint=True)
    _wait_for_calls(run_dir, 3, proc)
    proc.send_signal(signal.SIGINT)
    time.sleep(1.5)
    assert proc.poll() is None  # ignored, as the shell asked
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert _lines(err)[-1].startswith("interrupted"), err
    assert (run_dir / "runtime_state.json").is_file()
    _assert_stopped_interrupted(run_dir)


def test_dashboard_stop_escalates_to_sigterm_and_the_run_resumes(tmp_path: Path, slow_server: FaultServer,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = tmp_path / "run"
    jobs = Jobs(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the dashboard was started from a script
    try:
        job = jobs.start("train", _args(slow_server, run_dir)[3:], run_dir, cwd=tmp_path)
    finally:
        signal.signal(signal.SIGINT, old)
    deadline = time.monotonic() + 60
    while not (run_dir / "events.jsonl").is_file() or '"llm_call"' not in (run_dir / "events.jsonl").read_text():
        assert time.monotonic() < deadline and job.alive, job.log_tail()
        time.sleep(0.1)
    jobs.stop(job, grace_s=1.0, kill_grace_s=30.0)
    job.proc.wait(timeout=60)
    assert job.returncode == 130, job.log_tail()
    assert job.state == "stopped (exit 130)"
    done = _run([sys.executable, "-m", "skillgrad.cli", "resume", str(run_dir), "--quiet"])
    assert done.returncode == 0, done.stderr


def test_dashboard_stop_kills_what_ignores_sigterm_too(tmp_path: Path) -> None:
    code = "import signal,time; [signal.signal(s, signal.SIG_IGN) for s in (2, 15)]; print('ready', flush=True); " \
           "time.sleep(60)"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    job = Job(1, "train", [], tmp_path, tmp_path / "log", proc)  # type: ignore[arg-type]
    Jobs(tmp_path).stop(job, grace_s=0.3, kill_grace_s=0.3)
    assert proc.wait(timeout=10) == -signal.SIGKILL


def test_budget_stop_exits_4_with_one_line(tmp_path: Path, slow_server: FaultServer) -> None:
    run_dir = tmp_path / "run"
    r = _run(_args(slow_server, run_dir, "-o", "budget.max_calls=3"))
    assert r.returncode == 4, r.stderr
    assert len(_lines(r.stderr)) == 1 and r.stderr.startswith("stopped: budget.max_calls reached"), r.stderr
    assert f"skillgrad resume {run_dir}" in r.stderr
    assert _summary(run_dir)["status"] == "stopped"


def test_failed_run_exits_1(tmp_path: Path) -> None:
    server = FaultServer(default=Fault.error(401, "Incorrect API key provided"))
    server.start()
    try:
        r = _run(_args(server, tmp_path / "run"))
    finally:
        server.stop()
    assert r.returncode == 1, r.stderr
    assert len(_lines(r.stderr)) == 1 and r.stderr.startswith("error:") and "401" in r.stderr, r.stderr


def test_max_usd_with_an_unpriced_model_is_refused_before_any_call(tmp_path: Path, slow_server: FaultServer) -> None:
    r = _run(_args(slow_server, tmp_path / "run", "-o", "budget.max_usd=0.000001"))
    assert r.returncode == 2, r.stderr
    (line,) = _lines(r.stderr)
    assert "budget.max_usd" in line and "teacher" in line and "model.prices_file" in line, line
    assert slow_server.requests == []  # 20 requests went out before
    assert not (tmp_path / "run").exists()
    # With a price for it the same run starts (and its budget then holds).
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"openai": {"m": {"input": 1.0, "output": 1.0}}}), encoding="utf-8")
    r = _run(_args(slow_server, tmp_path / "run", "-o", "budget.max_usd=0.000001",
                   "-o", f"model.prices_file={prices}"))
    assert r.returncode == 4, r.stderr
    assert "budget.max_usd reached" in r.stderr
    assert len(slow_server.requests) <= 2


def test_a_second_writer_exits_2_naming_the_holder(tmp_path: Path, slow_server: FaultServer) -> None:
    """The issue's reproduction: `train --out runs/x &` then the same train again; both used to finish."""
    run_dir = tmp_path / "run"
    first = _start(_args(slow_server, run_dir))
    _wait_for_calls(run_dir, 1, first)
    holder = json.loads((run_dir / LOCK_NAME).read_text(encoding="utf-8"))
    assert holder["pid"] == first.pid and holder["host"] == socket.gethostname()
    r = _run(_args(slow_server, run_dir))
    assert r.returncode == 2, r.stderr
    (line,) = _lines(r.stderr)
    assert f"pid {first.pid}" in line and "being written" in line, line
    _, err = first.communicate(timeout=240)
    assert first.returncode == 0, err  # the holder finished undisturbed
    assert _summary(run_dir)["status"] == "completed"
    keys = [json.loads(x)["key"] for x in (run_dir / "events.jsonl").read_text().splitlines()
            if '"llm_call"' in x and '"cached": false' in x]
    assert len(keys) == len(set(keys))  # no call made twice
    assert not (run_dir / LOCK_NAME).exists()


def test_resume_fresh_and_eval_refuse_a_locked_run(tmp_path: Path, slow_server: FaultServer) -> None:
    run_dir = tmp_path / "run"
    assert _run(_args(slow_server, run_dir, "-o", "budget.max_calls=2")).returncode == 4
    before = sorted(p.name for p in run_dir.iterdir())
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])  # a live writer
    try:
        (run_dir / LOCK_NAME).write_text(json.dumps({"pid": holder.pid, "host": socket.gethostname(),
                                                     "command": "skillgrad train", "since": time.time()}))
        (tmp_path / "s.md").write_text("# skill\n")
        for second in ([sys.executable, "-m", "skillgrad.cli", "resume", str(run_dir), "--quiet"],
                       _args(slow_server, run_dir, "--fresh"),
                       [*_args(slow_server, run_dir)[:3], "eval", *_args(slow_server, run_dir)[4:-3],
                        "--skill", str(tmp_path / "s.md"), "--out", str(run_dir)]):
            r = _run(second)
            assert r.returncode == 2, r.stderr
            (line,) = _lines(r.stderr)
            assert f"pid {holder.pid}" in line and "being written" in line, line
        assert sorted(p.name for p in run_dir.iterdir()) == sorted([*before, LOCK_NAME])  # --fresh deleted nothing
    finally:
        holder.kill()
        holder.wait()


def test_a_stale_lock_is_taken_over_with_a_warning(tmp_path: Path, slow_server: FaultServer) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (run_dir / LOCK_NAME).write_text(json.dumps({"pid": dead.pid, "host": socket.gethostname(),
                                                 "command": "skillgrad train", "since": time.time() - 60}))
    r = _run(_args(slow_server, run_dir, "-o", "budget.max_calls=2"))
    assert r.returncode == 4, r.stderr
    assert r.stderr.startswith(f"warning: {run_dir / LOCK_NAME}: taking over the lock of pid {dead.pid}"), r.stderr
    assert not (run_dir / LOCK_NAME).exists()


@pytest.mark.slow
def test_sigterm_during_a_local_teacher_call_stops_at_once(tmp_path: Path, gguf_path: Path) -> None:
    """The stop comes while the embedded model is busy in a native call: the process does not wait for the
    reply (the exit joins the model's thread), and the run ends 130, stopped, resumable. The abort itself, on
    a reply long enough to tell, is tests/test_local_cancel.py's grammar test (70 s before, under 1 s now)."""
    run_dir = tmp_path / "run"
    proc = _start([sys.executable, "-m", "skillgrad.cli", "train", "--config", DEMO_YAML, *TINY,
                   "-o", "model.teacher.max_tokens=1500", "--out", str(run_dir), "--quiet"])
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:  # the first stage that asks the teacher
        assert proc.poll() is None, proc.communicate()
        log = run_dir / "events.jsonl"
        text = log.read_text(encoding="utf-8") if log.is_file() else ""
        if any(f'"stage": "{s}"' in text for s in ("demonstrate", "reflect")):
            break
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    t0 = time.monotonic()
    _, err = proc.communicate(timeout=120)
    stopped_in = time.monotonic() - t0
    assert proc.returncode == 130, err
    assert stopped_in < 15, stopped_in
    assert (run_dir / "runtime_state.json").is_file()
    _assert_stopped_interrupted(run_dir)
