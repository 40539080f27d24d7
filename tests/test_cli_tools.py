"""`estimate`, `envs list` and `envs new` (whose scaffold must pass its own test and train one step)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli_support import DEMO_YAML, TINY, run_cli


def test_estimate_table_has_stages_and_total(tmp_path: Path) -> None:
    r = run_cli(["estimate", "--config", DEMO_YAML], tmp_path)
    assert r.rc == 0, str(r)
    first_cells = [line.split("│")[1].strip() for line in r.out.splitlines() if line.startswith("│")]
    assert {"baseline", "rollout", "reflect", "gate", "test", "total"} <= set(first_cells), r.out
    assert first_cells[-1] == "total"
    assert "steps)" in r.out  # the title gives the number of steps


def test_estimate_json_follows_the_loop_arithmetic(tmp_path: Path) -> None:
    # the arithmetic of a run started from the initial skill (the few-shot start's candidate becomes the best)
    r = run_cli(["estimate", "--config", DEMO_YAML, *TINY, "-o", "optimizer.start_from=initial", "--json"], tmp_path)
    assert r.rc == 0, str(r)
    est = json.loads(r.out)
    assert est["steps"] == 1  # 5 train items, batch 5, one epoch
    calls = {(row["stage"], row["role"]): row["calls"] for row in est["rows"]}
    assert calls[("rollout", "student")] == 5
    assert calls[("gate", "student")] == 5  # sel_env_num
    # the initial, the best (= final) and the zero-call few-shot baseline skill on 5 test items
    assert calls[("test", "student")] == 15
    assert calls[("student_probe", "student")] == 6 and calls[("reflect", "teacher")] == 5  # every train task fails
    assert ("slow_update", "student") not in calls and ("meta_skill", "teacher") not in calls
    assert est["total"]["calls"] == sum(row["calls"] for row in est["rows"])
    assert est["total"]["cost"] == 0.0  # local models are free


def test_estimate_bad_config_is_a_usage_error(tmp_path: Path) -> None:
    r = run_cli(["estimate", "--config", DEMO_YAML, "-o", "env.name=nope"], tmp_path)
    assert r.rc == 2 and len(r.err_lines) == 1 and "nope" in r.err, str(r)


def test_envs_list(tmp_path: Path) -> None:
    r = run_cli(["envs", "list"], tmp_path)
    assert r.rc == 0, str(r)
    names = {line.split("│")[1].strip() for line in r.out.splitlines() if line.startswith("│")}
    assert {"facts", "fewshot-format", "searchqa"} <= names, r.out
    facts = next(line for line in r.out.splitlines() if line.startswith("│ facts "))
    assert "ready" in facts


def test_envs_new_refuses_an_existing_package(tmp_path: Path) -> None:
    assert run_cli(["envs", "new", "my-bench", "--dir", "pkgs"], tmp_path).rc == 0
    r = run_cli(["envs", "new", "my-bench", "--dir", "pkgs"], tmp_path)
    assert r.rc == 2 and len(r.err_lines) == 1 and "my_bench" in r.err, str(r)


@pytest.mark.slow
def test_envs_new_scaffold_passes_its_test_and_trains(tmp_path: Path, gguf_path: Path) -> None:
    r = run_cli(["envs", "new", "my-bench", "--dir", "pkgs"], tmp_path)
    assert r.rc == 0, str(r)
    pkg = tmp_path / "pkgs" / "my_bench"
    assert f"created {Path('pkgs') / 'my_bench'}" in r.out, r.out
    for name in ("config.yaml", "README.md", "pyproject.toml", "my_bench/env.py", "tests/test_my_bench.py"):
        assert (pkg / name).is_file(), name
    # the command the CLI and the README suggest
    assert "PYTHONPATH=. skillgrad train --config config.yaml" in r.out
    assert "PYTHONPATH=. skillgrad train --config config.yaml" in (pkg / "README.md").read_text()

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(pkg), os.environ.get("PYTHONPATH")]))}
    # The generated test uses every available core; one core keeps llama.cpp from spin-waiting on a busy machine.
    one_core = min(os.sched_getaffinity(0))
    t = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=pkg,
                       env=env, capture_output=True, text=True, timeout=300,
                       preexec_fn=lambda: os.sched_setaffinity(0, {one_core}))
    assert t.returncode == 0, t.stdout[-3000:] + t.stderr[-3000:]
    assert "3 passed" in t.stdout, t.stdout

    r = run_cli(["train", "--config", "config.yaml", "-o", "model.student.n_threads=1",
                 "-o", "model.teacher.n_threads=1", "-o", "evaluation.sel_env_num=3",
                 "-o", "evaluation.test_env_num=3", "-o", "train.batch_size=3",
                 "-o", "train.train_size=3",
                 "-o", "train.stop_at_ceiling=false"], pkg,  # the scaffold's baseline may already be 1.0
                env={"PYTHONPATH": env["PYTHONPATH"]})
    assert r.rc == 0, str(r)
    runs = [p for p in (pkg / "runs").iterdir() if p.is_dir()]
    assert len(runs) == 1, runs
    summary = json.loads((runs[0] / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["total_steps"] == 1
    assert summary["env"] == "my_bench.env:MyBenchEnv"
    assert (runs[0] / "best_skill.md").is_file()
