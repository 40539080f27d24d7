"""The layer contracts in .importlinter (docs/architecture.md) hold: imports point downward only, skill/ is
pure, core/ is the bottom, reports sit above the run store. `lint-imports` runs here so CI checks them."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "src" / "skillgrad"


def _lint_imports() -> str:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    if exe is None:
        pytest.fail("lint-imports is not installed: pip install -e '.[dev]' (import-linter is in the dev extra)")
    return exe


def test_layer_contracts_are_kept() -> None:
    proc = subprocess.run([_lint_imports(), "--config", str(ROOT / ".importlinter"), "--no-cache"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout


def test_every_package_is_in_a_layer() -> None:
    """A new top-level package or module must be placed in the layers, or the contract would not see it."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / ".importlinter")
    listed = {name.strip() for line in cfg["importlinter:contract:layers"]["layers"].split("\n")
              for name in line.replace("|", ":").split(":") if name.strip()}
    present = {f"skillgrad.{p.stem if p.is_file() else p.name}" for p in PKG.iterdir()
               if (p.is_dir() and (p / "__init__.py").exists()) or (p.suffix == ".py" and p.stem != "__init__")}
    # data-only packages (packaged YAML configs, prompt texts) hold no code to layer
    present -= {"skillgrad.configs", "skillgrad.prompts"}
    assert present - listed == set(), f"add these to a layer in .importlinter: {sorted(present - listed)}"


def test_the_engine_contract_forbids_every_environment_package() -> None:
    """The engine reads an environment's contract (envs/base.py ReplyContract), never its code: every environment
    package under envs/, and every helper module of theirs, is forbidden to skillgrad.engine in .importlinter."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / ".importlinter")
    forbidden = set(cfg["importlinter:contract:engine-env-agnostic"]["forbidden_modules"].split())
    shared = {"base", "registry", "splits", "trajectory"}  # the protocol and the generic helpers every env uses
    present = {f"skillgrad.envs.{p.stem if p.is_file() else p.name}" for p in (PKG / "envs").iterdir()
               if (p.is_dir() and (p / "__init__.py").exists())
               or (p.suffix == ".py" and p.stem not in shared | {"__init__"})}
    assert present - forbidden == set(), f"forbid these to skillgrad.engine in .importlinter: {present - forbidden}"


def test_the_engine_never_reads_an_environments_wording() -> None:
    """No engine module tests a fail-reason prefix, reads the tasks env's `required_text` extra, or matches the
    wording of a check's feedback: what the engine knows of a passing reply is the typed contract."""
    banned = ("fail_reason.startswith", '"required_text"', "_CHECK_VOICE", '"missing_knowledge:', "check failed:",
              "zlib.crc32")
    hits = [f"{p.relative_to(ROOT)}: {b}" for p in (PKG / "engine").rglob("*.py")
            for b in banned if b in p.read_text(encoding="utf-8")]
    assert hits == []
