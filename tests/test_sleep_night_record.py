"""Issue 32 finding 8: sessions in a git worktree count for their repository (a real `git worktree`, and a
git-worktree runner's sibling layout), and every night's night.json holds each target's decision with sample
replies, staged or not."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_sleep_night import FIXTURE_CWD, FIXTURES

from skillgrad.config.schema import EvaluationSection
from skillgrad.sleep.harvest import harvest, under_project
from skillgrad.sleep.night import heldout_decision, run_night
from skillgrad.sleep.settings import SleepSettings


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_worktree_session_counts_for_its_repository(tmp_path: Path) -> None:
    repo = tmp_path / "status-app"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "README.md").write_text("status app\n")
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    wt = tmp_path / "status-app-worktrees" / "feat-clear"  # git-worktree runner layout: a sibling folder
    subprocess.run([*git, "worktree", "add", "-q", "-b", "feat-clear", str(wt)], check=True)
    assert under_project(str(wt), repo) and under_project(str(wt / "src"), repo)
    assert not under_project(str(tmp_path / "other"), repo)
    gone = tmp_path / "status-app-worktrees" / "removed-branch"  # a worktree since removed: the layout decides
    assert under_project(str(gone), repo) and not under_project(str(tmp_path / "status-appx" / "a"), repo)

    home = tmp_path / "claude"
    dst = home / "projects" / ("-" + str(wt).strip("/").replace("/", "-"))
    dst.mkdir(parents=True)
    for f in (FIXTURES / "claude_code" / "projects" / "-home-dev-work-status-app").glob("*.jsonl"):
        (dst / f.name).write_text(f.read_text(encoding="utf-8").replace(FIXTURE_CWD, str(wt)), encoding="utf-8")
    r = harvest(project=repo, claude_home=home, codex_home=tmp_path / "none", sources=["claude_code"], since=None,
                max_sessions=100)
    assert r.digests and all(d.project == str(wt) for d in r.digests)
    assert "other_project" not in r.skipped_counts()


def test_every_decision_keeps_sample_replies_and_night_json_keeps_the_targets(tmp_path: Path) -> None:
    res = [{"task_id": f"t{i}", "task": f"task {i}", "night": "n", "before": 0.0, "after": 1.0, "hard_before": 0.0,
            "hard_after": 1.0, "reply_before": "npm install", "reply_after": "pnpm add"} for i in range(2)]
    d = heldout_decision(SleepSettings(min_heldout=5), SimpleNamespace(evaluation=EvaluationSection()), res)
    assert not d["enough"] and d["sample_replies"], d  # kept pending, and the replies are there to read
    project = tmp_path / "p"
    project.mkdir()
    (project / "SKILL.md").write_text("# Status\n")
    s = SleepSettings(project=str(project), skill=str(project / "SKILL.md"), miner="heuristic", evolve_memory=False,
                      claude_home=str(tmp_path / "none"), codex_home=str(tmp_path / "none"), source="claude_code")
    r = asyncio.run(run_night(s, digests=[]))
    night = json.loads((Path(r["night_dir"]) / "night.json").read_text())
    assert night["status"] == r["status"] and "targets" in night and "tasks" in night
