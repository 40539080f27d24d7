"""The Python API (skillgrad.train / evaluate / load_run / load_config).

The example in docs/api.md runs as written, with the embedded model, and the command line then continues
the very run it made; the rest checks the typed views, config inputs and errors without a model.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import skillgrad
from skillgrad.api import _override_strings
from skillgrad.errors import UsageError
from tests.test_cli_support import DEMO_YAML, run_cli

ROOT = Path(__file__).resolve().parents[1]


def docs_example() -> str:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", text, re.S)
    assert block, "docs/api.md lost its example"
    return block.group(1)


@pytest.mark.slow
def test_docs_example_runs_and_the_cli_continues_its_run(tmp_path, gguf_path):
    code = docs_example()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    out = p.stdout
    assert out.splitlines()[0].startswith("[") and "starting run: env facts" in out  # progress=True lines
    assert re.search(r"step 1/1 reflect done in \S+: .*calls", out)
    assert re.search(r"^completed (0|0\.\d+|1\.0) -> (0|0\.\d+|1\.0)$", out, re.M)
    assert re.search(r"^step 1: (accept_new_best|accept|reject|skip\S*) \(gate score", out, re.M)
    assert "validation:" in out

    run_dir = tmp_path / "runs" / "api-example"
    run = skillgrad.load_run(run_dir)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert run.status == "completed" and run.summary is not None and not run.warnings
    assert run.summary.test_hard == summary["test_hard"] and run.summary.raw == summary
    assert [s.step for s in run.history] == [1] and run.history[0].action == json.loads(
        (run_dir / "history.json").read_text())[0]["action"]
    assert run.best_skill == (run_dir / "best_skill.md").read_text() and 0 in run.skills
    evals = list((tmp_path / "runs" / "evals").iterdir())
    assert len(evals) == 1 and evals[0].name.startswith("api-example-val-")
    assert json.loads((evals[0] / "eval_summary.json").read_text())["splits"]["val"]["n"] > 0

    # The same run through the command line: same directory, nothing redone, no new model call.
    small = {}
    exec(code.split("run = ")[0].replace("import skillgrad", ""), {}, small)
    overrides = [a for o in _override_strings(small["SMALL"]) for a in ("-o", o)]
    before = (run_dir / "events.jsonl").read_text().count('"llm_call"')
    r = run_cli(["train", "-c", DEMO_YAML, *overrides, "--out", str(run_dir), "-q"], tmp_path)
    assert r.rc == 0, str(r)
    events = (run_dir / "events.jsonl").read_text().splitlines()
    new_calls = [json.loads(e) for e in events if '"llm_call"' in e][before:]
    assert all(c.get("cached") for c in new_calls), new_calls


def test_import_is_lazy():
    code = ("import sys, skillgrad; assert 'skillgrad.api' not in sys.modules and 'pydantic' not in sys.modules;"
            " assert callable(skillgrad.train) and 'skillgrad.api' in sys.modules; print(sorted(skillgrad.__all__))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "load_run" in p.stdout and "evaluate" in p.stdout
    with pytest.raises(AttributeError, match="no_such"):
        skillgrad.no_such  # noqa: B018


def test_overrides_as_mapping_keep_their_types():
    assert _override_strings({"train.num_epochs": 2, "optimizer.use_slow_update": False, "env.name": "facts",
                              "env.note": "true", "env.ids": [1, 2]}) == [
        "train.num_epochs=2", "optimizer.use_slow_update=false", "env.name=facts", 'env.note="true"',
        "env.ids=[1, 2]"]
    assert _override_strings(["a.b=1"]) == ["a.b=1"] and _override_strings(None) == []
    with pytest.raises(UsageError, match="list of 'a.b=c' strings or a mapping"):
        _override_strings("train.num_epochs=1")


def test_load_config_from_each_kind_of_input(tmp_path, monkeypatch):
    packaged = skillgrad.load_config("skillgrad:demo.yaml", {"train.num_epochs": 1})
    assert packaged.path == Path(DEMO_YAML) and packaged.config.train.num_epochs == 1
    assert skillgrad.api.run_dir_for(packaged).parent == Path("runs")
    assert skillgrad.api.run_dir_for(packaged).name.startswith("demo-")
    (tmp_path / "base.yaml").write_text("_base_: skillgrad:demo.yaml\ntrain: {num_epochs: 3}\n")
    monkeypatch.chdir(tmp_path)
    mapping = skillgrad.load_config({"_base_": "base.yaml", "train": {"batch_size": 7}}, ["train.seed=5"])
    cfg = mapping.config
    assert (cfg.train.num_epochs, cfg.train.batch_size, cfg.train.seed) == (3, 7, 5)
    assert str(tmp_path / "base.yaml") in mapping.sources["files"] and mapping.path is None
    assert skillgrad.load_config(mapping) is mapping
    again = skillgrad.load_config(mapping, {"train.seed": 6})
    assert again.config.train.seed == 6 and again.config.train.batch_size == 7
    assert skillgrad.load_config(cfg, ["train.seed=9"]).config.train.seed == 9
    with pytest.raises(UsageError, match="batch_sise"):
        skillgrad.load_config({"train": {"batch_sise": 1}})
    with pytest.raises(UsageError, match="not found"):
        skillgrad.load_config(tmp_path / "missing.yaml")


def test_load_run_reads_damaged_files_without_raising(tmp_path):
    run_dir = tmp_path / "r"
    (run_dir / "skills").mkdir(parents=True)
    (run_dir / "config.json").write_text(json.dumps({"config": {"env": {"name": "facts"}}}))
    (run_dir / "summary.json").write_text('{"status": "comp')  # cut by a full disk
    (run_dir / "history.json").write_text(json.dumps([{"step": 1, "epoch": 1, "action": "reject",
                                                       "candidate_gate_score": 0.25, "best_score": "x"}]))
    (run_dir / "skills" / "skill_v0000.md").write_text("# initial\n")
    run = skillgrad.load_run(run_dir)
    assert run.summary is None and any("summary.json" in w for w in run.warnings)
    assert run.history[0].selection_score == 0.25 and run.history[0].best_score is None
    assert not run.history[0].accepted and run.initial_skill == "# initial\n" and run.best_skill is None
    with pytest.raises(UsageError, match="not a directory"):
        skillgrad.load_run(tmp_path / "nope")


def test_bad_arguments_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="progress must be"):
        skillgrad.train(DEMO_YAML, out=tmp_path / "x", progress="yes")  # type: ignore[arg-type]
    assert not (tmp_path / "x").exists()
    with pytest.raises(UsageError, match="skill: file not found"):
        skillgrad.evaluate(DEMO_YAML, tmp_path / "missing.md")
