"""The sleep CLI without a model: harvest to a reviewable task file, status, and one-line usage errors (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "sleep_sessions" / "claude_code" / "projects"


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skillgrad.cli", "sleep", *args], capture_output=True, text=True,
                          timeout=120)


def test_harvest_writes_tasks_that_a_night_accepts(tmp_path: Path):
    project = tmp_path / "status-app"
    project.mkdir()
    home = tmp_path / "claude" / "projects" / "p"
    home.mkdir(parents=True)
    for f in (FIXTURES / "-home-dev-work-status-app").glob("*.jsonl"):
        (home / f.name).write_text(f.read_text().replace("/home/dev/work/status-app", str(project)))
    out = tmp_path / "tasks.jsonl"
    r = _cli("harvest", "--output", str(out), "--project", str(project), "--claude-home", str(tmp_path / "claude"),
             "--source", "claude_code", "--lookback-hours", "1000000", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["tasks"] == 10
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {row["split"] for row in rows} <= {"train", "val", "test"} and all(row["task"].startswith("Give me")
                                                                            for row in rows)
    assert not (project / ".skillgrad" / "sleep" / "state.json").exists()  # a review does not advance it


def test_usage_errors_are_one_line_exit_2(tmp_path: Path):
    r = _cli("adopt", "--project", str(tmp_path))
    assert r.returncode == 2 and "no staged proposal" in r.stderr and r.stderr.count("\n") == 1
    r = _cli("undo", "--project", str(tmp_path))
    assert r.returncode == 2 and "no adoption to undo" in r.stderr
    r = _cli("run", "--project", str(tmp_path / "missing"))
    assert r.returncode == 2 and "not a directory" in r.stderr
    bad = tmp_path / "tasks.jsonl"
    bad.write_text('{"task_id": "a"}\n')
    r = _cli("run", "--project", str(tmp_path), "--tasks-file", str(bad))
    assert r.returncode == 2 and f"{bad}:1: task 'a': task: Field required" in r.stderr
    r = _cli("status", "--project", str(tmp_path))
    assert r.returncode == 0 and "no proposals staged" in r.stdout


def test_status_of_a_missing_project_is_a_usage_error(tmp_path: Path):
    r = _cli("status", "--project", str(tmp_path / "nonexistent"))
    assert r.returncode == 2 and "not a directory" in r.stderr and r.stderr.count("\n") == 1


def test_first_harvest_with_nothing_says_the_window_not_since_last(tmp_path: Path):
    r = _cli("harvest", "--output", str(tmp_path / "t.jsonl"), "--project", str(tmp_path), "--claude-home",
             str(tmp_path / "none"), "--source", "claude_code", "--lookback-hours", "24")
    assert r.returncode == 2 and "in the last 24 hours" in r.stderr and "since the last harvest" not in r.stderr


def test_budget_hint_names_the_limit_that_ran_out():
    from skillgrad.sleep.night import budget_flag

    assert budget_flag("budget.max_minutes reached (30 of 30); raise it or resume later") == "--max-minutes"
    assert budget_flag("budget.max_calls reached (4 done and 0 in flight of 4)") == "--max-calls"
    assert "--max-tokens" in budget_flag("stopped")


def test_harvest_review_accepts_drops_and_edits(tmp_path: Path):
    from typer.testing import CliRunner

    from skillgrad.cli import app
    from skillgrad.envs.tasks.records import read_tasks

    project = tmp_path / "status-app"
    project.mkdir()
    home = tmp_path / "claude" / "projects" / "p"
    home.mkdir(parents=True)
    for f in sorted((FIXTURES / "-home-dev-work-status-app").glob("*.jsonl"))[:4]:
        (home / f.name).write_text(f.read_text().replace("/home/dev/work/status-app", str(project)))
    out = tmp_path / "tasks.jsonl"
    r = CliRunner().invoke(app, ["sleep", "harvest", "--output", str(out), "--project", str(project),
                                 "--claude-home", str(tmp_path / "claude"), "--source", "claude_code",
                                 "--lookback-hours", "1000000", "--review"], input="a\nd\ne\nStatus of the mail relay?\nq\n")
    assert r.exit_code == 0, r.output
    assert "evidence" in r.output and "mined task" in r.output  # the table
    rows = read_tasks(out)
    assert len(rows) == 2 and rows[1].task == "Status of the mail relay?"
    assert rows[0].meta["evidence"][0]["words"].startswith("Give me the status")
