"""Runs, resumes and evaluations launched from the page: real `skillgrad` subprocesses.

The dashboard does not train; it starts the same CLI a user would type and stops it with SIGINT, which
the CLI turns into a clean exit (the run has checkpointed after every stage, so `resume` continues it);
SIGTERM after a grace period (a CLI started with SIGINT ignored, as a dashboard launched from a script passes
on, stops on it the same way), SIGKILL if even that is not honoured.
Jobs live only in this server's memory; the run directory stays the single source of truth.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

STOP_GRACE_S = 20.0  # after SIGINT, how long before SIGTERM
KILL_GRACE_S = 10.0  # after SIGTERM, how long before SIGKILL


@dataclass
class Job:
    id: int
    kind: str  # train | resume | eval
    argv: list[str]
    run_dir: Path  # the run (or evaluation) directory it writes
    log: Path
    proc: subprocess.Popen[bytes]
    started: float = field(default_factory=time.time)
    stop_requested: float | None = None

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    @property
    def state(self) -> str:
        rc = self.returncode
        if rc is None:
            return "stopping" if self.stop_requested else "running"
        if self.stop_requested:
            return f"stopped (exit {rc})"
        return {0: "finished", 3: "answers needed (exit 3)", 4: "stopped by budget (exit 4)",
                130: "interrupted (exit 130)"}.get(rc, f"failed (exit {rc})")

    def log_tail(self, limit: int = 4000) -> str:
        try:
            data = self.log.read_bytes()
        except OSError:
            return ""
        return data[-limit:].decode("utf-8", errors="replace")


class Jobs:
    def __init__(self, log_dir: Path | None = None) -> None:
        self.log_dir = log_dir or Path(tempfile.mkdtemp(prefix="skillgrad-ui-jobs-"))
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.items: dict[int, Job] = {}

    def start(self, kind: str, args: list[str], run_dir: Path, cwd: Path) -> Job:
        argv = [sys.executable, "-m", "skillgrad.cli", *args]
        with self._lock:
            jid = next(self._ids)
        log = self.log_dir / f"job-{jid:04d}-{kind}.log"
        with open(log, "wb") as out:
            # own session: a Ctrl-C on the dashboard does not stop runs it launched
            proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        job = Job(jid, kind, argv, run_dir, log, proc)
        with self._lock:
            self.items[jid] = job
        return job

    def for_run(self, run_dir: Path) -> Job | None:
        """The newest job writing `run_dir`."""
        found = [j for j in self.items.values() if j.run_dir == run_dir]
        return max(found, key=lambda j: j.id) if found else None

    def alive_for(self, run_dir: Path) -> bool | None:
        """True / False when this dashboard launched the run's newest job; None when it knows nothing."""
        job = self.for_run(run_dir)
        return None if job is None else job.alive

    def stop(self, job: Job, grace_s: float = STOP_GRACE_S, kill_grace_s: float = KILL_GRACE_S) -> None:
        """SIGINT now (the CLI exits cleanly, resumable), SIGTERM if it has not exited after `grace_s`, SIGKILL
        after `kill_grace_s` more (every stage is checkpointed: even a killed run resumes)."""
        if not job.alive:
            return
        job.stop_requested = time.time()
        job.proc.send_signal(signal.SIGINT)

        def escalate() -> None:
            for wait_s, last_resort in ((grace_s, job.proc.terminate), (kill_grace_s, job.proc.kill)):
                try:
                    job.proc.wait(timeout=wait_s)
                    return
                except subprocess.TimeoutExpired:
                    last_resort()

        threading.Thread(target=escalate, daemon=True).start()

    def shutdown(self) -> None:
        """Leave launched runs running; only reap finished children."""
        for job in self.items.values():
            job.proc.poll()
