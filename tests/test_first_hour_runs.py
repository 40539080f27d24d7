"""`skillgrad runs list` shows a run whose writer is alive as running (the dashboard's word), and `runs show` prints
the held-out score beside its baseline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ui_helpers import make_run

from tests.test_cli_support import run_cli

HOLD = """
import sys, time
from pathlib import Path
from skillgrad.runs.lock import run_lock
with run_lock(Path(sys.argv[1]), "skillgrad train"):
    print("held", flush=True)
    time.sleep(120)
"""


def test_runs_list_shows_a_live_run_as_running(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    run = make_run(root, "live", steps=2, finished=False)
    make_run(root, "stale", steps=2, finished=False, seed=1)
    writer = subprocess.Popen([sys.executable, "-c", HOLD, str(run)], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "held"
        r = run_cli(["runs", "list", str(root)], tmp_path, env={"COLUMNS": "200"})
    finally:
        writer.kill()
        writer.wait()
    assert r.rc == 0, str(r)
    rows = {line.split("│")[1].strip(): line for line in r.out.splitlines() if line.count("│") > 3}
    assert " running " in rows["live"], r.out
    assert " incomplete " in rows["stale"], r.out  # nobody writes it: not running


def test_runs_show_prints_the_held_out_score(tmp_path: Path) -> None:
    run = make_run(tmp_path / "runs", "done", steps=2)
    r = run_cli(["runs", "show", str(run)], tmp_path)
    assert r.rc == 0, str(r)
    assert "held-out test (hard): 0.100 -> 0.200" in r.out, r.out
