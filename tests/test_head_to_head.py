"""benchmarks/head_to_head.py on its CI setting: one task, one seed, two steps, every system installed.

The real parts: the embedded SmolLM2 behind `python -m llama_cpp.server`, skillgrad's CLI trainer, GEPA's
`optimize`, SkillOpt 0.2.0's own trainer and DSPy's LabeledFewShot / BootstrapFewShot from PyPI in the peers venv
(created on first use), the zero-call few-shot baseline and the initial skill. Each system must produce a held-out
result or an error that says why; the proxy's request log must account for the calls.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require

ROOT = Path(__file__).resolve().parents[1]
# MIPROv2 (dspy-mipro) and the ablations are left out here: MIPROv2's tiny run alone took 158 s on the loaded 2-core
# machine (its proposer's calls); tests/test_h2h_mipro.py covers its adapter, the benchmark's runs the real thing
SYSTEMS = ("skillgrad", "skillopt", "gepa", "dspy-labeled", "dspy-bootstrap", "fewshot", "initial")


@pytest.mark.timeout(600)
def test_tiny_head_to_head_gives_every_system_a_result_or_a_reason(gguf_path: Path, tmp_path: Path) -> None:
    require(__import__("importlib").util.find_spec("gepa"), "gepa (a dev dependency)")
    out = tmp_path / "h2h"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "head_to_head.py"), "--tiny", "--seeds", "1",
                           "--tasks", "facts", "--budget-calls", "12", "--out", str(out), "--systems", *SYSTEMS],
                          capture_output=True, text=True, timeout=580)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = json.loads((out / "results.json").read_text())
    assert sorted(r["system"] for r in rows) == sorted(SYSTEMS)
    log = [json.loads(line) for line in (out / "requests.jsonl").read_text().splitlines()]
    for r in rows:
        assert ("after" in r) != bool(r.get("error")), r  # a held-out score, or an error saying why
        if r["system"] in ("initial", "fewshot", "dspy-labeled"):  # no model call in training
            assert "after" in r and r["usage"]["calls"] == 0, r
            continue
        if r["system"] == "dspy-bootstrap":  # no steps: the teacher's traces over at most the budget's tasks
            assert "after" in r and 0 < r["usage"]["calls"] <= 12, r
            continue
        if "after" in r:
            assert 0.0 <= r["after"] <= 1.0 and (out / "facts" / "seed0" / r["system"] / "best_skill.md").is_file()
            # a request past the budget is refused by the proxy (429, logged `refused`) and is no call
            mine = [x for x in log if x["tag"].startswith(f"{r['system']}-facts") and not x.get("refused")]
            assert r["usage"]["calls"] == len(mine) > 0  # the request log is the count
            assert r["usage"]["tokens"] == sum(x["prompt_tokens"] + x["completion_tokens"] for x in mine)
            # the system's own step markers split its requests into steps and the rest (start-up, wrap-up); the
            # default few-shot start may leave skillgrad no call for a step within 12 (its step-0 gates are start-up)
            if r["system"] == "skillgrad" and not r["step_windows"]:
                assert r["usage"]["step_calls"] == 0, r["usage"]
                continue
            assert r["step_windows"] and all(a <= b for a, b in r["step_windows"]), r
            assert 0 < r["usage"]["step_calls"] < r["usage"]["calls"], r["usage"]
            assert 0 < r["usage"]["step_tokens"] < r["usage"]["tokens"], r["usage"]
    by = {r["system"]: r for r in rows}
    assert "after" in by["skillgrad"], by["skillgrad"]
    assert by["skillgrad"]["usage"]["calls"] <= 12 + 1  # the budget holds it (the call in flight may finish)
    assert all(r["version"] for r in rows)  # each row names the code it ran
    # SkillOpt 0.2.0's wheel has no prompt files; if PyPI is unreachable the install error is the reason instead
    assert "after" in by["skillopt"] or "prompt" in by["skillopt"]["error"] or "install" in by["skillopt"]["error"]
    assert by["dspy-labeled"]["demos"] > 0 and by["fewshot"]["examples"] > 0  # the facts golds pass its scorer
    table = (out / "table.md").read_text()
    assert all(f"| {name} |" in table for name in SYSTEMS)
    assert "tokens outside steps" in table
