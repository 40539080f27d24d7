"""`skillgrad sleep harvest --output` mines with the LLM miner when asked (or when the teacher is not the embedded
model, as a night does) and with the heuristic miner otherwise; the file it writes is a valid task file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillgrad.cli import app
from skillgrad.envs.tasks.records import read_tasks
from skillgrad.errors import SkillgradError

FIXTURES = Path(__file__).parent / "fixtures" / "sleep_sessions" / "claude_code" / "projects"


def _sessions(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "status-app"
    project.mkdir()
    home = tmp_path / "claude" / "projects" / "p"
    home.mkdir(parents=True)
    for f in (FIXTURES / "-home-dev-work-status-app").glob("*.jsonl"):
        (home / f.name).write_text(f.read_text(encoding="utf-8").replace("/home/dev/work/status-app", str(project)),
                                   encoding="utf-8")
    return project, tmp_path / "claude"


def _harvest(project: Path, home: Path, out: Path, *extra: str) -> tuple[int, str]:
    r = CliRunner().invoke(app, ["sleep", "harvest", "--output", str(out), "--project", str(project),
                                 "--claude-home", str(home), "--source", "claude_code", "--lookback-hours",
                                 "1000000", "--json", *extra])
    if isinstance(r.exception, SkillgradError):  # what `skillgrad` (cli.main) turns into its exit code and line
        return r.exception.exit_code, str(r.exception)
    return r.exit_code, r.output


def test_the_default_miner_with_the_embedded_teacher_is_the_heuristic_one(tmp_path: Path):
    project, home = _sessions(tmp_path)
    code, output = _harvest(project, home, tmp_path / "t.jsonl")
    assert code == 0, output
    assert json.loads(output)["miner"] == "heuristic"
    assert all(t.meta["miner"] == "heuristic" for t in read_tasks(tmp_path / "t.jsonl"))
    bad = subprocess.run([sys.executable, "-m", "skillgrad.cli", "sleep", "harvest", "--output", "x.jsonl",
                          "--project", str(project), "--miner", "smart"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--miner smart" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_harvest_mines_with_the_llm_miner_on_the_embedded_model(tmp_path: Path, gguf_path: Path):
    project, home = _sessions(tmp_path)
    config = tmp_path / "sleep.yaml"
    config.write_text(json.dumps({"teacher": {"max_tokens": 96}}), encoding="utf-8")
    out = tmp_path / "tasks.jsonl"
    args = ("--config", str(config), "--miner", "llm", "--teacher", f"local:{gguf_path}", "--threads", "1",
            "--max-tasks", "1")  # 3 sessions
    code, output = _harvest(project, home, out, *args)
    events = [json.loads(x) for x in (project / ".skillgrad" / "sleep" / "harvest" / "events.jsonl")
              .read_text(encoding="utf-8").splitlines()]
    mined = [e for e in events if e["event"] == "llm_call" and e.get("stage") == "mine"]
    assert len(mined) == 3 and not any(e.get("cached") for e in mined), events
    if code == 0:  # whatever the 135M model wrote, only valid tasks reach the file
        summary = json.loads(output)
        assert summary["miner"] == "llm" and summary["tasks"] >= 1
        tasks = read_tasks(out)
        assert all(t.meta["miner"] == "llm" and t.task.strip() and (t.judge.checks or t.judge.rubric) for t in tasks)
    else:  # nothing valid mined: the one-line usage error, no file
        assert code == 2 and "no tasks found" in output and not out.exists(), output
    # a rerun replays the finished mining calls from the harvest cache
    _harvest(project, home, out, *args)
    events = [json.loads(x) for x in (project / ".skillgrad" / "sleep" / "harvest" / "events.jsonl")
              .read_text(encoding="utf-8").splitlines()]
    again = [e for e in events if e["event"] == "llm_call" and e.get("stage") == "mine"][3:]
    assert len(again) == 3 and all(e.get("cached") for e in again)
