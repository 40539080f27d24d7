"""The sandbox's in-child runner (exec/sandbox_runner.py) on its own: its path rule, the audit hook when the
runner is started by path with only that layer, and the path-free traceback of the program's own frames.
The layers together are tested through `run_python` in tests/test_sandbox.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from skillgrad.exec import sandbox_runner
from skillgrad.exec.sandbox import RUNNER, runtime_read_paths


def test_inside_resolves_links_and_dotdot(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "link").symlink_to(tmp_path)
    allowed = (str(root.resolve()),)
    assert sandbox_runner.inside(str(root / "a.txt"), allowed)
    assert sandbox_runner.inside(str(root).encode(), allowed)
    assert sandbox_runner.inside(3, allowed)  # an already open descriptor
    assert not sandbox_runner.inside(str(root / ".." / "x"), allowed)
    assert not sandbox_runner.inside(str(root / "link" / "x"), allowed)  # a symlink out of the root
    assert not sandbox_runner.inside(str(root) + "-sibling/x", allowed)  # a prefix is not a parent


def _run(tmp_path: Path, code: str, **cfg: object) -> subprocess.CompletedProcess[str]:
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    script = root / "main.py"
    script.write_text(code)
    read_dirs, read_files = runtime_read_paths()  # the Python runtime stays readable
    conf = {"read_dirs": read_dirs, "read_files": read_files, "nproc": 0, "landlock": False, "audit": True, **cfg}
    return subprocess.run([sys.executable, "-I", "-B", str(RUNNER), str(root), str(script), json.dumps(conf)],
                          cwd=root, capture_output=True, text=True, timeout=60)


def test_runner_by_path_applies_the_audit_hook(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    code = f"""
open("inside.txt", "w").write("ok")
for what, act in [("write", lambda: open({str(outside)!r}, "w")), ("spawn", lambda: __import__("os").system("true")),
                  ("net", lambda: __import__("socket").create_connection(("127.0.0.1", 9)))]:
    try:
        act()
        print(what, "LEAK")
    except PermissionError as e:
        print(what, "DENIED", e)
"""
    proc = _run(tmp_path, code)
    assert proc.returncode == 0, proc.stderr
    assert [ln.split()[:2] for ln in proc.stdout.splitlines()] == [["write", "DENIED"], ["spawn", "DENIED"],
                                                                  ["net", "DENIED"]]
    assert (tmp_path / "root" / "inside.txt").read_text() == "ok" and not outside.exists()


def test_runner_without_the_hook_does_not_block(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    proc = _run(tmp_path, f"open({str(outside)!r}, 'w').write('x')\n", audit=False)
    assert proc.returncode == 0, proc.stderr
    assert outside.read_text() == "x"


def test_traceback_shows_only_the_program(tmp_path: Path) -> None:
    proc = _run(tmp_path, "import sys\nsys.path.append('x')\ndef f():\n    raise ValueError('boom')\nf()\n")
    assert proc.returncode == 1
    assert 'File "main.py", line 4, in f' in proc.stderr and "ValueError: boom" in proc.stderr
    assert "sandbox_runner" not in proc.stderr and str(tmp_path) not in proc.stderr and "runpy" not in proc.stderr


def test_the_program_cannot_import_the_runners_folder(tmp_path: Path) -> None:
    proc = _run(tmp_path, "import sandbox\n", audit=False)  # exec/sandbox.py sits next to the runner
    assert proc.returncode == 1 and "ModuleNotFoundError" in proc.stderr
