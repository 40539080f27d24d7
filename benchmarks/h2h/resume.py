"""`head_to_head.py --resume`: which rows of an existing results.json may be kept instead of run again.

A row is kept only when it has a held-out result, ran with the same result-affecting options, and the code it ran
is the code that would run now: the same package version (the peers), and no change since the row's commit (nor
an uncommitted one, then or now) in the files that system runs. Those files are the harness every system shares
(student calls, environments, held-out scoring, task data) plus the system's own: all of `src/` for skillgrad, its
ablations and the few-shot baseline (its builder is skillgrad's engine), the adapter scripts for each peer. So a
change to skillgrad's engine reruns skillgrad's rows and keeps the peers'; a change to a peer's adapter reruns
that peer. `head_to_head.py` itself (the loop and the table) is not part of any system's code.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path
from typing import Any

# what every system's row depends on: the student client, the environments and their checks, the packaged prompts
# and configs, held-out scoring, the proxy, the task definitions and their data
COMMON = ("src/skillgrad/envs", "src/skillgrad/models", "src/skillgrad/skill", "src/skillgrad/prompts",
          "src/skillgrad/configs", "benchmarks/h2h/heldout.py", "benchmarks/h2h/serve.py", "benchmarks/h2h/tasks.py",
          "benchmarks/report_suite", "benchmarks/skills_suite", "benchmarks/public_tasks")
SKILLGRAD = ("src", "benchmarks/h2h/run_skillgrad.py")
DSPY = ("benchmarks/h2h/fewshot.py", "benchmarks/h2h/run_dspy.py", "benchmarks/h2h/peers_venv.py")
OWN = {"skillgrad": SKILLGRAD, "skillgrad-analysts-only": SKILLGRAD, "skillgrad-demonstrations-only": SKILLGRAD,
       "fewshot": ("src", "benchmarks/h2h/fewshot.py"), "initial": (),
       # GEPA's run config carries skillgrad's model routing (run_skillgrad.route_overrides)
       "gepa": ("benchmarks/h2h/run_gepa.py", "benchmarks/h2h/run_skillgrad.py"),
       "dspy-labeled": DSPY, "dspy-bootstrap": DSPY, "dspy-mipro": DSPY,
       "skillopt": ("benchmarks/h2h/run_skillopt.py", "benchmarks/h2h/skillopt_rules.py",
                    "benchmarks/h2h/peers_venv.py")}
# systems whose `version` is a package (or checkout) version, compared as is; skillgrad's is its commit
PACKAGED = ("gepa", "skillopt", "dspy-labeled", "dspy-bootstrap", "dspy-mipro")


def code_paths(system: str) -> tuple[str, ...]:
    """The files a system's row depends on (skillgrad's ablations, whatever their name, are skillgrad)."""
    return (*COMMON, *OWN.get(system, SKILLGRAD if system.startswith("skillgrad") else ("src", "benchmarks/h2h")))


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options that change what a run does or scores (not where it writes, nor how long SkillOpt may take)."""
    return {"budget_calls": args.budget_calls, "budget_tokens": args.budget_tokens, "teacher_cap": args.teacher_cap,
            "teacher_url": args.teacher_url, "teacher_model": args.teacher_model, "tiny": bool(args.tiny),
            "model": Path(args.gguf).name if args.gguf else "", "endpoint": args.endpoint,
            "n_threads": args.n_threads, "n_ctx": args.n_ctx,
            # only when set: rows recorded before the option existed ran its default
            **({"teacher_n_ctx": args.teacher_n_ctx} if getattr(args, "teacher_n_ctx", 0) else {})}


def _git(root: Path, *a: str) -> str:
    proc = subprocess.run(["git", *a], cwd=root, capture_output=True, text=True)
    return proc.stdout if proc.returncode == 0 else ""  # unstripped: a status line starts with its 2-letter code


def code_stamp(root: Path) -> dict[str, Any]:
    """The commit a row runs and the paths with uncommitted changes (untracked files included) at its start."""
    dirty = sorted(line[3:].strip() for line in _git(root, "status", "--porcelain", "--", "src", "benchmarks/h2h",
                                                     "benchmarks/report_suite", "benchmarks/skills_suite",
                                                     "benchmarks/public_tasks").splitlines())
    return {"commit": _git(root, "rev-parse", "HEAD").strip() or "unknown", "dirty": dirty}


def _under(path: str, paths: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in paths)


def rerun_reason(row: dict[str, Any], options: dict[str, Any], version: str, root: Path,
                 now: dict[str, Any]) -> str | None:
    """Why `row` must run again, or None when it may be kept (`version`: what the system's row would record now;
    `now`: code_stamp of the tree that would run it)."""
    if "after" not in row:
        return "no held-out result"
    old = row.get("options")
    if not isinstance(old, dict):
        return "its options were not recorded"
    diff = sorted(k for k in {*old, *options} if old.get(k) != options.get(k))
    if diff:
        return "other options: " + ", ".join(f"{k} {old.get(k)!r} -> {options.get(k)!r}" for k in diff)
    system = row["system"]
    if system in PACKAGED and row.get("version") != version:
        return f"other version: {row.get('version')} -> {version}"
    code, paths = row.get("code"), code_paths(system)
    if not isinstance(code, dict) or not code.get("commit"):
        return "its code was not recorded"
    if (then := [p for p in code.get("dirty", []) if _under(p, paths)]):
        return "it ran with uncommitted changes in " + ", ".join(then[:3])
    if (dirty := [p for p in now["dirty"] if _under(p, paths)]):
        return "uncommitted changes now in " + ", ".join(dirty[:3])
    proc = subprocess.run(["git", "diff", "--name-only", code["commit"], now["commit"], "--", *paths], cwd=root,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return f"its commit {code['commit'][:12]} is not in this repository"
    if (changed := proc.stdout.split()):
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        return f"its code changed since {code['commit'][:7]}: " + ", ".join(changed[:3]) + more
    return None


def backfill(rows: list[dict[str, Any]], invocations: Path, parser: argparse.ArgumentParser) -> None:
    """Rows written before options and code were recorded: take both from the invocation that made them (the last
    one started before the row finished; its argv parsed by today's parser, its `skillgrad` commit)."""
    if not invocations.is_file():
        return
    invs = sorted((json.loads(line) for line in invocations.read_text().splitlines() if line.strip()),
                  key=lambda i: i["started"])
    for row in rows:
        if "options" in row and "code" in row:
            continue
        made = [i for i in invs if i["started"] <= row.get("finished", "")]
        if not made:
            continue
        try:
            args, _ = parser.parse_known_args(made[-1]["argv"])
        except SystemExit:
            continue
        commit = str(made[-1].get("skillgrad", ""))
        row.setdefault("options", run_options(args))
        # before rows recorded their code, only src/ was checked for uncommitted changes
        row.setdefault("code", {"commit": commit.removesuffix("+uncommitted-src"),
                                "dirty": ["src"] if commit.endswith("+uncommitted-src") else []})
