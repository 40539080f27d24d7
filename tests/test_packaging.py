"""The built wheel carries the package data the product needs (SkillOpt 0.2.0 shipped without its prompts)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_contains_prompts_configs_and_sample_data(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    wheel = next(tmp_path.glob("skillgrad-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    prompts = sorted((ROOT / "src/skillgrad/prompts").glob("*.md"))
    assert prompts
    for p in prompts:
        assert f"skillgrad/prompts/{p.name}" in names, p.name
    for rel in ("skillgrad/configs/demo.yaml", "skillgrad/configs/_base_/default.yaml",
                "skillgrad/envs/facts/initial.md", "skillgrad/envs/facts/prompts/family/analyst_error.md",
                "skillgrad/models/prices.json"):
        assert rel in names, rel
    for env in ("searchqa", "livemath", "docvqa", "spreadsheetbench", "officeqa"):
        shipped = [n for n in names if n.startswith(f"skillgrad/envs/{env}/sample/")]
        on_disk = [p for p in (ROOT / f"src/skillgrad/envs/{env}/sample").rglob("*") if p.is_file()]
        assert len(shipped) == len(on_disk) > 0, env
    assert any(n.endswith("entry_points.txt") for n in names)
    eps = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "[skillgrad.envs]" in eps and "facts = skillgrad.envs.facts:FactsEnv" in eps
