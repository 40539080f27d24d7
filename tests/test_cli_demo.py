"""`skillgrad demo --small` end to end on the embedded model, reduced to one step so it stays fast."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli_support import TINY, run_cli
from test_lean_install import blocked_env

pytestmark = pytest.mark.slow


def test_small_demo_prints_results_and_diff(tmp_path: Path, gguf_path: Path) -> None:
    # run as on a lean install: every optional extra refused at import (tests/lean_blocker)
    log = tmp_path / "refused-imports.txt"
    lean = {k: v for k, v in blocked_env(log).items() if k in ("PYTHONPATH", "SKILLGRAD_BLOCK_IMPORTS",
                                                                "SKILLGRAD_BLOCK_LOG")}
    r = run_cli(["demo", "--small", "--seed", "3", *TINY], tmp_path, env=lean)
    assert r.rc == 0, str(r)
    assert not log.exists(), f"the demo imported optional extras: {log.read_text()}"
    run_dir = tmp_path / "runs" / "demo-seed3-small"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["total_steps"] == 1
    best = (run_dir / "best_skill.md").read_text(encoding="utf-8")
    initial = (run_dir / "skills" / "skill_v0000.md").read_text(encoding="utf-8")

    # the test table: initial / best / final rows with the summary's numbers
    assert "test hard" in r.out
    rows = {line.split()[1]: line for line in r.out.splitlines() if line.startswith("│ ")}
    assert {"initial", "best", "final"} <= set(rows), r.out
    assert f"{100 * summary['test_hard']:.1f}%" in rows["best"]
    assert f"{100 * summary['baseline_test_hard']:.1f}%" in rows["initial"]
    assert "held-out test: initial" in r.out

    # the diff: one line per changed skill line, never wrapped, so every added line is a line of best_skill.md
    assert "--- initial" in r.out and "+++ trained" in r.out, r.out
    diff = r.out.split("+++ trained", 1)[1].split("skillgrad run", 1)[0]
    added = [line[1:] for line in diff.splitlines() if line.startswith("+")]
    best_lines = best.splitlines()
    assert all(line in best_lines for line in added), (added, best_lines)
    if best != initial:
        assert added, r.out
    assert "runs/demo-seed3-small/best_skill.md" in r.out


    # rerunning the finished demo with jsonl: stdout is nothing but events, and nothing is recomputed
    r = run_cli(["demo", "--small", "--seed", "3", *TINY, "--log-format", "jsonl"], tmp_path)
    assert r.rc == 0, str(r)
    events = [json.loads(line) for line in r.out.splitlines() if line.strip()]
    assert events[-1]["event"] == "run_end" and events[-1]["status"] == "completed", r.out
    assert not [e for e in events if e["event"] == "llm_call" and not e.get("cached")], r.out
    assert (run_dir / "best_skill.md").read_text(encoding="utf-8") == best
