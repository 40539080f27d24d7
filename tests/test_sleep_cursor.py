"""Nights never waste sessions (issue 32, finding 2): the cursor moves only past sessions a night used or judged
not minable; a session the heuristic miner found nothing in waits for an agent miner; `--lookback-hours` always
applies; "no new sessions" is said as such; `sleep status` shows the window and what waits. Sessions in the
Claude Code on-disk format (tests/fixtures/sleep_sessions)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from test_sleep_night import FIXTURE_CWD, FIXTURES

from skillgrad.sleep.harvest import load_state
from skillgrad.sleep.night import (
    harvest_digests,
    harvest_state_path,
    open_night,
    record_night_harvest,
    run_night,
)
from skillgrad.sleep.settings import SleepSettings


def _project(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "status-app"
    project.mkdir()
    home = tmp_path / "claude"
    dst = home / "projects" / ("-" + str(project).strip("/").replace("/", "-"))
    dst.mkdir(parents=True)
    for f in (FIXTURES / "claude_code" / "projects" / "-home-dev-work-status-app").glob("*.jsonl"):
        (dst / f.name).write_text(f.read_text(encoding="utf-8").replace(FIXTURE_CWD, str(project)), encoding="utf-8")
    return project, home


def _settings(project: Path, home: Path, miner: str, lookback: float = 1_000_000) -> SleepSettings:
    return SleepSettings(project=str(project), source="claude_code", claude_home=str(home),
                         codex_home=str(project / "no-codex"), lookback_hours=lookback, miner=miner,
                         evolve_memory=False)


def test_sessions_the_heuristic_miner_found_nothing_in_wait_for_an_agent_miner(tmp_path: Path) -> None:
    project, home = _project(tmp_path)
    night = open_night(project)
    found = harvest_digests(_settings(project, home, "heuristic"), project, night)
    assert len(found) >= 3
    record_night_harvest(project, night, [])  # the heuristic miner judged every session not minable
    st = load_state(harvest_state_path(project))
    oldest = min(d.ended_at for d in found)
    assert st.heuristic_cursor > oldest > st.cursor  # the agent miner's cursor stays before them
    again = harvest_digests(_settings(project, home, "heuristic"), project, open_night(project, fresh=True))
    assert again == []  # the heuristic miner does not read them again
    agent = harvest_digests(_settings(project, home, "llm"), project, open_night(project, fresh=True))
    assert sorted(d.session_id for d in agent) == sorted(d.session_id for d in found)  # --teacher handoff sees them


def test_used_sessions_are_settled_and_capped_ones_hold_the_cursor(tmp_path: Path) -> None:
    project, home = _project(tmp_path)
    s = _settings(project, home, "llm").model_copy(update={"max_sessions": 2})
    night = open_night(project)
    first = harvest_digests(s, project, night)
    assert len(first) == 2 and night.data["harvest"]["waiting"]  # older sessions capped out of this night
    from skillgrad.envs.tasks.records import Judge, TaskRecord

    used = [TaskRecord(task_id=f"t{i}", task="x", judge=Judge(kind="rubric", rubric="r"),
                       meta={"session": d.session_id}) for i, d in enumerate(first)]
    record_night_harvest(project, night, used)
    st = load_state(harvest_state_path(project))
    assert {how for how, _ in st.settled.values()} == {"used"}
    newest = max(d.ended_at for d in first)
    assert st.cursor < newest  # the capped-out sessions are older: the cursor stays before them
    rest = harvest_digests(s, project, open_night(project, fresh=True))
    assert rest and not {d.session_id for d in rest} & {d.session_id for d in first}  # used ones skipped by id


def test_no_new_sessions_is_said_as_such(tmp_path: Path) -> None:
    project, home = _project(tmp_path)
    (project / "SKILL.md").write_text("# Status\n\nKeep replies short.\n")
    s = _settings(project, home, "heuristic").model_copy(update={"skill": str(project / "SKILL.md")})
    r = asyncio.run(run_night(s, digests=[]))
    assert r["status"] == "nothing_to_learn" and r["message"].startswith("no new sessions"), r


def test_status_shows_the_cursor_the_window_and_what_waits(tmp_path: Path) -> None:
    project, home = _project(tmp_path)
    night = open_night(project)
    harvest_digests(_settings(project, home, "heuristic"), project, night)
    record_night_harvest(project, night, [])
    night.save(status="nothing_to_learn", night_id=night.root.name)
    r = subprocess.run([sys.executable, "-m", "skillgrad.cli", "sleep", "status", "--project", str(project),
                        "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    h = json.loads(r.stdout)["harvest"]
    assert h["waiting_for_agent"] >= 3 and h["heuristic_cursor"] and h["since"]
