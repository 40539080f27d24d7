"""The run lock as the faces see it: the dashboard and the MCP server start no writer on a locked run, and the
lock itself (held by a live process, stale from a dead one, nested in one process)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from skillgrad.runs.lock import LOCK_NAME, RunLocked, StaleLockWarning, acquire, holder, release, run_lock
from skillgrad.ui import actions


@pytest.fixture
def live_holder(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "config.json").write_text("{}")
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    (run_dir / LOCK_NAME).write_text(json.dumps({"pid": proc.pid, "host": socket.gethostname(),
                                                 "command": "skillgrad train", "since": time.time()}))
    yield run_dir, proc.pid
    proc.kill()
    proc.wait()


def test_lock_held_stale_and_nested(tmp_path: Path, live_holder: tuple[Path, int]) -> None:
    run_dir, pid = live_holder
    with pytest.raises(RunLocked, match=f"pid {pid} on {socket.gethostname()}"):
        acquire(run_dir, "skillgrad resume")
    assert holder(run_dir) is not None and holder(run_dir).pid == pid  # type: ignore[union-attr]

    other = tmp_path / "other"
    with run_lock(other, "skillgrad train"):
        assert holder(other) is None  # this process's own lock does not block it
        with run_lock(other, "skillgrad sleep run"):  # a night training in-process: no deadlock
            pass
        assert (other / LOCK_NAME).exists()  # the inner block did not release the outer one
    assert not (other / LOCK_NAME).exists()

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (other / LOCK_NAME).write_text(json.dumps({"pid": dead.pid, "host": socket.gethostname(), "since": 0}))
    assert holder(other) is None
    with pytest.warns(StaleLockWarning, match=f"pid {dead.pid}"):
        path = acquire(other, "skillgrad train")
    assert json.loads(path.read_text())["pid"] != dead.pid
    release(path)
    assert not path.exists()


def test_a_lock_from_another_host_holds(tmp_path: Path) -> None:
    (tmp_path / LOCK_NAME).write_text(json.dumps({"pid": 1, "host": "elsewhere", "since": 0}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RunLocked, match=f"delete {tmp_path / LOCK_NAME}"):
            acquire(tmp_path, "skillgrad train")


def test_dashboard_refuses_to_resume_train_or_eval_into_a_locked_run(live_holder: tuple[Path, int]) -> None:
    run_dir, pid = live_holder
    started: list[list[str]] = []
    dash = SimpleNamespace(root=run_dir.parent, jobs=SimpleNamespace(start=lambda *a, **k: started.append(a)))
    with pytest.raises(actions.ActionError, match=f"pid {pid}"):
        actions.launch_resume(dash, run_dir)  # type: ignore[arg-type]
    form = {"config": "skillgrad:demo.yaml", "name": run_dir.name}
    with pytest.raises(actions.ActionError, match=f"pid {pid}"):
        actions.launch_train(dash, form)  # type: ignore[arg-type]
    assert started == []  # no writer was started


def test_mcp_refuses_a_locked_run(live_holder: tuple[Path, int]) -> None:
    pytest.importorskip("mcp")
    from mcp.server.mcpserver.exceptions import ToolError

    from skillgrad.integrations.mcp_server import _not_locked

    run_dir, pid = live_holder
    with pytest.raises(ToolError, match=f"pid {pid}"):
        _not_locked(run_dir)
    _not_locked(run_dir.parent / "free")  # a free run: nothing raised


@pytest.mark.parametrize(("ignored", "ended_by"), [((2,), 15), ((2, 15), 9)])
def test_mcp_cancel_escalates_sigint_sigterm_sigkill(ignored: tuple[int, ...], ended_by: int) -> None:
    pytest.importorskip("mcp")
    import anyio

    from skillgrad.integrations.mcp_server import _interrupt

    code = f"import signal,time; [signal.signal(s, signal.SIG_IGN) for s in {ignored!r}]; print('ready', flush=True); " \
           "time.sleep(60)"

    async def main() -> int | None:
        proc = await anyio.open_process([sys.executable, "-c", code])
        assert proc.stdout is not None
        assert (await proc.stdout.receive()).strip() == b"ready"
        await _interrupt(proc, grace_s=0.3, kill_grace_s=0.3)
        return proc.returncode

    assert anyio.run(main) == -ended_by


def test_the_dashboard_sees_a_locked_run_as_live(live_holder: tuple[Path, int], tmp_path: Path) -> None:
    from skillgrad.ui.data import is_live

    run_dir, _ = live_holder
    assert is_live(SimpleNamespace(path=run_dir, status="stopped"))  # type: ignore[arg-type]
    assert not is_live(SimpleNamespace(path=tmp_path / "free", status="stopped"))  # type: ignore[arg-type]


def test_a_lock_covers_the_folders_below_it(live_holder: tuple[Path, int]) -> None:
    """A Sleep night locks .skillgrad/sleep: a night's run directory under it gets no second writer."""
    run_dir, pid = live_holder
    night = run_dir / "nights" / "20260101-000000"
    with pytest.raises(RunLocked, match=f"pid {pid}"):
        acquire(night, "skillgrad resume")
    assert holder(night) is not None and not (night / LOCK_NAME).exists()


def test_a_killed_unreaped_writer_does_not_hold_the_lock(tmp_path: Path) -> None:
    import signal

    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    (tmp_path / LOCK_NAME).write_text(json.dumps({"pid": proc.pid, "host": socket.gethostname(), "since": 0}))
    assert holder(tmp_path) is not None
    proc.send_signal(signal.SIGKILL)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":  # dead, not reaped
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert holder(tmp_path) is None
    proc.wait()


def test_a_reused_pid_does_not_hold_the_lock(tmp_path: Path) -> None:
    """The lock records the writer's start time: a live process that got the same pid later is not the writer."""
    path = acquire(tmp_path, "skillgrad train")
    record = json.loads(path.read_text())
    assert record["started"]
    release(path)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / LOCK_NAME).write_text(json.dumps({**record, "pid": other.pid}))
        assert holder(tmp_path) is None  # same pid would be alive, but its start time differs
        (tmp_path / LOCK_NAME).write_text(json.dumps({**record, "pid": other.pid, "started": ""}))
        assert holder(tmp_path) is not None  # no start time recorded: trust the pid
    finally:
        other.kill()
        other.wait()


def test_mcp_reads_exit_4_as_a_stopped_result() -> None:
    pytest.importorskip("mcp")
    from skillgrad.integrations.mcp_server import Shell

    shell = Shell(Path("."))
    res = shell.result(4, '{"status": "stopped"}', "stopped: budget.max_calls reached (4 of 4); ...\n")
    assert res == {"ok": False, "stopped": "budget", "message": "stopped: budget.max_calls reached (4 of 4); ...",
                   "result": {"status": "stopped"}}
    assert shell.result(0, "plain", "")["ok"] is True
