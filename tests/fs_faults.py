"""Run the skillgrad CLI with a file system that refuses writes under one folder after N of them succeeded.

    python tests/fs_faults.py ERRNO_NAME AFTER FOLDER -- CLI ARGS...

Every file opened for writing or appending under FOLDER, and every atomic write's temp file, counts as a
write; from the (AFTER+1)-th on each raises OSError(ERRNO_NAME), as a full disk (ENOSPC) or a folder
turned read-only (EROFS, EACCES) would. Used by tests/test_damaged_files.py (root ignores file modes, and
mounting a full or read-only file system needs privileges a test machine may not have).
"""

from __future__ import annotations

import builtins
import errno
import os
import sys
import tempfile
from pathlib import Path


def main() -> None:
    name, after, folder = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]).resolve()
    args = sys.argv[sys.argv.index("--") + 1:]
    code = getattr(errno, name)
    count = [0]

    def refuse(path: object) -> None:
        if Path(str(path)).resolve().is_relative_to(folder):
            count[0] += 1
            if count[0] > after:
                raise OSError(code, os.strerror(code), str(path))

    real_open, real_mkstemp = builtins.open, tempfile.mkstemp

    def fake_open(file: object, mode: str = "r", *a: object, **k: object) -> object:
        if isinstance(file, (str, os.PathLike)) and any(c in mode for c in "wax+"):
            refuse(file)
        return real_open(file, mode, *a, **k)  # type: ignore[call-overload]

    def fake_mkstemp(*a: object, **k: object) -> tuple[int, str]:
        refuse(Path(str(k.get("dir", "."))) / "tmp")
        return real_mkstemp(*a, **k)  # type: ignore[arg-type]

    builtins.open = fake_open  # type: ignore[assignment]
    tempfile.mkstemp = fake_mkstemp  # type: ignore[assignment]
    from skillgrad.cli import main as cli_main

    cli_main(args)


if __name__ == "__main__":
    main()
