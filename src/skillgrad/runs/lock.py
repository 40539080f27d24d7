"""One writer per run directory: `run.lock` holds the writer's pid and host for the whole run.

A second `train`, `resume`, writing `eval` or Sleep night on the same directory would repeat calls, duplicate
result lines and spend a second budget; it is refused (exit 2) naming the holder. A lock left by a process that
died (same host, pid gone) is taken over with a warning. A lock from another host cannot be checked from here:
it holds until that process ends or the user deletes the file. A lock covers the folders below it too: a
Sleep night locks `.skillgrad/sleep`, so its run directories under `nights/` get no second writer either.
"""

from __future__ import annotations

import json
import os
import socket
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillgrad.errors import UsageError

LOCK_NAME = "run.lock"


class RunLocked(UsageError):
    """Another live process writes this run directory."""


class StaleLockWarning(UserWarning):
    """A lock from a dead process was taken over."""


@dataclass(frozen=True)
class Holder:
    pid: int
    host: str
    command: str
    since: float
    started: str = ""  # the process's start time in clock ticks (/proc/<pid>/stat): tells a reused pid apart

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since)) if self.since else "?"
        return f"pid {self.pid} on {self.host} ({self.command or 'skillgrad'}, since {when})"


def _read(path: Path) -> Holder | None:
    try:
        d: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return Holder(int(d["pid"]), str(d["host"]), str(d.get("command", "")), float(d.get("since", 0)),
                      str(d.get("started", "")))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        # Being written this instant (created empty, then filled) or damaged: an unknown holder on this host.
        return Holder(0, socket.gethostname(), "unreadable lock", 0.0)


def _proc_stat(pid: int) -> list[str]:
    """Fields of /proc/<pid>/stat after the command name ([0] state, [19] start time); [] where unreadable."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def _alive(h: Holder) -> bool:
    if h.pid <= 0:
        return False
    try:
        os.kill(h.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    stat = _proc_stat(h.pid)
    if stat and stat[0] == "Z":  # killed, not yet reaped by its parent: it writes nothing more
        return False
    # the pid now names another process (after a reboot or wrap-around): the writer is gone
    return not (h.started and len(stat) > 19 and stat[19] != h.started)


def _stale(h: Holder) -> bool:
    return h.host == socket.gethostname() and not _alive(h) and h.command != "unreadable lock"


def _mine(h: Holder) -> bool:
    return h.pid == os.getpid() and h.host == socket.gethostname()


def holder(run_dir: Path) -> Holder | None:
    """The live writer of `run_dir` or of a folder above it (another process), None when the run is free."""
    for d in [Path(run_dir).absolute(), *Path(run_dir).absolute().parents]:
        h = _read(d / LOCK_NAME)
        if h is not None and not _stale(h) and not _mine(h):
            return h
    return None


def refuse_if_locked(run_dir: Path, what: str = "this run") -> None:
    """For faces that launch a writer (dashboard, MCP): raise RunLocked when `run_dir` has a live writer."""
    h = holder(run_dir)
    if h is not None:
        raise RunLocked(_message(Path(run_dir), h, what))


def _message(run_dir: Path, h: Holder, what: str) -> str:
    return (f"{run_dir} is being written by {h.describe()}; wait for it to finish or stop it before starting "
            f"{what} (a lock left by a crashed process on another host: delete {run_dir / LOCK_NAME})")


def _create(path: Path, command: str) -> bool:
    stat = _proc_stat(os.getpid())
    record = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "command": command,
                         "since": round(time.time(), 3), "started": stat[19] if len(stat) > 19 else ""})
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(record)
    return True


def acquire(run_dir: Path, command: str) -> Path:
    """Take the lock of `run_dir` (created if missing) or raise RunLocked naming the holder."""
    run_dir = Path(run_dir)
    above = next((h for d in Path(run_dir).absolute().parents if (h := _read(d / LOCK_NAME)) is not None
                  and not _stale(h) and not _mine(h)), None)
    if above is not None:
        raise RunLocked(_message(run_dir, above, f"another writer ({command})"))
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / LOCK_NAME
    for _ in range(3):
        if _create(path, command):
            return path
        h = _read(path)
        if h is None:
            continue  # released in between
        if _mine(h):
            return path  # this process already holds it (a night that trains in the same process)
        if not _stale(h):
            if h.command == "unreadable lock":
                time.sleep(0.2)  # the other writer may be filling it in
                if _read(path) != h:
                    continue
            raise RunLocked(_message(run_dir, h, f"another writer ({command})"))
        warnings.warn(f"{path}: taking over the lock of {h.describe()}, which is no longer running",
                      StaleLockWarning, stacklevel=2)
        path.unlink(missing_ok=True)
    raise RunLocked(f"{path}: could not take the run lock (other processes keep taking it); retry")


def release(path: Path) -> None:
    """Remove the lock if this process holds it (never another writer's)."""
    h = _read(path)
    if h is not None and _mine(h):
        path.unlink(missing_ok=True)


@contextmanager
def run_lock(run_dir: Path, command: str) -> Iterator[Path]:
    """Hold the lock of `run_dir` for the block. Nested use in the same process is a no-op."""
    path = Path(run_dir) / LOCK_NAME
    held = _read(path)
    if held is not None and _mine(held):
        yield path
        return
    acquire(run_dir, command)
    try:
        yield path
    finally:
        release(path)
