"""Train every deficient skill of benchmarks/skills_suite/ with the embedded model in both roles, on defaults.

Usage: python benchmarks/skills_suite.py [--skills a,b] [--quick] [--out benchmarks/out/skills_suite]
                                         [-o model.student.n_threads=1 ...]

Each skill folder holds a deficient `SKILL.md`, an `oracle.md` (the same skill with its rule and one worked
example of the required form, written by hand) and `tasks.jsonl` (train / val / held-out test tasks with rule
checks; the held-out tasks are worded differently and on other topics than the training tasks). For each
skill this trains `SKILL.md` (`skillgrad train`, defaults, nothing per skill), scores `oracle.md` on the same
held-out tasks (`skillgrad eval`), and prints one table row: held-out hard before -> after with 95% bootstrap
intervals, the oracle's held-out hard beside it, LLM calls, tokens, steps run of those planned (a run stops
once validation is at 1.0), wall minutes, the machine's 5-minute load average at start and end, and how many
held-out replies of the best skill are the most common one (a gain made of one repeated reply shows there).
`--quick`: one epoch on at most 10 tasks per split (a smoke run; its figures are not the benchmark).
Targets (issue 17, set when the suite had its first 8 skills; it is the development suite and now holds 11):
most skills reach >= 0.8 held-out hard from <= 0.2, each in under 10 minutes on 2 cores; no skill loses
held-out score.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

SUITE = Path(__file__).resolve().parent / "skills_suite"
QUICK = ["train.num_epochs=1", "env.limit=10"]


def skills(names: str, suite: Path = SUITE) -> list[Path]:
    every = sorted(p for p in suite.iterdir() if (p / "tasks.jsonl").is_file())
    if not names:
        return every
    by_name = {p.name: p for p in every}
    unknown = [n for n in names.split(",") if n not in by_name]
    if unknown:
        sys.exit(f"--skills: unknown skill(s) {', '.join(unknown)}; choose from {', '.join(by_name)}")
    return [by_name[n] for n in names.split(",")]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skillgrad.cli", *args], capture_output=True, text=True)


def _overrides(skill: Path, extra: list[str]) -> list[str]:
    base = ["env.name=tasks", f"env.tasks_file={skill / 'tasks.jsonl'}", f"env.skill_init={skill / 'SKILL.md'}"]
    return [x for o in [*base, *extra] for x in ("-o", o)]


def _interval(d: dict | None) -> str:
    if not d or d.get("mean") is None:
        return "—"
    return f"{d['mean']:.2f} [{d['ci_low']:.2f}, {d['ci_high']:.2f}]"


def oracle(skill: Path, cfg: Path, out: Path, extra: list[str]) -> dict:
    from skillgrad.engine.compare import item_scores
    from skillgrad.engine.gate.intervals import mean_interval

    target = out / f"{skill.name}-oracle"
    proc = _cli("eval", "-c", str(cfg), "--skill", str(skill / "oracle.md"), "--split", "test", "--out", str(target),
                "--quiet", *_overrides(skill, extra))
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    return mean_interval(list(item_scores(target, split="test").values()))


def train(skill: Path, cfg: Path, out: Path, extra: list[str]) -> dict:
    run_dir = out / skill.name
    t0, load0 = time.monotonic(), os.getloadavg()[1]
    proc = _cli("train", "-c", str(cfg), "--out", str(run_dir), "--fresh", "--quiet", *_overrides(skill, extra))
    wall, load = time.monotonic() - t0, f"{load0:.0f}-{os.getloadavg()[1]:.0f}"  # 5-min load average, start-end
    if proc.returncode != 0 and not (run_dir / "summary.json").exists():
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1], "wall_s": wall, "load": load}
    s = json.loads((run_dir / "summary.json").read_text())
    ti = s.get("test_intervals") or {}
    tok = s.get("token_summary", {}).get("total", {})
    return {"wall_s": wall, "before": ti.get("initial"), "after": ti.get("best") or ti.get("initial"),
            "delta": s.get("test_delta_hard"), "paired": ti.get("best_vs_initial"),
            "calls": tok.get("calls"), "tokens": tok.get("total_tokens"),
            "refused_checker_text": s.get("refused_checker_text"), "degenerate_blocked": s.get("degenerate_blocked"),
            "load": load, "steps": f"{s.get('total_steps')}/{s.get('planned_steps')}",
            "sample_replies": (s.get("sample_replies") or [])[:2], **held_out_replies(run_dir)}


def held_out_replies(run_dir: Path) -> dict:
    """How the best skill's held-out replies look, so that a gamed gain shows in the table: the share of the most
    common reply and the Goodhart guard's verdict on them (engine/goodhart.py)."""
    from collections import Counter

    from skillgrad.engine.goodhart import degenerate_replies
    from skillgrad.runs.store import ResultsLog

    trajs = list(ResultsLog(run_dir / "test_eval").load().values()) if (run_dir / "test_eval").is_dir() else []
    if not trajs:
        return {"same_reply": None, "degenerate": None}
    k = Counter(" ".join(t.answer.split()) for t in trajs).most_common(1)[0][1]
    return {"same_reply": f"{k}/{len(trajs)}", "degenerate": degenerate_replies(trajs) or "no"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skills", default="", help="comma-separated skill folder names (default: all)")
    ap.add_argument("--quick", action="store_true", help="one epoch, at most 10 tasks per split (smoke run)")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/out/skills_suite"))
    ap.add_argument("-o", dest="overrides", action="append", default=[],
                    help="config override passed to every run, e.g. -o model.student.n_threads=1")
    args = ap.parse_args()
    chosen = skills(args.skills)
    args.out.mkdir(parents=True, exist_ok=True)
    cfg = args.out / "suite.yaml"
    cfg.write_text("# skills suite: defaults; every skill's files come as -o overrides\nenv:\n  name: tasks\n",
                   encoding="utf-8")
    extra = [*(QUICK if args.quick else []), *args.overrides]
    rows = []
    for skill in chosen:
        r = train(skill, cfg, args.out, extra)
        r["oracle"] = oracle(skill, cfg, args.out, extra)
        r["skill"] = skill.name
        rows.append(r)
        print(f"{skill.name}: done in {r['wall_s'] / 60:.1f} min", file=sys.stderr, flush=True)
    print("| skill | held-out before [95%] | held-out after [95%] | paired delta [95%] | oracle [95%] | LLM calls "
          "| tokens | steps run/planned | minutes | load | most common held-out reply |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['skill']} | error: {r['error']} | | | | | | | {r['wall_s'] / 60:.1f} | {r['load']} | |")
            continue
        p = r["paired"] or {}
        delta = (f"{100 * p['mean_diff']:+.0f} [{100 * p['ci_low']:+.0f}, {100 * p['ci_high']:+.0f}]"
                 if p.get("mean_diff") is not None else "—")
        orc = r["oracle"]
        print(f"| {r['skill']} | {_interval(r['before'])} | {_interval(r['after'])} | {delta} | "
              f"{orc['error'] if 'error' in orc else _interval(orc)} | {r['calls']} | {r['tokens']} | {r['steps']} | "
              f"{r['wall_s'] / 60:.1f} | {r['load']} | {r['same_reply']} |")
    ok = [r for r in rows if "error" not in r and r["before"] and r["after"]]
    reached = sum(r["before"]["mean"] <= 0.2 and r["after"]["mean"] >= 0.8 for r in ok)
    worse = [r["skill"] for r in ok if r["after"]["mean"] < r["before"]["mean"]]
    print(f"\n{reached} of {len(rows)} skills went from <= 0.2 to >= 0.8 held-out; "
          f"lost held-out score: {', '.join(worse) or 'none'}")
    (args.out / "suite_results.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
