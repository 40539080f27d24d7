"""Run model-generated Python in a confined subprocess.

Layers, outermost first (each one covers gaps in the next):
- a private temporary directory: inputs are copied in, and only regular files the code created or
  changed there are copied back to the caller's `workdir` (never symlinks or hard links, so the code
  cannot smuggle an outside file out);
- a minimal environment (no inherited variables, so no API keys) and an isolated interpreter (`-I -B`);
- resource limits set in the child before exec: address space, CPU seconds, open files, file size,
  no core dumps; the wall-clock timeout kills the whole process group;
- namespaces (`unshare`) when this machine allows them: no network (a new network namespace) and a pid
  namespace, so every process the code starts dies with it;
- a process limit: RLIMIT_NPROC inside the user namespace, plus a pids cgroup when running as root
  (root is exempt from RLIMIT_NPROC);
- Landlock (Linux >= 5.13), applied by the runner before the code starts: reads only in the private
  directory and the Python runtime (stdlib, site-packages without skillgrad itself, system libraries),
  writes only in the private directory, no exec, no TCP (ABI >= 4), no signals outside (ABI >= 6).
  Native code (ctypes, `_posixsubprocess`) cannot step around it: the kernel enforces it;
- an audit hook installed before the code runs that refuses socket connect/bind/send, opening files
  outside the allowed roots (reading) or the private directory (writing, renaming, deleting, ...) and
  starting processes. Audit hooks are defence in depth, not a boundary on their own.

A layer this machine cannot provide is reported in `SandboxResult.warnings` (and logged once per process).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from skillgrad.exec.sandbox_runner import SETUP_EXIT  # the runner could not apply a layer: fail closed

SCRIPT_NAME = "_sandbox_main.py"
MAX_OUTPUT_CHARS = 20_000  # stdout/stderr kept per stream
MAX_FILE_MB = 64  # RLIMIT_FSIZE and the largest output file copied back
MAX_PROCS = 32  # processes (threads included) the code may have at once
PIDS_CGROUP_ROOT = Path("/sys/fs/cgroup/pids")  # cgroup v1 pids controller (v2: the unified hierarchy)
_log = logging.getLogger(__name__)

# Runs inside the child before the generated code: confines itself, then runs the script (stdlib only).
RUNNER = Path(__file__).with_name("sandbox_runner.py")


@dataclass
class SandboxResult:
    ok: bool
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    killed_reason: str = ""  # "" | "timeout" | "cpu" | "memory" | "signal N" | "setup: ..."
    seconds: float = 0.0
    outputs: list[str] = field(default_factory=list)  # files copied back to workdir (relative names)
    network_isolated: bool = False  # True when a network namespace was used
    reads_confined: bool = False  # True when Landlock confined reads, writes and exec
    process_limit: str = ""  # "cgroup" | "rlimit" | "" (none could be set)
    warnings: list[str] = field(default_factory=list)  # layers this machine could not provide

    def error_text(self, limit: int = 2000) -> str:
        """A short description of why the run failed, for the student and the teacher."""
        if self.ok:
            return ""
        head = {"timeout": "timed out (wall clock)", "cpu": "CPU time limit exceeded",
                "memory": "memory limit exceeded"}.get(self.killed_reason, self.killed_reason)
        head = head or (f"exit code {self.returncode}" if self.returncode else "failed")
        tail = self.stderr.strip()[-limit:]
        return f"{head}\n{tail}" if tail else head


_NS_FLAGS = {"network": ["-n"], "pid": ["-p", "-f"]}


@functools.lru_cache(maxsize=4)
def _unshare_works(kind: str) -> bool:
    exe = shutil.which("unshare")
    if not exe:
        return False
    try:
        probe = subprocess.run([exe, "-r", *_NS_FLAGS[kind], sys.executable, "-I", "-c", "pass"],
                               capture_output=True, timeout=10, env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 0


def network_namespace_available() -> bool:
    """Whether `unshare -rn` works here (probed once per process; cached because it cannot change)."""
    return _unshare_works("network")


def pid_namespace_available() -> bool:
    return _unshare_works("pid")


@functools.lru_cache(maxsize=1)
def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when unavailable (not built in, disabled, or filtered)."""
    if not sys.platform.startswith("linux"):
        return 0
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        abi = libc.syscall(ctypes.c_long(444), None, ctypes.c_long(0), ctypes.c_long(1))
    except (OSError, AttributeError):
        return 0
    return max(0, int(abi))


def _pids_cgroup_available() -> bool:
    return os.geteuid() == 0 and os.access(PIDS_CGROUP_ROOT / "cgroup.procs", os.W_OK)


@functools.lru_cache(maxsize=1)
def runtime_read_paths() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(directories, files) the generated code may read: the interpreter's stdlib and extension modules,
    site-packages entries except skillgrad itself (its packaged samples hold answer files), and the
    system libraries those link to. Never the home directory, the data directories or /proc."""
    dirs: set[str] = set()
    for key in ("stdlib", "platstdlib"):
        dirs.add(sysconfig.get_paths()[key])
    dirs.add(os.path.join(sys.base_exec_prefix, "lib"))  # libpython, lib-dynload
    for key in ("purelib", "platlib"):
        site = Path(sysconfig.get_paths()[key])
        if site.is_dir():
            for entry in site.iterdir():
                if not entry.name.startswith(("skillgrad", "__editable__", "_skillgrad")) and not \
                        entry.name.endswith(".pth"):
                    dirs.add(str(entry))
    dirs.update(("/usr/lib", "/lib", "/lib64", "/usr/lib64", "/usr/local/lib", "/usr/share/zoneinfo"))
    files = {"/etc/ld.so.cache", "/etc/localtime", "/etc/mime.types", "/dev/null", "/dev/urandom", "/dev/zero"}
    real = sorted({os.path.realpath(d) for d in dirs if os.path.exists(d)})
    return tuple(real), tuple(sorted(f for f in files if os.path.exists(f)))


_NO_PROC_LIMIT = ("no process limit: root without a writable pids cgroup, or no user namespace for "
                  "RLIMIT_NPROC")


def confinement_warnings(*, isolate_network: bool = True, landlock: bool = True) -> list[str]:
    """The layers this machine cannot provide, in words (recorded with every run and trajectory)."""
    out = []
    if landlock and landlock_abi() < 1:
        out.append("Landlock is unavailable on this kernel: generated code can read any file this user can "
                   "(only the audit hook guards reads)")
    if isolate_network and not network_namespace_available():
        out.append("no network namespace (unshare -rn) here: only the audit hook blocks the network")
    if not _pids_cgroup_available() and (os.geteuid() == 0 or not pid_namespace_available()):
        out.append(_NO_PROC_LIMIT)
    return out


def _warn_once(text: str, _seen: set[str] = set()) -> None:  # noqa: B006 - a per-process memory on purpose
    if text not in _seen:
        _seen.add(text)
        _log.warning("sandbox: %s", text)


def _limits(memory_mb: int, cpu_s: int, cgroup: str) -> None:
    """preexec_fn: runs in the child between fork and exec; must only call async-signal-safe-ish code."""
    if cgroup:  # join the pids cgroup before anything else can fork
        with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    mem = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    size = MAX_FILE_MB * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):  # does not follow symlinked directories
        for name in files:
            p = Path(dirpath) / name
            st = p.lstat()
            if stat.S_ISREG(st.st_mode):
                out[p.relative_to(root).as_posix()] = (st.st_size, st.st_mtime_ns)
    return out


def _clip(b: bytes) -> str:
    text = b.decode("utf-8", errors="replace")
    return text if len(text) <= MAX_OUTPUT_CHARS else text[:2000] + "\n...[truncated]...\n" + text[-(MAX_OUTPUT_CHARS - 2000):]


def _kill_group(proc: subprocess.Popen[bytes], wrapped: bool = False) -> None:
    """SIGKILL everything the run started. `wrapped`: proc is `unshare`; its child (the pid namespace's
    init) dies first so that unshare reaps it: killed together, the init would be left a zombie of the
    host's pid 1, which in a container may never reap it."""
    if wrapped:
        try:
            kids = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        except OSError:
            kids = []
        for kid in kids:
            try:
                os.kill(int(kid), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if kids:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_python(code: str, *, workdir: Path, timeout_s: float = 30.0, memory_mb: int = 1024,
               files_in: dict[str, Path] | None = None, isolate_network: bool = True, landlock: bool = True,
               audit_hook: bool = True) -> SandboxResult:
    """Run `code` confined; inputs `files_in` (name in the sandbox -> source path) are copied in and
    files the code wrote are copied back into `workdir`. Never raises for the code's own failure.
    `isolate_network`, `landlock` and `audit_hook` switch single layers off (tests prove each alone)."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="skillgrad-sbx-") as tmp:
        root = Path(tmp).resolve()
        try:
            for name, src in (files_in or {}).items():
                dest = (root / name).resolve()
                if root not in dest.parents:
                    raise ValueError(f"input name {name!r} escapes the sandbox directory")
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest)
        except (OSError, ValueError) as exc:
            return SandboxResult(False, None, "", str(exc), killed_reason=f"setup: {exc}",
                                 seconds=time.monotonic() - started)
        script = root / SCRIPT_NAME
        script.write_text(code, encoding="utf-8")
        before = _snapshot(root)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(root), "TMPDIR": str(root), "LANG": "C.UTF-8",
               "LC_ALL": "C.UTF-8", "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        warnings = confinement_warnings(isolate_network=isolate_network, landlock=landlock)
        confined = landlock and landlock_abi() >= 1
        read_dirs, read_files = runtime_read_paths()
        isolated = isolate_network and network_namespace_available()
        pid_ns = pid_namespace_available()
        flags = ["-r"] * (isolated or pid_ns) + _NS_FLAGS["network"] * isolated + _NS_FLAGS["pid"] * pid_ns
        # RLIMIT_NPROC counts per user namespace: outside one it would count all of this user's processes
        rlimit = os.geteuid() != 0 and bool(flags)
        cfg = {"read_dirs": read_dirs, "read_files": read_files, "nproc": MAX_PROCS if rlimit else 0,
               "landlock": confined, "audit": audit_hook}
        argv = [sys.executable, "-I", "-B", str(RUNNER), str(root), str(script), json.dumps(cfg)]
        if flags:
            argv = [shutil.which("unshare") or "unshare", *flags, *argv]
        # root ignores RLIMIT_NPROC, so as root the process count is capped by a pids cgroup instead
        cgroup = ""
        if _pids_cgroup_available():
            cgroup = str(PIDS_CGROUP_ROOT / f"skillgrad-sbx-{uuid.uuid4().hex[:12]}")
            try:
                os.mkdir(cgroup)
                Path(cgroup, "pids.max").write_text(str(MAX_PROCS + 2))  # + unshare and the runner
            except OSError:
                cgroup = ""
        limit = "cgroup" if cgroup else ("rlimit" if rlimit else "")
        if not limit and _NO_PROC_LIMIT not in warnings:
            warnings.append(_NO_PROC_LIMIT)
        for w in warnings:
            _warn_once(w)
        cpu_s = max(1, int(timeout_s) + 1)
        timed_out = False
        try:
            proc = subprocess.Popen(argv, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True,
                                    preexec_fn=functools.partial(_limits, memory_mb, cpu_s, cgroup))
        except (OSError, subprocess.SubprocessError) as exc:
            _remove_cgroup(cgroup)
            return SandboxResult(False, None, "", str(exc), killed_reason=f"setup: {exc}",
                                 seconds=time.monotonic() - started, warnings=warnings)
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc, wrapped=bool(flags))
            out, err = proc.communicate()
        finally:
            _kill_cgroup(cgroup)
        seconds = time.monotonic() - started
        rc = proc.returncode
        stderr = _clip(err)
        if flags:  # unshare's own complaint about a killed child is not the code's output
            stderr = "".join(ln for ln in stderr.splitlines(keepends=True) if not ln.startswith("unshare: "))
        reason = ""
        if timed_out:
            reason = "timeout"
        elif rc == SETUP_EXIT and "sandbox setup:" in stderr:
            reason = "setup: " + stderr.split("sandbox setup:", 1)[1].strip().splitlines()[0]
        elif rc is not None and (rc < 0 or (rc > 128 and "sandbox: killed by signal" in stderr)):
            sig = -rc if rc < 0 else rc - 128  # > 128: the code's process died in the pid namespace
            reason = "cpu" if sig == signal.SIGXCPU else f"signal {signal.Signals(sig).name}"
            if sig == signal.SIGKILL and "MemoryError" in stderr:
                reason = "memory"
        elif rc and "MemoryError" in stderr:
            reason = "memory"
        outputs = _copy_back(root, workdir, before)
        return SandboxResult(ok=(rc == 0 and not timed_out), returncode=rc, stdout=_clip(out), stderr=stderr,
                             timed_out=timed_out, killed_reason=reason, seconds=seconds, outputs=outputs,
                             network_isolated=isolated, reads_confined=confined, process_limit=limit,
                             warnings=warnings)


def _kill_cgroup(cgroup: str) -> None:
    """Kill whatever is left in the cgroup (a process that left the session or the pid namespace), then
    remove it."""
    if not cgroup:
        return
    for _ in range(50):
        try:
            pids = [int(x) for x in Path(cgroup, "cgroup.procs").read_text().split()]
        except OSError:
            return
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.02)
    _remove_cgroup(cgroup)


def _remove_cgroup(cgroup: str) -> None:
    if cgroup:
        try:
            os.rmdir(cgroup)
        except OSError:
            pass


def _copy_back(root: Path, workdir: Path, before: dict[str, tuple[int, int]]) -> list[str]:
    copied: list[str] = []
    for rel, stamp in sorted(_snapshot(root).items()):
        if rel == SCRIPT_NAME or before.get(rel) == stamp:
            continue
        src = root / rel
        st = src.lstat()
        # Only fresh regular files: a hard link could point at a file outside the sandbox.
        if st.st_nlink != 1 or st.st_size > MAX_FILE_MB * 1024 * 1024:
            continue
        dest = workdir / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        copied.append(rel)
    return copied


async def run_python_async(code: str, **kwargs) -> SandboxResult:  # type: ignore[no-untyped-def]
    """`run_python` in a worker thread, so an event loop of rollouts keeps going."""
    return await asyncio.to_thread(functools.partial(run_python, code, **kwargs))
