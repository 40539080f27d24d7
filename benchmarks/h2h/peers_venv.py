"""The peers' virtual environment: SkillOpt 0.2.0 from PyPI, kept apart from skillgrad's venv.

SkillOpt pins its own stack (azure-identity, openai, numpy, openpyxl); installing it beside skillgrad could move
shared packages, so it lives in `benchmarks/.venv-peers` (git-ignored; CI caches it by this file's hash).
GEPA needs nothing extra: it is a skillgrad dev dependency and runs from skillgrad's venv.

    python benchmarks/h2h/peers_venv.py            # create or reuse; prints the venv's python
"""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

SKILLOPT_SPEC = "skillopt==0.2.0"
VENV = Path(__file__).resolve().parents[1] / ".venv-peers"
MARKER = ".h2h-installed"


def peers_python(venv_dir: Path = VENV) -> Path:
    return venv_dir / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def ensure_peers_venv(venv_dir: Path = VENV, quiet: bool = True) -> Path:
    """Create the venv and install SkillOpt once; later calls reuse it (the marker names what was installed)."""
    py = peers_python(venv_dir)
    marker = venv_dir / MARKER
    if py.is_file() and marker.is_file() and marker.read_text().strip() == SKILLOPT_SPEC:
        return py
    if not py.is_file():
        venv.EnvBuilder(with_pip=True, clear=True).create(venv_dir)
    cmd = [str(py), "-m", "pip", "install", "--disable-pip-version-check", *(["-q"] if quiet else []), SKILLOPT_SPEC]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"installing {SKILLOPT_SPEC} into {venv_dir} failed: {proc.stderr.strip()[-600:]}")
    marker.write_text(SKILLOPT_SPEC + "\n")
    return py


if __name__ == "__main__":
    print(ensure_peers_venv(quiet=False))
