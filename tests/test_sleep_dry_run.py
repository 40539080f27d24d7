"""`sleep dry-run` leaves no trace: the harvest state is unchanged, so the `sleep run` after it finds the same
sessions (it found none: the dry run had advanced the cursor). Fast: one mined task, so neither night trains."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from test_sleep_night import _setup

from skillgrad.sleep.night import harvest_state_path, run_night
from skillgrad.sleep.settings import SleepSettings


def _night(project: Path, home: Path, tmp_path: Path, dry_run: bool) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    settings = SleepSettings(project=str(project), skill=str(project / ".claude" / "skills" / "status" / "SKILL.md"),
                             evolve_memory=False, source="claude_code", claude_home=str(home),
                             codex_home=str(tmp_path / "no-codex"), lookback_hours=1_000_000, max_tasks=1,
                             miner="heuristic")
    seen: list[dict[str, Any]] = []
    return asyncio.run(run_night(settings, dry_run=dry_run, listeners=[seen.append])), seen


def test_dry_run_leaves_the_harvest_for_the_real_night(tmp_path: Path, gguf_path: Path) -> None:
    project, home, _ = _setup(tmp_path, gguf_path)
    state = harvest_state_path(project)
    dry, dry_events = _night(project, home, tmp_path, dry_run=True)
    harvested = [e["sessions"] for e in dry_events if e["event"] == "sleep_harvest"]
    assert harvested and harvested[0] > 0, dry
    assert not state.exists()  # no cursor, no session ids recorded

    real, real_events = _night(project, home, tmp_path, dry_run=False)
    assert [e["sessions"] for e in real_events if e["event"] == "sleep_harvest"] == harvested, real
    assert state.exists()  # the real night records what it used: the next one starts after it
