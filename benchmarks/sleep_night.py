"""A benchmark night: a deficient SKILL.md, recurring team tasks with rule checks, the embedded model.

Usage: python benchmarks/sleep_night.py [--seeds 0 1] [--threads 2] [--out benchmarks/out/sleep]
The team's conventions (status replies start with "DONE:", ownership replies start with "OWNER:") are
nowhere in the hand-written skill; the night must learn them into the learned block from training tasks and
win on held-out tasks. Prints the held-out hard score before and after, calls, tokens, minutes, and where the
model time went. The proposal is staged, never adopted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import time
from pathlib import Path

from sleep_sessions import print_table, profile  # benchmarks/ is on sys.path when this script runs

from skillgrad.models.providers.local import bundled_gguf
from skillgrad.sleep.night import run_night
from skillgrad.sleep.settings import SleepSettings

SKILL = "---\nname: team\ndescription: Answers about our services.\n---\n# Team assistant\n\nAnswer questions about our services.\n"
SERVICES = ["the nightly backup", "the login service", "the billing export", "the search index", "the mail queue",
            "the cache warmer", "the report builder", "the image resizer", "the audit log", "the metrics exporter",
            "the payment gateway", "the user directory", "the deploy pipeline", "the feature flags", "the CDN"]


def tasks() -> list[dict]:
    out = []
    for i, s in enumerate(SERVICES):
        out.append({"task_id": f"status-{i}", "task": f"Give me the status of {s}.",
                    "judge": {"kind": "rule", "checks": [{"op": "regex", "arg": "^DONE:"}, {"op": "no_refusal"}]}})
        out.append({"task_id": f"owner-{i}", "task": f"Which team owns {s}?",
                    "judge": {"kind": "rule", "checks": [{"op": "regex", "arg": "^OWNER:"}, {"op": "no_refusal"}]}})
    return out


def run(seed: int, threads: int, out: Path) -> dict:
    project = out / f"seed{seed}"
    shutil.rmtree(project, ignore_errors=True)
    (project / ".claude" / "skills" / "team").mkdir(parents=True)
    skill = project / ".claude" / "skills" / "team" / "SKILL.md"
    skill.write_text(SKILL, encoding="utf-8")
    tasks_file = project / "tasks.jsonl"
    tasks_file.write_text("".join(json.dumps(t) + "\n" for t in tasks()), encoding="utf-8")
    gguf = str(bundled_gguf())
    role = {"provider": "local", "model": gguf, "threads": threads}
    settings = SleepSettings(project=str(project), skill=str(skill), evolve_memory=False, seed=seed,
                             student=role, teacher={**role, "max_tokens": 120}, batch_size=6, task_max_tokens=12,
                             val_fraction=0.3, test_fraction=0.3)  # type: ignore[arg-type]
    t0 = time.monotonic()
    r = asyncio.run(run_night(settings, tasks_file=tasks_file))
    minutes = (time.monotonic() - t0) / 60
    night = json.loads((Path(r["night_dir"]) / "night.json").read_text())
    spent = [v for k, v in night.get("spent", {}).items() if isinstance(v, dict) and "calls" in v]
    d = r["targets"].get("skill", {})
    # the night's held-out decision reads the test split only; its scores are named val_* in the result
    return {"seed": seed, "status": r["status"], "tasks": r["tasks"], "night_dir": r["night_dir"],
            "heldout_before": d.get("val_hard_before"), "heldout_after": d.get("val_hard_after"),
            "calls": sum(int(s.get("calls", 0)) for s in spent),
            "tokens": sum(int(s.get("prompt_tokens", 0)) + int(s.get("completion_tokens", 0)) for s in spent),
            "minutes": minutes}


def _p(v: object) -> str:
    return f"{100 * v:.0f}%" if isinstance(v, (int, float)) else "-"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/out/sleep"))
    a = ap.parse_args()
    rows = [run(s, a.threads, a.out.resolve()) for s in a.seeds]
    print("| seed | tasks train/selection/held-out | held-out hard before -> after | status | calls | tokens | minutes |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        t = r["tasks"]
        print(f"| {r['seed']} | {t['train']}/{t['val']}/{t['test']} | {_p(r['heldout_before'])} -> "
              f"{_p(r['heldout_after'])} | {r['status']} | {r['calls']} | {r['tokens']:,} | {r['minutes']:.1f} |")
    for r in rows:  # where each night's model time went (benchmarks/sleep_sessions.py --profile)
        print(f"\nseed {r['seed']}:")
        print_table(profile(Path(r["night_dir"])))


if __name__ == "__main__":
    main()
