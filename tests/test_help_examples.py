"""Every `Example:` in every command's --help runs as written.

The examples are collected from the CLI itself (every command and group), so a new example without an entry
in HOW fails `test_every_example_has_a_way_to_run`: none is skipped silently. They run in order in one
sandbox (HOME and PATH point into it; `crontab` is a fake that keeps its table in a file), where the earlier
examples' files exist for the later ones, as they would for a user following the help. A training run is
checked to start and then stopped (SIGTERM), or gets the tiny-run settings appended; a server is checked
to answer and then stopped. Prerequisites a user would already have (a finished run, upstream data files,
a staged Sleep proposal) are made by `sandbox`.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import typer.main
from conftest import free_port
from test_cli_support import TINY, run_cli

from skillgrad.cli import app

pytestmark = pytest.mark.slow

FINISHES = "finishes"  # exit 0
STARTS = "starts"  # prints its first progress line (stdout is a pipe), then SIGTERM: exit 130
SERVES = "serves"  # prints its address on stderr, then SIGTERM
SERVES_OUT = "serves on stdout"  # prints its address on stdout, then SIGTERM
REFUSES = "refuses"  # a clear one-line `error:` (exit 2) in a project where there is nothing to act on

# example -> (how, arguments appended to it)
HOW: dict[str, tuple[str, list[str]]] = {
    "skillgrad demo": (STARTS, []),
    "skillgrad demo --seed 1": (FINISHES, [*TINY, "--quiet"]),  # the sandbox ran it already: prints the result
    "skillgrad demo --family fewshot-format": (STARTS, []),
    "skillgrad train -c skillgrad:demo.yaml -o train.num_epochs=1": (STARTS, []),
    "skillgrad estimate -c skillgrad:demo.yaml": (FINISHES, []),
    "skillgrad resume runs/demo-seed1 -o budget.max_calls=2000": (FINISHES, ["--quiet"]),
    "skillgrad eval -c skillgrad:demo.yaml --skill runs/demo-seed1/best_skill.md --split test":
        (FINISHES, ["-o", "env.n_facts=10", "-o", "evaluation.test_env_num=3", "-o", "model.student.n_threads=1"]),
    "skillgrad report runs/demo-seed1": (FINISHES, []),
    "skillgrad runs list runs/": (FINISHES, []),
    "skillgrad runs show runs/demo-seed1": (FINISHES, []),
    "skillgrad compare runs/demo-seed1 runs/demo-seed2": (FINISHES, []),
    "skillgrad envs list": (FINISHES, []),
    "skillgrad envs new my-bench --dir envs/": (FINISHES, []),
    "skillgrad configs list": (FINISHES, []),
    "skillgrad configs show skillgrad:demo.yaml": (FINISHES, []),
    "skillgrad data prepare searchqa --from searchqa.jsonl --to data/searchqa": (FINISHES, []),
    "skillgrad data prepare searchqa --from ~/Downloads/searchqa.jsonl --to data/searchqa": (FINISHES, []),
    "skillgrad data prepare officeqa --from officeqa.csv --ids SkillOpt/data/officeqa_id_split --to data/oq":
        (FINISHES, []),
    "skillgrad export mlflow runs/demo-seed1 --tracking-uri file:./mlruns": (FINISHES, []),
    "skillgrad sleep dry-run --project .": (FINISHES, ["--threads", "1"]),
    "skillgrad sleep run --project . --max-minutes 30": (FINISHES, ["--threads", "1"]),
    "skillgrad sleep run --project .": (FINISHES, ["--threads", "1"]),
    "skillgrad sleep status --project .": (FINISHES, []),
    "skillgrad sleep harvest --output tasks.jsonl --miner heuristic": (FINISHES, []),
    "skillgrad sleep adopt --only CLAUDE.md": (FINISHES, []),  # one file of the two staged
    "skillgrad sleep adopt": (FINISHES, []),  # the rest
    "skillgrad sleep undo": (FINISHES, []),
    "skillgrad sleep discard .skillgrad/sleep/20260101-031700": (FINISHES, []),
    "skillgrad sleep schedule --hour 3 --minute 17": (FINISHES, []),
    "skillgrad sleep unschedule": (FINISHES, []),
    "skillgrad integrations codex install": (FINISHES, []),
    "skillgrad integrations codex uninstall": (FINISHES, []),
    "skillgrad ui --root runs --project .": (SERVES, ["--port", "0"]),
    "skillgrad mcp --project .": (FINISHES, []),  # stdio server: ends at the end of its input
    "skillgrad skill check my-skill": (REFUSES, []),  # the sandbox holds no skill folder
    "skillgrad skill adopt runs/my-skill-run my-skill": (REFUSES, []),
    "skillgrad skill undo my-skill": (REFUSES, []),
    "skillgrad serve-model --port 8080": (SERVES, ["--port", str(free_port()), "--threads", "1"]),
    "skillgrad handoff serve --board runs/agent-board --port 8765": (SERVES_OUT, ["--port", str(free_port())]),
}
# runs before its neighbours in the help (`sleep adopt` needs the proposal `sleep run` would stage, etc.)
ORDER = ["skillgrad sleep adopt --only CLAUDE.md", "skillgrad sleep adopt", "skillgrad sleep undo",
         "skillgrad sleep discard .skillgrad/sleep/20260101-031700",
         "skillgrad sleep schedule --hour 3 --minute 17", "skillgrad sleep unschedule",
         "skillgrad integrations codex install", "skillgrad integrations codex uninstall"]


def help_examples() -> list[str]:
    """Every command line after `Example:` in the help of every command and group, split at `&&` and
    `(or: ...)`, in the order the commands are registered."""
    root = typer.main.get_command(app)
    context = type(root.make_context("skillgrad", ["--help"], resilient_parsing=True))
    found: list[str] = []

    def walk(cmd: object) -> None:
        for text in re.findall(r"Example: (.+)", getattr(cmd, "help", None) or ""):
            for part in re.split(r"\s*\(or:\s*|\)\s*$|\s+&&\s+", text.strip()):
                part = part.strip().rstrip(")")
                if part and part not in found:
                    found.append(part)
        if hasattr(cmd, "list_commands"):
            ctx = context(cmd)  # type: ignore[arg-type]
            for name in cmd.list_commands(ctx):
                walk(cmd.get_command(ctx, name))

    walk(root)
    return found


def test_every_example_has_a_way_to_run() -> None:
    examples = help_examples()
    assert len(examples) >= 30
    assert set(examples) == set(HOW), f"no way to run: {set(examples) - set(HOW)}; stale: {set(HOW) - set(examples)}"


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory, gguf_path: Path) -> Path:
    box = tmp_path_factory.mktemp("help")
    r = run_cli(["demo", "--seed", "1", *TINY, "--quiet"], box)  # the demo example, with the tiny settings
    assert r.rc == 0, str(r)
    shutil.copytree(box / "runs" / "demo-seed1", box / "runs" / "demo-seed2")  # a second run to compare
    rows = [{"key": f"k{i}", "question": f"q{i}", "context": f"[DOC] [TLE] t [PAR] fact {i}", "answers": [f"a{i}"]}
            for i in range(10)]
    (box / "searchqa.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    (box / "Downloads").mkdir()
    shutil.copy(box / "searchqa.jsonl", box / "Downloads" / "searchqa.jsonl")
    (box / "docs").mkdir()
    (box / "docs" / "bulletin.txt").write_text("Total receipts: 1,234 million dollars\n")
    with open(box / "officeqa.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["uid", "question", "ground_truth", "source_files", "source_docs"])
        for i in range(7):
            w.writerow([f"u{i}", f"q{i}", "1,234", "docs/bulletin.txt", "bulletin"])
    for split, ids in (("train", ["u0", "u1"]), ("val", ["u2"]), ("test", ["u3", "u4", "u5"])):
        d = box / "SkillOpt" / "data" / "officeqa_id_split" / split
        d.mkdir(parents=True)
        (d / "items.json").write_text(json.dumps([{"id": i} for i in ids]))
    # two staged Sleep proposals: the example discards the first by name; adopt takes the newest
    from skillgrad.sleep.stage import sha256_file, stage_proposal

    (box / "SKILL.md").write_text("# Skill\n")
    (box / "CLAUDE.md").write_text("# Project\n")
    for when in (datetime(2026, 1, 1, 3, 17, tzinfo=UTC), datetime(2026, 1, 2, 3, 17, tzinfo=UTC)):
        stage_proposal(box, [(box / name, f"# {name}\n- learned {when:%d}\n", sha256_file(box / name))
                             for name in ("SKILL.md", "CLAUDE.md")],
                       night_run_dir=box / "night", scores={"skill": {"val_score_after": 1.0}}, report={"ok": True},
                       report_md="# r\n", evidence={"tasks": []}, now=when)
    (box / "bin").mkdir()
    fake = box / "bin" / "crontab"
    fake.write_text('#!/bin/sh\nf="$HOME/crontab.txt"\nif [ "$1" = "-l" ]; then\n  [ -f "$f" ] && exec cat "$f"\n'
                    '  echo "no crontab for $USER" >&2; exit 1\nfi\ncat "${1:--}" > "$f"\n')
    fake.chmod(0o755)
    return box


def _env(box: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(box), "PATH": f"{box / 'bin'}{os.pathsep}{os.environ['PATH']}",
            "PYTHONUNBUFFERED": "1"}


def _argv(example: str, extra: list[str], box: Path) -> list[str]:
    words = [str(box / w[2:]) if w.startswith("~/") else w for w in shlex.split(example)]  # HOME is the box
    assert words[0] == "skillgrad"
    return [sys.executable, "-m", "skillgrad.cli", *words[1:], *extra]


def _start_then_stop(argv: list[str], box: Path, ready: re.Pattern[str], stream: str, timeout: float) -> str:
    """Start the command, wait for `ready` on its stdout or stderr, SIGTERM it; return what it printed."""
    p = subprocess.Popen(argv, cwd=box, env=_env(box), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = ""
    deadline = time.monotonic() + timeout
    pipe = p.stdout if stream == "stdout" else p.stderr
    assert pipe is not None
    try:
        while time.monotonic() < deadline:
            line = pipe.readline()
            if not line:
                break
            seen += line
            if ready.search(line):
                break
        else:
            pytest.fail(f"{argv[3:]}: not ready in {timeout:.0f}s:\n{seen}")
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=120)
    seen += out + err
    assert ready.search(seen), f"{argv[3:]} ended before it was ready (rc {p.returncode}):\n{seen}"
    assert "Traceback" not in seen and "error:" not in seen, seen
    return seen


def _sessions(box: Path) -> None:
    """Recorded Claude Code sessions of this project for `sleep harvest` (copied late: with them in place the
    `sleep run` examples above would train a whole night)."""
    src = Path(__file__).parent / "fixtures" / "sleep_sessions" / "claude_code" / "projects" / "-home-dev-work-status-app"
    dest = box / ".claude" / "projects" / "p"
    dest.mkdir(parents=True)
    yesterday = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%d")  # inside the first night's window
    for f in src.glob("*.jsonl"):
        text = f.read_text().replace("/home/dev/work/status-app", str(box))
        (dest / f.name).write_text(re.sub(r'"timestamp":"\d{4}-\d\d-\d\d', f'"timestamp":"{yesterday}', text))


BEFORE = {"skillgrad sleep harvest --output tasks.jsonl --miner heuristic": _sessions}


def test_every_example_runs_as_written(sandbox: Path) -> None:
    examples = help_examples()
    examples = [e for e in examples if e not in ORDER] + ORDER
    for example in examples:
        how, extra = HOW[example]
        if example in BEFORE:
            BEFORE[example](sandbox)
        argv = _argv(example, extra, sandbox)
        if how == STARTS:
            _start_then_stop(argv, sandbox, re.compile(r"(starting|continuing) run:"), "stdout", 240)
        elif how == SERVES_OUT:
            _start_then_stop(argv, sandbox, re.compile(r"serving .* on http://127\.0\.0\.1:\d+/v1"), "stdout", 60)
        elif how == SERVES:
            _start_then_stop(argv, sandbox, re.compile(r"skillgrad (ui|serve-model): .*?http://127\.0\.0\.1:\d+/"),
                             "stderr", 60)
        else:
            p = subprocess.run(argv, cwd=sandbox, env=_env(sandbox), capture_output=True, text=True, timeout=300,
                               input="")
            if how == REFUSES:
                assert p.returncode == 2 and p.stderr.startswith("error:") and "Traceback" not in p.stderr, p.stderr
                continue
            if "export mlflow" in example and importlib.util.find_spec("mlflow") is None:
                # the lean install: the example says which extra to install, in one line
                assert p.returncode == 2 and "pip install" in p.stderr and "Traceback" not in p.stderr, p.stderr
                continue
            assert p.returncode == 0, f"{example}: rc {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}"
            assert "Traceback" not in p.stderr, p.stderr
    # what the examples did
    assert (sandbox / "data" / "searchqa" / "train").is_dir() and (sandbox / "data" / "oq" / "test").is_dir()
    assert (sandbox / "envs" / "my_bench").is_dir() and (sandbox / "tasks.jsonl").exists()
    assert (sandbox / "runs" / "demo-seed1" / "report.html").is_file()
    assert "skillgrad-sleep" not in (sandbox / "crontab.txt").read_text()  # scheduled, then unscheduled
    assert (sandbox / "SKILL.md").read_text() == "# Skill\n"  # adopted, then undone
