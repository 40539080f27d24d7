"""Plain progress lines for logs: one per stage end, one every interval during a long stage, and the CLI
writing them when its stdout is a pipe (the live display needs a terminal)."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

import pytest
from test_cli_support import TINY, run_cli

from skillgrad.progress import LogProgress

LINE = re.compile(r"^\[ *\d+[smh0-9]*\] ")


def _events() -> list[dict]:
    return [
        {"event": "run_start", "env": "facts", "teacher": "t", "student": "s", "total_steps": 2,
         "threads_note": "1 thread (1 of 2 cores free, load 1.0; set model.<role>.n_threads to override)"},
        {"event": "stage_start", "stage": "rollout", "step": 1},
        {"event": "llm_call", "prompt_tokens": 100, "completion_tokens": 20},
        {"event": "task_done", "stage": "rollout", "done": 1, "total": 4},
    ]


def test_stage_end_and_periodic_lines() -> None:
    buf = io.StringIO()
    p = LogProgress(buf, interval=0.2)
    try:
        for ev in _events():
            p(ev)
        time.sleep(0.7)  # a long stage: the ticker writes while no event arrives
        p({"event": "stage_end", "stage": "rollout", "step": 1, "seconds": 0.7})
        p({"event": "stage_start", "stage": "reflect", "step": 2})
        p({"event": "stage_end", "stage": "reflect", "step": 2, "seconds": 0.1})
        p({"event": "run_end", "status": "completed"})
    finally:
        p.close()
    lines = buf.getvalue().splitlines()
    assert all(LINE.match(line) for line in lines), lines
    assert "starting run: env facts, 2 steps" in lines[0] and "1 thread (1 of 2 cores free" in lines[0]
    running = [line for line in lines if "running" in line]
    assert running and "step 1/2 rollout running" in running[0] and "1/4 items, 1 calls" in running[0], lines
    assert "120 tokens" in running[0] and "stage ETA" in running[0]
    ended = [line for line in lines if " done in " in line]
    assert "step 1/2 rollout done in" in ended[0]
    assert "step 2/2 reflect done in" in ended[1] and "ETA " in ended[1] and "ETA ?" not in ended[1], ended
    assert lines[-1].split("] ", 1)[1].startswith("run completed after 1 provider call, 120 tokens")
    n = len(lines)
    time.sleep(0.5)
    assert len(buf.getvalue().splitlines()) == n  # closed: the ticker stopped


def test_no_periodic_line_between_stages() -> None:
    buf = io.StringIO()
    p = LogProgress(buf, interval=0.1)
    try:
        p({"event": "stage_start", "stage": "rollout", "step": 1})
        p({"event": "stage_end", "stage": "rollout", "step": 1, "seconds": 0.0})
        time.sleep(0.4)
    finally:
        p.close()
    assert "running" not in buf.getvalue()


@pytest.mark.slow
def test_cli_writes_plain_progress_into_a_pipe(tmp_path: Path, gguf_path: Path) -> None:
    r = run_cli(["demo", "--small", "--seed", "5", *TINY], tmp_path)
    assert r.rc == 0, str(r)
    lines = [line for line in r.out.splitlines() if LINE.match(line)]
    assert lines and "starting run: env facts, 1 step," in lines[0], r.out
    assert any(re.search(r"step 1/1 rollout done in \d+s: 5/5 items, \d+ calls", line) for line in lines), r.out
    assert lines[-1].split("] ", 1)[1].startswith("run completed after"), r.out
    assert "\x1b[" not in r.out  # no colour or cursor codes in a log
    # --log-format jsonl stays nothing but events
    r = run_cli(["demo", "--small", "--seed", "5", *TINY, "--log-format", "jsonl"], tmp_path)
    assert r.rc == 0 and not [line for line in r.out.splitlines() if LINE.match(line)], str(r)
    # --quiet: the result only
    r = run_cli(["demo", "--small", "--seed", "5", *TINY, "--quiet"], tmp_path)
    assert r.rc == 0 and not [line for line in r.out.splitlines() if LINE.match(line)], str(r)


def _lines(events: list[dict]) -> list[str]:
    buf = io.StringIO()
    p = LogProgress(buf, interval=3600)
    try:
        for ev in events:
            p(ev)
    finally:
        p.close()
    return [line.split("] ", 1)[1] for line in buf.getvalue().splitlines()]


def test_overlapping_stages_end_under_their_own_names() -> None:
    """The worked examples run beside the analysts, the initial skill's test beside the best one's (the order of a
    real run's events.jsonl): each stage_end line names its own stage, not the last one started."""
    lines = _lines([
        {"event": "run_start", "env": "facts", "teacher": "t", "student": "s", "total_steps": 1},
        {"event": "stage_start", "stage": "demonstrate", "step": 1},
        {"event": "stage_start", "stage": "reflect", "step": 1},
        {"event": "stage_end", "stage": "demonstrate", "step": 1, "seconds": 24.3},
        {"event": "stage_end", "stage": "reflect", "step": 1, "seconds": 67.1},
        {"event": "stage_start", "stage": "test_initial", "step": 1},
        {"event": "stage_start", "stage": "test_best", "step": 1},
        {"event": "stage_end", "stage": "test_initial", "step": 1, "seconds": 12.7},
        {"event": "stage_end", "stage": "test_best", "step": 1, "seconds": 14.2},
    ])
    ended = [line.split(" done in ")[0] for line in lines if " done in " in line]
    assert ended == ["step 1/1 demonstrate", "step 1/1 reflect", "step 1/1 test_initial", "step 1/1 test_best"]


def test_the_eta_includes_the_run_end_test() -> None:
    """After the last step's gate only the run-end test is left: the ETA counts it (both skills on every test
    item, at the pace the rollouts measured) instead of saying a few seconds."""
    from skillgrad.progress import _Tally

    t = _Tally()
    t.update({"event": "run_start", "total_steps": 2, "n_val": 10, "n_test": 30})
    t.update({"event": "stage_start", "stage": "rollout", "step": 1})
    t.update({"event": "stage_end", "stage": "rollout", "step": 1, "seconds": 20.0, "counts": {"n": 10}})
    t.update({"event": "stage_start", "stage": "rollout", "step": 2})
    eta = t.run_eta()
    assert eta is not None and eta >= 2 * 30 * 2.0  # 120 s of testing still to come, besides step 2
    t.update({"event": "stage_start", "stage": "test_initial", "step": 2})
    later = t.run_eta()
    assert later is not None and later < 60  # once the test has started, its own stage ETA covers it


def test_the_budget_stop_counts_provider_calls_as_max_calls_does() -> None:
    """budget.max_calls counts calls sent to a provider; the stop line said "after 45 calls" under max_calls=40 because
    it counted cache hits too. It now counts what the budget counts and names the cache hits apart."""
    events: list[dict] = [{"event": "run_start", "env": "facts", "teacher": "t", "student": "s", "total_steps": 1}]
    events += [{"event": "llm_call", "cached": i < 5, "prompt_tokens": 10, "completion_tokens": 2} for i in range(45)]
    events.append({"event": "run_end", "status": "stopped", "reason": "budget.max_calls reached (40 done and 0 in "
                   "flight of 40); raise it or resume later"})
    last = _lines(events)[-1]
    assert last.endswith("after 40 provider calls and 5 answered from the cache, 540 tokens"), last
