"""The sandbox's in-child runner: `python -I -B sandbox_runner.py ROOT SCRIPT CONFIG_JSON` (exec/sandbox.py
starts it by path). It confines itself (process limit, Landlock, an audit hook) and then runs SCRIPT.

It imports only the standard library (an `.importlinter` contract checks that): once Landlock is on, the
skillgrad package is no longer readable. Importing this module does nothing; `main` does the work.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
from typing import Any

SETUP_EXIT = 97  # a layer that was asked for could not be applied: fail closed (exec/sandbox.py reads it)

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_SPAWN = {"os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
          "subprocess.Popen", "pty.spawn", "os.startfile"}
_NET = {"socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg", "socket.getaddrinfo"}
_PATH1 = {"os.remove", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate", "os.utime",
          "os.chflags", "os.lchflags", "os.mkfifo", "os.mknod", "shutil.rmtree", "os.setxattr",
          "os.removexattr"}
_PATH2 = {"os.rename", "os.link", "os.symlink", "shutil.copyfile", "shutil.copymode",
          "shutil.copystat", "shutil.copytree", "shutil.move", "shutil.chown"}


def fail_setup(msg: str) -> None:
    sys.stderr.write("sandbox setup: " + msg + "\n")
    sys.stderr.flush()
    os._exit(SETUP_EXIT)


def limit_processes(nproc: int) -> None:
    """RLIMIT_NPROC, counted inside the user namespace: only this sandbox's processes."""
    import resource

    hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    n = nproc if hard == resource.RLIM_INFINITY else min(hard, nproc)
    resource.setrlimit(resource.RLIMIT_NPROC, (n, n))


def landlock(root: str, read_dirs: list[str], read_files: list[str]) -> None:
    """Reads only in `read_dirs`/`read_files` and the private `root`, writes only in `root`, no exec, no TCP."""
    import ctypes
    import struct

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    def sysc(*a: Any) -> int:
        return int(libc.syscall(*[ctypes.c_long(x) if isinstance(x, int) else x for x in a]))

    abi = sysc(444, None, 0, 1)  # landlock_create_ruleset(NULL, 0, VERSION)
    if abi < 1:
        fail_setup(f"Landlock unavailable (errno {ctypes.get_errno()})")
    fs = (1 << 13) - 1 | (1 << 13 if abi >= 2 else 0) | (1 << 14 if abi >= 3 else 0) | (1 << 15 if abi >= 5 else 0)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    attr = ctypes.create_string_buffer(struct.pack("QQQ", fs, 3, 3)[:size], size)  # net: bind+connect TCP
    rs = sysc(444, attr, size, 0)
    if rs < 0:
        fail_setup(f"landlock_create_ruleset failed (errno {ctypes.get_errno()})")
    file_rights = 1 | 2 | 4 | (1 << 14) | (1 << 15)  # execute, write, read, truncate, ioctl: valid on files
    read, read_dir, write_file = 4, 8, 2
    rules = [(p, read | read_dir) for p in read_dirs] + [(p, read) for p in read_files]
    rules += [("/dev/null", read | write_file), (root, fs & ~1)]  # the private dir: all but exec
    for path, access in rules:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # a runtime path this machine lacks
        if not os.path.isdir(path):
            access &= file_rights
        rule = ctypes.create_string_buffer(struct.pack("=Qi", access & fs, fd), 12)
        if sysc(445, rs, 1, rule, 0) < 0:
            fail_setup(f"landlock_add_rule {path!r} failed (errno {ctypes.get_errno()})")
        os.close(fd)
    if libc.prctl(38, 1, 0, 0, 0) != 0 or sysc(446, rs, 0) < 0:  # PR_SET_NO_NEW_PRIVS, restrict_self
        fail_setup(f"landlock_restrict_self failed (errno {ctypes.get_errno()})")
    os.close(rs)


def reap_as_init() -> None:
    """As pid 1 of a pid namespace (which ignores its own fatal signals), run the code in a child and report
    the child's exit as ours; only the child returns from this call."""
    child = os.fork()
    if not child:
        return
    while True:  # reap everything; report the code's own exit
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(1)
        if pid == child:
            if os.WIFSIGNALED(status):
                os.write(2, f"\nsandbox: killed by signal {os.WTERMSIG(status)}\n".encode())
                os._exit(128 + os.WTERMSIG(status))
            os._exit(os.WEXITSTATUS(status))


def inside(p: Any, allowed: tuple[str, ...]) -> bool:
    """Whether path `p` (str, bytes, or a file descriptor, which is always allowed) resolves under `allowed`."""
    if isinstance(p, int) or p is None:
        return True
    try:
        real = os.path.realpath(os.path.abspath(os.fsdecode(p)))
    except Exception:
        return False
    return any(real == a or real.startswith(a + os.sep) for a in allowed)


def audit_hook(write_ok: tuple[str, ...], read_ok: tuple[str, ...]) -> Any:
    """A sys.addaudithook callback refusing network, process starts, and file access outside the roots."""
    busy = [False]

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if busy[0]:
            return
        busy[0] = True
        try:
            if event in _NET:
                raise PermissionError(f"sandbox: network access is blocked ({event})")
            if event in _SPAWN:
                raise PermissionError(f"sandbox: starting processes is blocked ({event})")
            if event == "open":
                path, mode, flags = (list(args) + [None, None, 0])[:3]
                writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                    isinstance(flags, int) and flags & _WRITE_FLAGS)
                if writing and not inside(path, write_ok):
                    raise PermissionError(f"sandbox: writing outside the working directory is blocked: {path!r}")
                if not writing and not inside(path, read_ok):
                    raise PermissionError(f"sandbox: reading outside the task's files is blocked: {path!r}")
            elif event in ("os.listdir", "os.scandir"):
                if args and not inside(args[0], read_ok):
                    raise PermissionError(f"sandbox: listing outside the task's files is blocked: {args[0]!r}")
            elif event in _PATH1:
                if args and not inside(args[0], write_ok):
                    raise PermissionError(f"sandbox: {event} outside the working directory is blocked")
            elif event in _PATH2:
                if len(args) > 1 and not inside(args[1], write_ok):
                    raise PermissionError(f"sandbox: {event} outside the working directory is blocked")
                if event in ("os.rename", "shutil.move") and args and not inside(args[0], write_ok):
                    raise PermissionError(f"sandbox: {event} outside the working directory is blocked")
        finally:
            busy[0] = False

    return hook


def program_traceback(exc: BaseException, script: str) -> str:
    """The traceback of the program's own frames only (not this runner's or the hook's), path-free."""
    import traceback

    out = []
    for line in traceback.format_exception(exc):
        if line.startswith(('  File "<frozen', '  File "<string>"', f'  File "{__file__}"')):
            continue
        out.append(line.replace(script, os.path.basename(script)))
    return "".join(out)


def main(argv: list[str]) -> None:
    root, script = os.path.realpath(argv[1]), argv[2]
    cfg = json.loads(argv[3])
    # The program must not import from this file's folder (inside skillgrad): `-I` keeps it off sys.path
    # on Python 3.11+, and a run without `-I` drops it here.
    here = os.path.dirname(os.path.realpath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != here]
    if cfg["nproc"]:
        limit_processes(cfg["nproc"])
    if cfg["landlock"]:
        landlock(root, cfg["read_dirs"], cfg["read_files"])
    if os.getpid() == 1:
        reap_as_init()
    if cfg["audit"]:
        sys.addaudithook(audit_hook((root, "/dev/null"), (root, *cfg["read_dirs"], *cfg["read_files"])))
    sys.argv = [script]
    sys.path.insert(0, root)
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit:
        raise
    except BaseException as exc:
        sys.stderr.write(program_traceback(exc, script))
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv)
