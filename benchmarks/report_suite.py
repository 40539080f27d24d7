"""The report suite (benchmarks/report_suite/): each skill over seeds, beside its zero-call baselines.

Usage: python benchmarks/report_suite.py [--skills a,b] [--seeds 3] [--first-seed 0] [--ablations] [--quick]
                                         [--out benchmarks/out/report_suite] [-o model.student.n_threads=1 ...]

For each skill and seed: `skillgrad train` of the deficient `SKILL.md` with skillgrad's defaults (only the seed
changes), then on the same 10 held-out tasks:
- `initial`: the deficient skill (the run's own test of its initial skill);
- `fewshot`: the zero-call few-shot baseline (gold replies of training tasks as worked examples; `fewshot_skill`);
- `trained`: the run's best skill;
- with `--ablations`, `analysts only` / `demonstrations only` runs where the config has an option for them (an
  arm the config cannot express is reported as such, never emulated).
The table gives each arm's mean over seeds with a 95% bootstrap interval over (seed, task) pairs, and the
trained skill's paired difference to the best baseline (the higher-scoring of initial and fewshot). The report
suite is for reporting only: nothing in src/ may be tuned on what this prints (benchmarks/report_suite/README.md).
`--quick`: one epoch on at most 10 tasks per split (a smoke run; its figures are not the benchmark).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from skills_suite import _cli, _overrides, skills  # noqa: E402

SUITE = Path(__file__).resolve().parent / "report_suite"
QUICK = ["train.num_epochs=1", "env.limit=10"]
K_FEWSHOT = 16  # DSPy LabeledFewShot's default k
# Ablation arms as config overrides; one whose key the config lacks is reported "not available".
ABLATIONS: dict[str, list[str]] = {"analysts only": ["optimizer.demonstrations=0"],
                                   "demonstrations only": ["optimizer.analysts=false"]}


def _last_line(proc: subprocess.CompletedProcess[str]) -> str:
    return (proc.stderr.strip().splitlines() or proc.stdout.strip().splitlines() or ["failed"])[-1][:300]


def arm_available(overrides: list[str]) -> str:
    """'' when the config accepts the overrides, else the loader's one-line reason."""
    from skillgrad.config.loader import load_config

    try:
        load_config(None, overrides)
    except Exception as e:  # noqa: BLE001 - any refusal means the arm cannot run as configured
        return str(e).splitlines()[0]
    return ""


# ---------------------------------------------------------------- the few-shot baseline
def labeled_fewshot(skill: Path, seed: int, k: int = K_FEWSHOT) -> str:
    """LabeledFewShot with the tasks' gold replies: k training tasks (shuffled by the seed) and their `reference`
    as worked examples after the deficient skill. Zero model calls. Used only when the run did not write its own
    zero-call baseline (engine/baselines.py, `baselines/fewshot_skill.md`)."""
    from skillgrad.envs.tasks import read_tasks
    from skillgrad.skill.examples import add_example

    train = [t for t in read_tasks(skill / "tasks.jsonl") if t.split == "train" and t.judge.reference]
    random.Random(seed).shuffle(train)
    text = (skill / "SKILL.md").read_text(encoding="utf-8")
    for t in train[:k]:
        text, _ = add_example(text, t.task, t.judge.reference)
    return text


def fewshot_skill(skill: Path, run_dir: Path, seed: int) -> tuple[str, str]:
    """(the few-shot baseline's skill text, where it came from). The run's own baseline when it wrote one."""
    made = run_dir / "baselines" / "fewshot_skill.md"
    if made.is_file():
        return made.read_text(encoding="utf-8"), "the run's zero-call baseline (engine/baselines.py)"
    return labeled_fewshot(skill, seed), f"LabeledFewShot, k={K_FEWSHOT} gold replies (benchmarks/report_suite.py)"


# ---------------------------------------------------------------- runs
def train(skill: Path, cfg: Path, run_dir: Path, extra: list[str]) -> dict[str, Any]:
    t0, load0 = time.monotonic(), os.getloadavg()[1]
    proc = _cli("train", "-c", str(cfg), "--out", str(run_dir), "--fresh", "--quiet", *_overrides(skill, extra))
    wall, load = time.monotonic() - t0, f"{load0:.0f}-{os.getloadavg()[1]:.0f}"
    if not (run_dir / "summary.json").exists():
        return {"error": _last_line(proc), "wall_s": wall, "load": load}
    s = json.loads((run_dir / "summary.json").read_text())
    tok = s.get("token_summary", {}).get("total", {})
    return {"wall_s": wall, "load": load, "calls": tok.get("calls"), "tokens": tok.get("total_tokens"),
            "steps": f"{s.get('total_steps')}/{s.get('planned_steps')}"}


def eval_scores(skill_text: str, skill: Path, cfg: Path, out: Path, extra: list[str]) -> dict[str, float] | str:
    """Per-task held-out hard scores of a skill text (`skillgrad eval`), or the error line."""
    from skillgrad.engine.compare import item_scores

    out.mkdir(parents=True, exist_ok=True)
    (out / "skill.md").write_text(skill_text, encoding="utf-8")
    proc = _cli("eval", "-c", str(cfg), "--skill", str(out / "skill.md"), "--split", "test", "--out",
                str(out / "eval"), "--quiet", *_overrides(skill, extra))
    if proc.returncode != 0:
        return _last_line(proc)
    return item_scores(out / "eval", split="test")


def run_scores(run_dir: Path, which: str) -> dict[str, float] | str:
    from skillgrad.engine.compare import item_scores

    try:
        return item_scores(run_dir, skill=which)
    except Exception as e:  # noqa: BLE001 - a run without test results: its row says why
        return str(e).splitlines()[0]


def run_fewshot_scores(run_dir: Path) -> dict[str, float] | None:
    """The run's own held-out scores of its zero-call few-shot skill (scored at run end on the same items, under
    the best skill's results when the two are the same skill); None when the run wrote none."""
    from skillgrad.runs.store import ResultsLog
    from skillgrad.skill import skill_hash

    made, own = run_dir / "baselines" / "fewshot_skill.md", run_dir / "test_eval_fewshot"
    if (own / "results.jsonl").is_file():
        return {k: t.hard for k, t in ResultsLog(own).load().items() if not t.env_error}
    best = run_dir / "best_skill.md"
    if made.is_file() and best.is_file() and \
            skill_hash(made.read_text(encoding="utf-8")) == skill_hash(best.read_text(encoding="utf-8")):
        scores = run_scores(run_dir, "best")
        return scores if isinstance(scores, dict) else None
    return None


def one_seed(skill: Path, seed: int, cfg: Path, out: Path, extra: list[str], ablations: bool,
             baseline: Callable[[Path, Path, int], tuple[str, str]] = fewshot_skill) -> dict[str, Any]:
    seed_dir = out / skill.name / f"seed{seed}"
    run_dir = seed_dir / "trained"
    row: dict[str, Any] = {"skill": skill.name, "seed": seed,
                           "trained_run": train(skill, cfg, run_dir, [*extra, f"train.seed={seed}"])}
    row["scores"] = {"initial": run_scores(run_dir, "initial"), "trained": run_scores(run_dir, "best")}
    own = run_fewshot_scores(run_dir)
    if own is not None:  # scored by the run itself: no second evaluation of the same skill on the same items
        row["fewshot_source"], row["scores"]["fewshot"] = "the run's zero-call baseline, scored by the run", own
    else:
        text, source = baseline(skill, run_dir, seed)
        row["fewshot_source"] = source
        row["scores"]["fewshot"] = eval_scores(text, skill, cfg, seed_dir / "fewshot", extra)
    if ablations:
        for arm, over in ABLATIONS.items():
            why = arm_available(over)
            if why:
                row["scores"][arm] = f"not available: {why}"
                continue
            adir = seed_dir / arm.replace(" ", "-")
            row[f"{arm} run"] = train(skill, cfg, adir, [*extra, *over, f"train.seed={seed}"])
            row["scores"][arm] = run_scores(adir, "best")
    return row


# ---------------------------------------------------------------- the table
def pooled(rows: list[dict[str, Any]], arm: str) -> dict[str, float] | str:
    """An arm's scores over seeds keyed `seed:task` (pairs across arms); an error string if any seed failed."""
    out: dict[str, float] = {}
    for r in rows:
        s = r["scores"].get(arm)
        if not isinstance(s, dict):
            return str(s)
        out.update({f"{r['seed']}:{k}": v for k, v in s.items()})
    return out


def _iv(d: dict[str, Any], scale: float = 1.0, sign: bool = False) -> str:
    f = "{:+.2f}" if sign else "{:.2f}"
    return f"{f.format(d['mean' if 'mean' in d else 'mean_diff'] * scale)} " \
           f"[{f.format(d['ci_low'] * scale)}, {f.format(d['ci_high'] * scale)}]"


def table(rows: list[dict[str, Any]], arms: list[str]) -> list[str]:
    from skillgrad.engine.gate.intervals import mean_interval, paired_by_id

    lines = ["| skill | seeds | " + " | ".join(f"{a} [95%]" for a in arms) + " | best baseline | trained - best "
             "baseline, paired [95%] | LLM calls / tokens per trained run |",
             "|---" * (len(arms) + 5) + "|"]
    for name in dict.fromkeys(r["skill"] for r in rows):
        mine = [r for r in rows if r["skill"] == name]
        scores = {a: pooled(mine, a) for a in arms}
        cells = [_iv(mean_interval(list(s.values()))) if isinstance(s, dict) and s else f"— ({s})"
                 for s in scores.values()]
        bases = {a: s for a, s in scores.items() if a in ("initial", "fewshot") and isinstance(s, dict) and s}
        best = max(bases, key=lambda a: sum(bases[a].values()) / len(bases[a])) if bases else None
        trained = scores.get("trained")
        delta = (_iv(paired_by_id(bases[best], trained), sign=True)
                 if best and isinstance(trained, dict) and trained else "—")
        runs = [r["trained_run"] for r in mine]
        cost = ", ".join(f"{x.get('calls')} / {x.get('tokens')}" if "error" not in x else f"error: {x['error']}"
                         for x in runs)
        lines.append(f"| {name} | {len(mine)} | " + " | ".join(cells) + f" | {best or '—'} | {delta} | {cost} |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skills", default="", help="comma-separated skill folder names (default: all)")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--first-seed", type=int, default=0,
                    help="run seeds first-seed .. first-seed+seeds-1 (rows of other seeds in --out stay)")
    ap.add_argument("--ablations", action="store_true", help="also the analysts-only and demonstrations-only arms")
    ap.add_argument("--quick", action="store_true", help="one epoch, at most 10 tasks per split (smoke run)")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/out/report_suite"))
    ap.add_argument("-o", dest="overrides", action="append", default=[],
                    help="config override passed to every run, e.g. -o model.student.n_threads=1")
    args = ap.parse_args()
    if args.seeds < 1 or args.first_seed < 0:
        print("--seeds must be >= 1 and --first-seed >= 0", file=sys.stderr)
        return 2
    chosen = skills(args.skills, SUITE)
    args.out.mkdir(parents=True, exist_ok=True)
    cfg = args.out / "suite.yaml"
    cfg.write_text("# report suite: defaults; every skill's files come as -o overrides\nenv:\n  name: tasks\n",
                   encoding="utf-8")
    extra = [*(QUICK if args.quick else []), *args.overrides]
    results = args.out / "results.json"
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    redo = {(p.name, s) for p in chosen for s in seeds}  # rows of other skills and seeds from earlier invocations stay
    rows = [r for r in (json.loads(results.read_text()) if results.is_file() else [])
            if (r["skill"], r["seed"]) not in redo]
    for skill in chosen:
        for seed in seeds:
            row = one_seed(skill, seed, cfg, args.out, extra, args.ablations)
            rows.append(row)
            results.write_text(json.dumps(rows, indent=1), encoding="utf-8")
            print(f"{skill.name} seed {seed}: done in {row['trained_run']['wall_s'] / 60:.1f} min", file=sys.stderr,
                  flush=True)
    arms = ["initial", "fewshot", "trained", *(ABLATIONS if args.ablations else [])]
    text = "\n".join(table(rows, arms))
    (args.out / "table.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
