"""The peers' virtual environment: SkillOpt 0.2.0 and DSPy from PyPI, kept apart from skillgrad's venv.

SkillOpt pins its own stack (azure-identity, openai, numpy, openpyxl) and DSPy brings litellm and its own pins;
installing them beside skillgrad could move shared packages, so they live in `benchmarks/.venv-peers`
(git-ignored; CI caches it by this file's hash). GEPA needs nothing extra: it is a skillgrad dev dependency and
runs from skillgrad's venv.

    python benchmarks/h2h/peers_venv.py            # create or reuse; prints the venv's python
"""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

SKILLOPT_SPEC = "skillopt==0.2.0"
DSPY_SPEC = "dspy[optuna]==3.4.1"  # LabeledFewShot, BootstrapFewShot and MIPROv2 (h2h/run_dspy.py; MIPROv2 needs optuna)
VENV = Path(__file__).resolve().parents[1] / ".venv-peers"
MARKER = ".h2h-installed"


def peers_python(venv_dir: Path = VENV) -> Path:
    return venv_dir / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def ensure_peers_venv(venv_dir: Path = VENV, quiet: bool = True, source: Path | None = None) -> Path:
    """Create the venv and install SkillOpt once; later calls reuse it (the marker names what was installed).

    `source`: a checkout of SkillOpt (e.g. its v0.2.0 tag) installed editable instead of the PyPI wheel, so its
    prompt and config files are read from the checkout (the published 0.2.0 wheel and sdist lack them).
    """
    py = peers_python(venv_dir)
    marker = venv_dir / MARKER
    skillopt = ["-e", str(source.resolve())] if source else [SKILLOPT_SPEC]
    want = " ".join([*skillopt, DSPY_SPEC])
    if py.is_file() and marker.is_file() and marker.read_text().strip() == want:
        return py
    if not py.is_file():
        venv.EnvBuilder(with_pip=True, clear=True).create(venv_dir)
    cmd = [str(py), "-m", "pip", "install", "--disable-pip-version-check", *(["-q"] if quiet else []),
           *skillopt, DSPY_SPEC]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"installing {want} into {venv_dir} failed: {proc.stderr.strip()[-600:]}")
    marker.write_text(want + "\n")
    return py


if __name__ == "__main__":
    print(ensure_peers_venv(quiet=False))
