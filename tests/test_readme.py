"""The README's quick-start commands are the ones the Makefile and .ci/run use (no drift)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, "README quick start has no bash block"
    return [line.split("#", 1)[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_quick_start_is_two_make_targets() -> None:
    assert quick_start_commands() == ["make demo", "make test"]


def test_ci_runs_exactly_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [c.strip() for c in ci.splitlines() if c.strip() and not c.strip().startswith("#")]
    assert "make test" in commands
    test_cmd = quick_start_commands()[1]
    assert test_cmd == "make test"


def test_makefile_targets_install_then_run() -> None:
    mk = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^demo: install-demo\n\t\$\(VENV\)/bin/skillgrad demo$", mk, re.M)  # no extras
    assert re.search(r"^test: install\n\t\$\(VENV\)/bin/python -m pytest -q( -n \d+ --dist loadfile)?( --durations=\d+)?$", mk, re.M)
    assert "scripts/install.sh" in mk
    install = (ROOT / "scripts" / "install.sh").read_text(encoding="utf-8")
    assert "../shared/wheels" in install and "GGML_NATIVE=OFF" in install and "--no-cache-dir" in install
