"""`require` in conftest: a missing part skips locally and fails under SKILLGRAD_REQUIRE_ALL=1 (CI)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require

PROBE = '''
from conftest import require

def test_needs_missing_part():
    require(False, "the imaginary part")

def test_needs_model(gguf_path):
    assert gguf_path.is_file()
'''


def test_require_skips_locally_and_fails_when_everything_is_required(monkeypatch: pytest.MonkeyPatch) -> None:
    require(True, "nothing")  # present: no effect
    monkeypatch.delenv("SKILLGRAD_REQUIRE_ALL", raising=False)
    with pytest.raises(pytest.skip.Exception, match="the imaginary part"):
        require(None, "the imaginary part")
    monkeypatch.setenv("SKILLGRAD_REQUIRE_ALL", "1")
    with pytest.raises(pytest.fail.Exception, match=r"\(SKILLGRAD_REQUIRE_ALL=1\): the imaginary part"):
        require(None, "the imaginary part")


def test_missing_model_fails_the_suite_under_require_all(tmp_path: Path) -> None:
    # A real pytest run in which the bundled model cannot be found (sitecustomize hides it).
    tests = Path(__file__).parent
    (tmp_path / "conftest.py").write_text((tests / "conftest.py").read_text())
    (tmp_path / "test_probe.py").write_text(PROBE)
    (tmp_path / "sitecustomize.py").write_text(
        "import skillgrad.models.providers.local as m\nm.bundled_gguf = lambda: None\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)}
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", str(tmp_path)]
    local = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert local.returncode == 0 and "2 skipped" in local.stdout, local.stdout[-2000:]
    ci = subprocess.run(args, cwd=tmp_path, env={**env, "SKILLGRAD_REQUIRE_ALL": "1"}, capture_output=True,
                        text=True, timeout=120)
    assert ci.returncode == 1 and "1 failed, 1 error" in ci.stdout, ci.stdout[-2000:]  # fixture: error
    assert "required part missing (SKILLGRAD_REQUIRE_ALL=1)" in ci.stdout
