"""head_to_head.py --resume: which rows of a results.json are kept (benchmarks/h2h/resume.py), and the real script
keeping and rerunning rows against the embedded model (zero-call systems only, so it stays small)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from h2h import resume  # noqa: E402

OPTIONS = {"budget_calls": 40, "budget_tokens": 20000, "teacher_cap": 256, "teacher_url": "", "teacher_model": "",
           "tiny": False, "model": "", "endpoint": "", "n_threads": 1, "n_ctx": 4096}


def git(repo: Path, *a: str) -> str:
    return subprocess.run(["git", *a], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def commit_all(repo: Path, msg: str) -> str:
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", msg)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    for rel in ("src/skillgrad/engine/step.py", "src/skillgrad/envs/facts.py", "benchmarks/h2h/run_gepa.py",
                "benchmarks/h2h/run_dspy.py", "benchmarks/head_to_head.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    commit_all(tmp_path, "first")
    return tmp_path


def row(system: str, commit: str, **kw: Any) -> dict[str, Any]:
    return {"system": system, "after": 0.5, "options": dict(OPTIONS), "version": "gepa==0.1.4",
            "code": {"commit": commit, "dirty": []}, **kw}


def test_an_engine_change_reruns_skillgrad_and_keeps_the_peers(repo: Path) -> None:
    first = git(repo, "rev-parse", "HEAD")
    (repo / "src/skillgrad/engine/step.py").write_text("x = 2\n")
    (repo / "benchmarks/head_to_head.py").write_text("x = 2\n")  # the loop itself is no system's code
    now = resume.code_stamp(repo)
    assert now["dirty"] == ["src/skillgrad/engine/step.py"]  # head_to_head.py is not looked at
    assert "uncommitted changes now in src/skillgrad/engine/step.py" in str(
        resume.rerun_reason(row("skillgrad", first), OPTIONS, "", repo, now))
    commit_all(repo, "engine")
    now = resume.code_stamp(repo)
    assert resume.rerun_reason(row("skillgrad", first), OPTIONS, "", repo, now) == \
        f"its code changed since {first[:7]}: src/skillgrad/engine/step.py"
    assert resume.code_paths("skillgrad-fewshot-start") == resume.code_paths("skillgrad")
    for name in ("skillgrad-analysts-only", "skillgrad-demonstrations-only", "skillgrad-fewshot-start", "fewshot"):
        assert "engine/step.py" in str(resume.rerun_reason(row(name, first), OPTIONS, "", repo, now))
    assert resume.rerun_reason(row("gepa", first), OPTIONS, "gepa==0.1.4", repo, now) is None
    assert resume.rerun_reason(row("initial", first), OPTIONS, "abc", repo, now) is None
    # what every system shares (the environments, held-out scoring) reruns them all
    (repo / "src/skillgrad/envs/facts.py").write_text("x = 3\n")
    commit_all(repo, "env")
    now = resume.code_stamp(repo)
    assert "src/skillgrad/envs/facts.py" in str(resume.rerun_reason(row("gepa", first), OPTIONS, "gepa==0.1.4",
                                                                    repo, now))
    # a peer's own adapter reruns that peer only
    second = now["commit"]
    (repo / "benchmarks/h2h/run_dspy.py").write_text("x = 4\n")
    commit_all(repo, "dspy")
    now = resume.code_stamp(repo)
    dspy = row("dspy-bootstrap", second, version="dspy==3.4.1")
    assert "run_dspy.py" in str(resume.rerun_reason(dspy, OPTIONS, "dspy==3.4.1", repo, now))
    assert resume.rerun_reason(row("gepa", second), OPTIONS, "gepa==0.1.4", repo, now) is None


def test_other_options_versions_or_no_result_run_again(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    now = resume.code_stamp(repo)
    assert resume.rerun_reason(row("gepa", head), {**OPTIONS, "budget_tokens": 0}, "gepa==0.1.4", repo, now) == \
        "other options: budget_tokens 20000 -> 0"
    assert resume.rerun_reason(row("gepa", head), OPTIONS, "gepa==0.2.0", repo, now) == \
        "other version: gepa==0.1.4 -> gepa==0.2.0"
    failed = row("gepa", head)
    del failed["after"]
    assert resume.rerun_reason(failed, OPTIONS, "gepa==0.1.4", repo, now) == "no held-out result"
    dirty = row("gepa", head, code={"commit": head, "dirty": ["benchmarks/h2h/run_gepa.py"]})
    assert resume.rerun_reason(dirty, OPTIONS, "gepa==0.1.4", repo, now) == \
        "it ran with uncommitted changes in benchmarks/h2h/run_gepa.py"
    unknown = row("gepa", "0" * 40)
    assert "is not in this repository" in str(resume.rerun_reason(unknown, OPTIONS, "gepa==0.1.4", repo, now))


def test_rows_from_before_the_options_were_recorded_take_their_invocations(tmp_path: Path) -> None:
    ap = argparse.ArgumentParser()
    for opt, default in (("--budget-calls", 40), ("--budget-tokens", 0), ("--teacher-cap", 256), ("--n-threads", 1),
                         ("--n-ctx", 4096)):
        ap.add_argument(opt, type=int, default=default)
    for opt in ("--teacher-url", "--teacher-model", "--endpoint", "--gguf"):
        ap.add_argument(opt, default="")
    ap.add_argument("--tiny", action="store_true")
    inv = tmp_path / "invocations.jsonl"
    inv.write_text("\n".join(json.dumps(i) for i in (
        {"argv": ["--budget-calls", "12", "--tiny", "--tasks", "facts"], "started": "2026-11-27T18:00:00+00:00",
         "skillgrad": "aaa1111"},
        {"argv": ["--budget-tokens", "20000"], "started": "2026-11-27T19:00:00+00:00",
         "skillgrad": "bbb2222+uncommitted-src"})) + "\n")
    rows = [{"system": "gepa", "finished": "2026-11-27T18:30:00+00:00"},
            {"system": "skillgrad", "finished": "2026-11-27T19:30:00+00:00"},
            {"system": "initial", "finished": "2026-11-27T17:00:00+00:00"},  # before any invocation: left alone
            {"system": "fewshot", "finished": "2026-11-27T19:30:00+00:00", "options": {"x": 1}, "code": {"c": 1}}]
    resume.backfill(rows, inv, ap)
    assert rows[0]["options"]["budget_calls"] == 12 and rows[0]["options"]["tiny"] is True
    assert rows[0]["code"] == {"commit": "aaa1111", "dirty": []}
    assert rows[1]["options"]["budget_tokens"] == 20000 and rows[1]["options"]["budget_calls"] == 40
    assert rows[1]["code"] == {"commit": "bbb2222", "dirty": ["src"]}  # then only src/ was checked
    assert "options" not in rows[2]
    assert rows[3]["options"] == {"x": 1}


@pytest.mark.timeout(400)  # three invocations; 222 s for four at load 4 on the 2-core machine
def test_resume_keeps_finished_rows_and_reruns_on_other_options(gguf_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "h2h"

    def h2h(*extra: str) -> tuple[str, dict[str, dict[str, Any]]]:
        proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "head_to_head.py"), "--tiny", "--seeds", "1",
                               "--tasks", "facts", "--budget-calls", "12", "--out", str(out), "--systems", "initial",
                               "fewshot", *extra], capture_output=True, text=True, timeout=280)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout, {r["system"]: r for r in json.loads((out / "results.json").read_text())}

    _, first = h2h()
    assert first["initial"]["options"]["budget_calls"] == 12 and first["initial"]["code"]["commit"]
    log, again = h2h("--resume")
    now = resume.code_stamp(ROOT)
    for name in ("initial", "fewshot"):  # kept, unless this checkout has uncommitted changes in its code
        touched = [p for p in now["dirty"] if resume._under(p, resume.code_paths(name))]
        if touched:
            assert f"facts seed 0 {name}: runs again (uncommitted changes now in" in log, log
        else:
            assert f"facts seed 0 {name}: kept from" in log, log
            assert again[name]["finished"] == first[name]["finished"]
    # without --resume every named row runs again (other options rerun under --resume too: the tests above)
    _, third = h2h("--budget-tokens", "5000")
    assert third["fewshot"]["finished"] > again["fewshot"]["finished"]
    assert third["initial"]["options"]["budget_tokens"] == 5000
