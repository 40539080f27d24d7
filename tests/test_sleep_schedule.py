"""schedule / unschedule against a fake `crontab` binary on PATH (a real subprocess keeping its table in a file)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from skillgrad.errors import UsageError
from skillgrad.sleep.schedule import TAG, read_crontab, schedule, scheduled, unschedule

FAKE = """#!/bin/sh
TABLE="$FAKE_CRONTAB_FILE"
if [ "$1" = "-l" ]; then
  if [ -f "$TABLE" ]; then cat "$TABLE"; exit 0; fi
  echo "no crontab for $(id -un)" >&2; exit 1
fi
if [ "$1" = "-" ]; then cat > "$TABLE"; exit 0; fi
echo "usage" >&2; exit 2
"""


@pytest.fixture
def fake_crontab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "crontab"
    exe.write_text(FAKE)
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    table = tmp_path / "table"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CRONTAB_FILE", str(table))
    return table


def test_schedule_adds_one_visible_line_and_unschedule_removes_only_it(fake_crontab: Path, tmp_path: Path):
    fake_crontab.write_text("0 1 * * * echo mine\n")
    project = tmp_path / "my project"
    project.mkdir()
    line = schedule(project, hour=3, minute=17)
    assert line.startswith("17 3 * * * ") and "sleep run --project" in line and line.endswith(f"{TAG}{project}")
    assert "'" in line  # the path with a space is quoted
    schedule(project, hour=4, minute=0)  # replaces, never duplicates
    lines = read_crontab()
    assert lines[0] == "0 1 * * * echo mine" and len(lines) == 2 and lines[1].startswith("0 4 * * * ")
    assert scheduled(project) == lines[1]
    assert unschedule(project) is True and read_crontab() == ["0 1 * * * echo mine"]
    assert unschedule(project) is False


def test_empty_crontab_and_bad_times(fake_crontab: Path, tmp_path: Path):
    assert read_crontab() == []
    with pytest.raises(UsageError, match="hour must be 0-23"):
        schedule(tmp_path, hour=24)


def test_no_crontab_binary(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UsageError, match="crontab not found on PATH"):
        schedule(tmp_path)


FAKE_SYSTEMCTL = """#!/bin/sh
echo "$@" >> "$FAKE_SYSTEMCTL_LOG"
exit 0
"""


def test_systemd_user_timer_is_written_enabled_and_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from skillgrad.sleep.schedule import schedule_systemd, unit_name, unschedule_systemd

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "systemctl"
    exe.write_text(FAKE_SYSTEMCTL)
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SYSTEMCTL_LOG", str(log))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    timer = schedule_systemd(tmp_path, hour=3, minute=5)
    assert "OnCalendar=*-*-* 03:05:00" in timer.read_text() and timer.with_suffix(".service").is_file()
    assert f"--user enable --now {unit_name(tmp_path)}.timer" in log.read_text()
    assert unschedule_systemd(tmp_path) is True and not timer.exists()
    assert f"--user disable --now {unit_name(tmp_path)}.timer" in log.read_text()
    assert unschedule_systemd(tmp_path) is False
