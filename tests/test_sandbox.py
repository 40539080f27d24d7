"""The code sandbox: real subprocesses running hostile programs; each is stopped and the machine is unharmed."""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import require

from skillgrad.exec.sandbox import MAX_PROCS, landlock_abi, network_namespace_available, run_python

ANSWER = next((Path(__file__).parents[1] / "src/skillgrad/envs/spreadsheetbench/sample").rglob("*_answer.xlsx"))
LANDLOCK = "Landlock (Linux >= 5.13 with landlock in the LSM list)"


def test_runs_code_and_copies_back_only_outputs(tmp_path: Path) -> None:
    src = tmp_path / "data.txt"
    src.write_text("21")
    work = tmp_path / "work"
    code = "n = int(open('data.txt').read())\nopen('out.txt', 'w').write(str(n * 2))\nprint('done')\n"
    res = run_python(code, workdir=work, timeout_s=20, memory_mb=512, files_in={"data.txt": src})
    assert res.ok and res.returncode == 0 and "done" in res.stdout
    assert res.outputs == ["out.txt"]
    assert (work / "out.txt").read_text() == "42"
    assert not (work / "data.txt").exists()  # inputs are not copied back
    assert src.read_text() == "21"  # the source file is untouched


def test_infinite_loop_is_killed_by_the_wall_clock(tmp_path: Path) -> None:
    res = run_python("while True:\n    pass\n", workdir=tmp_path, timeout_s=1.5, memory_mb=256)
    assert not res.ok and res.timed_out and res.killed_reason == "timeout"
    assert res.seconds < 10


def test_huge_allocation_fails_with_memory_error(tmp_path: Path) -> None:
    res = run_python("x = bytearray(10 * 1024 ** 3)\nprint('allocated')\n", workdir=tmp_path, timeout_s=20,
                     memory_mb=512)
    assert not res.ok and res.killed_reason == "memory"
    assert "allocated" not in res.stdout
    assert "memory limit exceeded" in res.error_text()


@pytest.mark.parametrize("isolate", [True, False])  # False: the audit hook alone must still block it
def test_socket_connect_is_blocked(tmp_path: Path, isolate: bool) -> None:
    code = ("import socket\ns = socket.socket()\ns.settimeout(3)\ns.connect(('127.0.0.1', 9))\n"
            "print('connected')\n")
    res = run_python(code, workdir=tmp_path, timeout_s=20, memory_mb=512, isolate_network=isolate)
    assert not res.ok and "connected" not in res.stdout
    assert "network access is blocked" in res.stderr


class Listener:
    """A loopback TCP listener in the test process that records every connection it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted: list[bytes] = []
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            conn.settimeout(2)
            try:
                self.accepted.append(conn.recv(100))
            except OSError:
                self.accepted.append(b"")
            conn.close()

    def close(self) -> None:
        self._stop = True
        self._thread.join()
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


def _connect_code(port: int) -> str:
    return (f"import socket\ns = socket.socket()\ns.settimeout(3)\ns.connect(('127.0.0.1', {port}))\n"
            "s.sendall(b'leak')\ns.close()\nprint('connected')\n")


def test_network_namespace_alone_keeps_loopback_private(tmp_path: Path, listener: Listener) -> None:
    require(network_namespace_available(), "network namespaces (unshare -rn)")
    # control: with every layer off the probe reaches the listener, so the assertion below can fail
    res = run_python(_connect_code(listener.port), workdir=tmp_path, timeout_s=20, isolate_network=False,
                     landlock=False, audit_hook=False)
    assert res.ok and "connected" in res.stdout, res.stderr
    assert listener.accepted == [b"leak"]
    # the namespace alone (no audit hook, no Landlock): the sandbox's 127.0.0.1 is not ours
    res = run_python(_connect_code(listener.port), workdir=tmp_path, timeout_s=20, landlock=False,
                     audit_hook=False)
    assert res.network_isolated and not res.ok and "connected" not in res.stdout
    assert "network access is blocked" not in res.stderr  # not the hook's message: the kernel refused
    assert listener.accepted == [b"leak"]  # nothing new arrived


def test_landlock_alone_blocks_tcp(tmp_path: Path, listener: Listener) -> None:
    require(landlock_abi() >= 4, "Landlock ABI >= 4 (TCP rules, Linux >= 6.7)")
    res = run_python(_connect_code(listener.port), workdir=tmp_path, timeout_s=20, isolate_network=False,
                     audit_hook=False)
    assert res.reads_confined and not res.ok and "connected" not in res.stdout
    assert "PermissionError" in res.stderr
    assert listener.accepted == []


_READ_PROBE = """
import os, sys
for path in sys.argv[1:] or {targets!r}:
    try:
        if os.path.isdir(path):
            print("LEAK", path, os.listdir(path)[:3])
        else:
            with open(path, "rb") as f:
                print("LEAK", path, f.read(16))
    except OSError as e:
        print("DENIED", path, type(e).__name__, e)
import openpyxl  # the runtime stays readable: site-packages and the stdlib
print("imports ok")
"""


@pytest.mark.parametrize("layer", ["landlock", "audit_hook"])
def test_reads_outside_the_task_files_are_blocked(tmp_path: Path, layer: str) -> None:
    """The task's answer workbook, the home directory and /etc/passwd, each layer on its own."""
    if layer == "landlock":
        require(landlock_abi() >= 1, LANDLOCK)
    targets = [str(ANSWER), str(Path.home()), "/etc/passwd", str(tmp_path / "secret.txt")]
    (tmp_path / "secret.txt").write_text("secret")
    src = tmp_path / "input.txt"
    src.write_text("mine")
    code = _READ_PROBE.format(targets=targets) + "print(open('input.txt').read())\n"
    res = run_python(code, workdir=tmp_path / "w", timeout_s=30, files_in={"input.txt": src},
                     landlock=layer == "landlock", audit_hook=layer == "audit_hook")
    assert res.ok, res.stderr
    assert "LEAK" not in res.stdout, res.stdout
    assert res.stdout.count("DENIED") == 4
    assert "imports ok" in res.stdout and res.stdout.rstrip().endswith("mine")  # its own input: readable
    assert res.reads_confined == (layer == "landlock")
    if layer == "audit_hook":
        assert "reading outside the task's files is blocked" in res.stdout


def test_missing_landlock_is_a_recorded_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                caplog: pytest.LogCaptureFixture) -> None:
    import skillgrad.exec.sandbox as sbx

    monkeypatch.setattr(sbx, "landlock_abi", lambda: 0)
    res = run_python("print(1)\n", workdir=tmp_path, timeout_s=20)
    assert res.ok and not res.reads_confined
    assert any("Landlock is unavailable" in w for w in res.warnings)
    assert any("Landlock is unavailable" in w for w in sbx.confinement_warnings())  # what trajectories record
    assert "Landlock is unavailable" in caplog.text


def test_native_code_cannot_step_around_the_confinement(tmp_path: Path) -> None:
    """ctypes and _posixsubprocess bypass the audit hook; the kernel layer still stops them."""
    require(landlock_abi() >= 1, LANDLOCK)
    outside = tmp_path / "outside"
    outside.mkdir()
    args = f"[b'/usr/bin/touch', b'{outside}/posix']"
    code = f"""
import ctypes, os, sys, _posixsubprocess
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.open({str(ANSWER).encode()!r}, os.O_RDONLY)
print("ctypes open:", "LEAK" if fd >= 0 else "DENIED")
libc.system(b"touch {outside}/system")
r, w = os.pipe()
base = ({args}, {args}, True, (w,), None, None, -1, -1, -1, -1, -1, -1, r, w, True, False, -1, None, None, None,
        -1, None)
try:
    try:
        pid = _posixsubprocess.fork_exec(*base, False)
    except TypeError:
        pid = _posixsubprocess.fork_exec(*base)
    os.close(w)
    print("posixsubprocess:", "DENIED" if os.read(r, 200) else "LEAK")
    os.waitpid(pid, 0)
except OSError as e:
    print("posixsubprocess: DENIED", e)
"""
    res = run_python(code, workdir=tmp_path / "w", timeout_s=30)
    assert "ctypes open: DENIED" in res.stdout and "posixsubprocess: DENIED" in res.stdout, (res.stdout, res.stderr)
    assert list(outside.iterdir()) == []


def _procs_named(token: str) -> list[int]:
    found = []
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and (d / "comm").read_text().strip() == token:
                found.append(int(d.name))
        except OSError:
            continue
    return found


def test_fork_bomb_is_capped_and_leaves_nothing_behind(tmp_path: Path) -> None:
    token = "sbx" + uuid.uuid4().hex[:10]
    code = f"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(15, {token.encode()!r}, 0, 0, 0)  # PR_SET_NAME: the test finds leftovers by this name
fd = os.open("born", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
while True:  # every process forks forever through libc (the audit hook never sees it)
    if libc.fork() == 0:
        os.write(fd, b"x")
"""
    res = run_python(code, workdir=tmp_path, timeout_s=4, audit_hook=False)
    assert res.timed_out and res.seconds < 15
    born = (tmp_path / "born").read_bytes() if (tmp_path / "born").exists() else b""
    assert len(born) <= MAX_PROCS, len(born)
    assert res.process_limit in ("cgroup", "rlimit")
    assert _procs_named(token) == []


def test_writing_outside_the_workdir_is_blocked(tmp_path: Path) -> None:
    outside = tmp_path / "outside" / "pwned.txt"
    outside.parent.mkdir()
    code = (f"open({str(outside)!r}, 'w').write('x')\n")
    res = run_python(code, workdir=tmp_path / "work", timeout_s=20, memory_mb=512)
    assert not res.ok and "writing outside the working directory is blocked" in res.stderr
    assert not outside.exists()


def test_os_level_escapes_are_blocked(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "keep.txt"
    victim.write_text("keep")
    for code in (
        f"import os\nos.remove({str(victim)!r})\n",
        f"import os\nos.rename({str(victim)!r}, 'stolen.txt')\n",
        f"import os\nfd = os.open({str(outside / 'new.txt')!r}, os.O_WRONLY | os.O_CREAT)\n",
        f"import subprocess\nsubprocess.run(['touch', {str(outside / 'spawned')!r}])\n",
        f"import os\nos.system('touch {outside / 'system'}')\n",
    ):
        res = run_python(code, workdir=tmp_path / "work", timeout_s=20, memory_mb=512)
        assert not res.ok, code
        assert "blocked" in res.stderr, (code, res.stderr)
    assert victim.read_text() == "keep"
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]


def test_symlinked_and_hardlinked_outputs_are_not_copied_back(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    work = tmp_path / "work"
    code = f"import os\nos.symlink({str(secret)!r}, 'leak.txt')\nopen('real.txt', 'w').write('ok')\n"
    res = run_python(code, workdir=work, timeout_s=20, memory_mb=512)
    assert res.ok, res.stderr
    assert res.outputs == ["real.txt"]
    assert not (work / "leak.txt").exists()


def test_environment_is_minimal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    code = "import os, json\nprint(json.dumps(sorted(os.environ)))\nprint(os.environ.get('OPENAI_API_KEY'))\n"
    res = run_python(code, workdir=tmp_path, timeout_s=20, memory_mb=512)
    assert res.ok
    assert "sk-should-not-leak" not in res.stdout
    assert "OPENAI_API_KEY" not in res.stdout
    assert os.environ["OPENAI_API_KEY"] == "sk-should-not-leak"  # the parent is unchanged


def test_input_names_cannot_escape(tmp_path: Path) -> None:
    src = tmp_path / "a.txt"
    src.write_text("a")
    res = run_python("print(1)\n", workdir=tmp_path / "w", files_in={"../evil.txt": src})
    assert not res.ok and res.killed_reason.startswith("setup:")
