"""`skillgrad sleep schedule` / `unschedule`: one visible crontab line per project, tagged so it can be removed.

    17 3 * * * cd '/path/project' && '/path/skillgrad' sleep run --project '/path/project' --quiet >> ... 2>&1 # skillgrad-sleep:/path/project

The line is plain cron: `crontab -l` shows it and `crontab -e` removes it as well as `unschedule` does.
With `--systemd` (or when there is no crontab but a systemd user manager), a user timer
`skillgrad-sleep-<hash>.timer` + `.service` in ~/.config/systemd/user is installed instead:
`systemctl --user list-timers` shows it.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from skillgrad.errors import UsageError

TAG = "# skillgrad-sleep:"


def _crontab() -> str:
    path = shutil.which("crontab")
    if path is None:
        raise UsageError("crontab not found on PATH; install cron, or run `skillgrad sleep run` from your own scheduler")
    return path


def read_crontab() -> list[str]:
    r = subprocess.run([_crontab(), "-l"], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        if "no crontab" in (r.stderr or "").lower():
            return []
        raise UsageError(f"crontab -l failed: {(r.stderr or '').strip()[:200]}")
    return [line for line in r.stdout.splitlines() if line.strip()]


def _write_crontab(lines: list[str]) -> None:
    r = subprocess.run([_crontab(), "-"], input="".join(f"{line}\n" for line in lines), capture_output=True,
                       text=True, check=False)
    if r.returncode != 0:
        raise UsageError(f"crontab - failed: {(r.stderr or '').strip()[:200]}")


def skillgrad_command() -> str:
    found = shutil.which("skillgrad")
    return shlex.quote(found) if found else f"{shlex.quote(sys.executable)} -m skillgrad.cli"


def cron_line(project: Path, hour: int, minute: int, extra_args: str = "") -> str:
    p = shlex.quote(str(project))
    log = shlex.quote(str(project / ".skillgrad" / "sleep" / "cron.log"))
    args = f" {extra_args.strip()}" if extra_args.strip() else ""
    return (f"{minute} {hour} * * * cd {p} && {skillgrad_command()} sleep run --project {p} --quiet{args} "
            f">> {log} 2>&1 {TAG}{project}")


def schedule(project: Path, *, hour: int = 3, minute: int = 17, extra_args: str = "") -> str:
    """Install (or replace) the project's nightly line; returns it."""
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        raise UsageError(f"--hour {hour} --minute {minute}: hour must be 0-23 and minute 0-59")
    project = Path(project).resolve()
    line = cron_line(project, hour, minute, extra_args)
    kept = [x for x in read_crontab() if not x.endswith(f"{TAG}{project}")]
    _write_crontab([*kept, line])
    return line


def unschedule(project: Path) -> bool:
    """Remove the project's line; False when there was none. Other lines are kept as they were."""
    project = Path(project).resolve()
    lines = read_crontab()
    kept = [x for x in lines if not x.endswith(f"{TAG}{project}")]
    if len(kept) == len(lines):
        return False
    _write_crontab(kept)
    return True


def scheduled(project: Path) -> str | None:
    project = Path(project).resolve()
    return next((x for x in read_crontab() if x.endswith(f"{TAG}{project}")), None)


# ---------------------------------------------------------------- systemd user timer

def _systemctl() -> str | None:
    return shutil.which("systemctl")


def unit_name(project: Path) -> str:
    return "skillgrad-sleep-" + hashlib.sha256(str(Path(project).resolve()).encode()).hexdigest()[:10]


def _unit_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user"


def _systemctl_user(*args: str) -> None:
    exe = _systemctl()
    if exe is None:
        raise UsageError("systemctl not found on PATH; use cron (`skillgrad sleep schedule`) instead")
    r = subprocess.run([exe, "--user", *args], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise UsageError(f"systemctl --user {' '.join(args)} failed: {(r.stderr or '').strip()[:200]}")


def schedule_systemd(project: Path, *, hour: int = 3, minute: int = 17) -> Path:
    """Write and enable a user timer that runs the night daily at hour:minute; returns the timer file."""
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        raise UsageError(f"--hour {hour} --minute {minute}: hour must be 0-23 and minute 0-59")
    project = Path(project).resolve()
    name, d = unit_name(project), _unit_dir()
    d.mkdir(parents=True, exist_ok=True)
    cmd = f"{skillgrad_command()} sleep run --project {shlex.quote(str(project))} --quiet"
    (d / f"{name}.service").write_text(
        f"[Unit]\nDescription=skillgrad sleep for {project}\n\n[Service]\nType=oneshot\n"
        f"WorkingDirectory={project}\nExecStart=/bin/sh -c {shlex.quote(cmd)}\n", encoding="utf-8")
    timer = d / f"{name}.timer"
    timer.write_text(f"[Unit]\nDescription=Nightly skillgrad sleep for {project}\n\n[Timer]\n"
                     f"OnCalendar=*-*-* {hour:02d}:{minute:02d}:00\nPersistent=true\n\n[Install]\n"
                     "WantedBy=timers.target\n", encoding="utf-8")
    _systemctl_user("daemon-reload")
    _systemctl_user("enable", "--now", f"{name}.timer")
    return timer


def unschedule_systemd(project: Path) -> bool:
    name, d = unit_name(project), _unit_dir()
    timer = d / f"{name}.timer"
    if not timer.exists():
        return False
    _systemctl_user("disable", "--now", f"{name}.timer")
    timer.unlink()
    (d / f"{name}.service").unlink(missing_ok=True)
    _systemctl_user("daemon-reload")
    return True
