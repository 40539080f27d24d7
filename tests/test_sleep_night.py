"""An end-to-end night with the embedded model on fixture Claude Code sessions, through the real CLI:
tasks mined, the night killed (SIGKILL) in the middle and continued, a proposal staged, adopted and undone;
hand-written text is never touched and the live files are byte-identical after undo."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "sleep_sessions"
FIXTURE_CWD = "/home/dev/work/status-app"
HAND_SKILL = b"---\nname: status\ndescription: Team status replies.\n---\n# Status replies\n\nKeep replies short.\n"
HAND_MEMORY = b"# Project notes\n\nWe deploy on Fridays. caf\xc3\xa9\n"


def _setup(tmp_path: Path, gguf: Path) -> tuple[Path, Path, Path]:
    project = tmp_path / "status-app"
    (project / ".claude" / "skills" / "status").mkdir(parents=True)
    (project / ".claude" / "skills" / "status" / "SKILL.md").write_bytes(HAND_SKILL)
    (project / "CLAUDE.md").write_bytes(HAND_MEMORY)
    home = tmp_path / "claude"
    src = FIXTURES / "claude_code" / "projects" / "-home-dev-work-status-app"
    dst = home / "projects" / ("-" + str(project).strip("/").replace("/", "-"))
    dst.mkdir(parents=True)
    for f in src.glob("*.jsonl"):  # the sessions ran in the temporary project
        (dst / f.name).write_text(f.read_text(encoding="utf-8").replace(FIXTURE_CWD, str(project)), encoding="utf-8")
    config = tmp_path / "sleep.yaml"
    role = {"provider": "local", "model": str(gguf), "threads": 1}
    config.write_text(json.dumps({
        "skill": str(project / ".claude" / "skills" / "status" / "SKILL.md"), "evolve_memory": False,
        "student": role, "teacher": {**role, "max_tokens": 120}, "max_tasks": 10, "batch_size": 4, "min_heldout": 1,
        "val_fraction": 0.25, "test_fraction": 0.25,
        "task_max_tokens": 12, "budget": {"max_minutes": 10, "max_tokens": 200000}}), encoding="utf-8")
    return project, home, config


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "skillgrad.cli", "sleep", *args]


def _night_dirs(project: Path) -> list[Path]:
    d = project / ".skillgrad" / "sleep" / "nights"
    return sorted(d.iterdir()) if d.is_dir() else []


@pytest.mark.slow
def test_a_night_mines_survives_a_kill_stages_adopts_and_undoes(tmp_path, gguf_path):
    project, home, config = _setup(tmp_path, gguf_path)
    run = _cli("run", "--project", str(project), "--config", str(config), "--claude-home", str(home),
               "--codex-home", str(tmp_path / "no-codex"), "--source", "claude_code", "--lookback-hours", "1000000",
               "--json")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}

    # 1. Kill the night in the middle of training: after some training rollouts were written.
    proc = subprocess.Popen(run, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    deadline = time.monotonic() + 120
    killed = False
    while time.monotonic() < deadline and proc.poll() is None:
        nights = _night_dirs(project)
        results = nights[0] / "steps" / "step_0001" / "rollout" / "results.jsonl" if nights else None
        if results is not None and results.is_file() and results.read_text(encoding="utf-8").strip():
            os.killpg(proc.pid, signal.SIGKILL)
            killed = True
            break
        time.sleep(0.2)
    proc.wait(timeout=30)
    assert killed, f"the night ended before it could be killed: {proc.stderr.read().decode()[-2000:]}"
    night = _night_dirs(project)[0]
    state = json.loads((night / "night.json").read_text(encoding="utf-8"))
    assert state["status"] == "training" and state["n_tasks"] >= 6
    assert (project / ".skillgrad" / "sleep" / "state.json").is_file()  # the harvest was used: since advances
    tasks = [json.loads(line) for line in (night / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(t["judge"]["checks"][-1] == {"op": "regex", "arg": "^DONE:"} for t in tasks)
    assert {t["split"] for t in tasks} == {"train", "val", "test"} and all(t.get("origin", "real") == "real"
                                                                           for t in tasks)
    kept_before = (night / "selection_eval_baseline" / "results.jsonl").read_text(encoding="utf-8")
    assert (project / ".claude" / "skills" / "status" / "SKILL.md").read_bytes() == HAND_SKILL

    # 2. The rerun continues the same night: nothing done is lost, finished calls replay from the cache.
    done = subprocess.run(run, capture_output=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    result = json.loads(done.stdout)
    assert _night_dirs(project) == [night] and result["night_dir"] == str(night)
    assert result["status"] == "staged", result
    assert (night / "selection_eval_baseline" / "results.jsonl").read_text(encoding="utf-8").startswith(kept_before)
    events = [json.loads(line) for line in (night / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [e["resumed"] for e in events if e["event"] == "run_start"] == [False, True]
    # finished work is not paid again: no call is made twice without the cache
    paid = [e["key"] for e in events if e["event"] == "llm_call" and e.get("ok") and not e.get("cached")]
    assert paid and len(paid) == len(set(paid))
    skill = result["targets"]["skill"]
    assert skill["accepted"] and skill["val_score_after"] > skill["val_score_before"]

    # 3. The stage folder: proposals, diff, report, evidence, manifest with pins.
    stage = Path(result["stage_dir"])
    manifest = json.loads((stage / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["status"] == "staged" and {"diff.patch", "report.md", "report.json"} <= {
        p.name for p in stage.iterdir()}
    assert (stage / "evidence" / "tasks.json").is_file()
    live_skill = Path(manifest["files"][0]["live"])
    proposed = (stage / manifest["files"][0]["proposed"]).read_bytes()
    assert proposed.startswith(HAND_SKILL) and b"SKILLGRAD:LEARNED START" in proposed
    assert (project / "CLAUDE.md").read_bytes() == HAND_MEMORY  # nothing live changed before adopt

    # 4. Adopt (explicit), then undo: byte-identical live files.
    adopt = subprocess.run(_cli("adopt", "--project", str(project), "--json"), capture_output=True, timeout=60)
    assert adopt.returncode == 0, adopt.stderr.decode()
    assert live_skill.read_bytes() == proposed
    status = subprocess.run(_cli("status", "--project", str(project), "--json"), capture_output=True, timeout=60)
    assert json.loads(status.stdout)["proposals"][0]["status"] == "adopted"
    undo = subprocess.run(_cli("undo", "--project", str(project)), capture_output=True, timeout=60)
    assert undo.returncode == 0, undo.stderr.decode()
    assert live_skill.read_bytes() == HAND_SKILL and (project / "CLAUDE.md").read_bytes() == HAND_MEMORY
    again = subprocess.run(_cli("undo", "--project", str(project)), capture_output=True, timeout=60)
    assert again.returncode == 2 and b"no adoption to undo" in again.stderr
    shutil.rmtree(home)
