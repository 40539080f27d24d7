"""Atomic file writes (temp file + fsync + rename) so a kill never leaves a half-written file.

A file that cannot be read or written becomes one error naming it and the fix (`DamagedFile`,
`StorageError`, exit 2); a failed write leaves the previous version of the file in place.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from skillgrad.errors import DamagedFile, StorageError

# What to do about a damaged run file ({p}: the file, {d}: its run folder). Files not named here are
# stage checkpoints: recomputed when moved aside (their model calls replay from llm_cache.sqlite).
_FIXES = {
    "runtime_state.json": "move it aside (mv {p} {p}.damaged) and rerun the same command: completed stages "
                          "are replayed from the step folders and llm_cache.sqlite",
    "config.json": "restore it from a copy, or move it aside (mv {p} {p}.damaged) and rerun `skillgrad train` "
                   "with the run's original config and --out {d}: it writes a new one and continues",
    "summary.json": "move it aside (mv {p} {p}.damaged) and rerun `skillgrad resume {d}`: it is written again",
}
_DEFAULT_FIX = "move it aside (mv {p} {p}.damaged) and rerun the same command: it is recomputed"


def damaged(path: Path, why: str) -> DamagedFile:
    p = Path(path)
    fix = _FIXES.get(p.name, _DEFAULT_FIX).format(p=p, d=p.parent)
    return DamagedFile(f"{p} is damaged ({why}); {fix}", path=str(p), why=why)


def storage_error(path: Path, e: OSError) -> StorageError | None:
    """The one-line error for a write the file system refused, or None for an error that is not the user's
    to fix (it is raised as it is)."""
    p = Path(path)
    if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return StorageError(f"cannot write {p}: {p.parent} is read-only ({e.strerror}); make it writable "
                            f"(chmod -R u+w {p.parent}) or copy the run folder somewhere writable and rerun there")
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        return StorageError(f"cannot write {p}: no space left on the device; free some space and rerun the same "
                            "command (everything saved before is kept)")
    if e.errno in (errno.ENOTDIR, errno.EEXIST) or isinstance(e, (NotADirectoryError, FileExistsError)):
        blocker = next((a for a in [p, *p.parents] if a.exists() and not a.is_dir()), p)
        return StorageError(f"cannot write {p}: {blocker} is a file, not a folder; choose another --out "
                            "(or move that file away)")
    return None


@contextmanager
def writing(path: str | os.PathLike[str]) -> Iterator[None]:
    """Turn the file system's refusals (read-only, full, not a folder) into StorageError naming `path`."""
    try:
        yield
    except OSError as e:
        err = storage_error(Path(path), e)
        if err is None:
            raise
        raise err from None


def write_bytes(path: str | os.PathLike[str], payload: bytes) -> None:
    """Write through a temp file in the same folder and rename; any failure or interrupt (Ctrl-C, SIGTERM
    through the CLI) removes the temp file and leaves the old version."""
    p = Path(path)
    with writing(p):
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
        try:
            # mkstemp creates 0600; the file gets the mode any new file would get (the umask decides)
            os.fchmod(fd, 0o666 & ~_umask())
            with os.fdopen(fd, "wb") as f:
                f.write(payload)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, p)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise


def write_text(path: str | os.PathLike[str], text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def _umask() -> int:
    """The process umask. Linux shows it in /proc (thread-safe); elsewhere it is read by setting and
    restoring it, which briefly changes it for every thread."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_json(path: str | os.PathLike[str], data: Any) -> None:
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def read_json(path: str | os.PathLike[str], default: Any = None) -> Any:
    """The file's JSON, `default` when it does not exist; DamagedFile (one line, with the fix) when it
    cannot be parsed."""
    p = Path(path)
    if not p.exists():
        return default
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise damaged(p, f"not UTF-8 text at byte {e.start}") from None
    except json.JSONDecodeError as e:
        raise damaged(p, f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except IsADirectoryError:
        raise damaged(p, "a folder where a file belongs") from None
