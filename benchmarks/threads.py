"""Embedded-model throughput by thread count, on an idle machine and beside two busy loops.

    .venv/bin/python benchmarks/threads.py [--tasks 8] [--rounds 3] [--loads 0 2] [--max-seconds 90]

The workload is the demo's own: `facts` student tasks (the calls that make up most of a demo run: baseline,
rollouts, gates and tests) with the demo config's student and the packaged initial skill, cache off, every
arm the same tasks. Arms: `default` (n_threads 0: the free-core choice of models/threads.py), `1`, and
`all` (every core this process may use: the old default). Each arm runs in its own process, so each default
reads the machine as it is; the busy loops are plain `while True: pass` processes started 3 s before. An arm
that runs past --max-seconds is stopped and scored on the tasks it finished. Arms alternate for --rounds
rounds (a shared machine drifts); an arm's calls/s is its calls over its seconds summed over rounds. Prints
calls/s per arm and load, what the default chose, and its share of the best arm (target: >= 90 % at each
load; where the default chose the same thread count as an arm, the two differ only by noise).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from typing import Any

from skillgrad.models.threads import affinity_cores, read_cpus


def worker(threads: int, tasks: int, deadline: float) -> None:
    """One arm: prints a JSON line per finished task, then a summary line (the parent reads them)."""
    from skillgrad.config.loader import load_config, packaged_config_path
    from skillgrad.envs.registry import create_env
    from skillgrad.models.factory import build_models

    cfg = load_config(packaged_config_path("demo.yaml"), [f"model.student.n_threads={threads}",
                                                          f"model.teacher.n_threads={threads}",
                                                          "cache.enabled=false", f"env.n_facts={max(tasks, 10)}"])
    models = build_models(cfg, cache_path=None)
    env = create_env(cfg.env)
    splits = env.load_splits()
    items = (splits.train + splits.val + splits.test)[:tasks]
    skill = env.initial_skill()
    chosen = models.threads.threads if models.threads else threads
    print(json.dumps({"threads": chosen, "note": models.threads.describe() if models.threads else ""}), flush=True)

    async def run() -> None:
        await env.run_task(items[0], skill, models.student)  # loads and warms the model; not timed
        t0 = time.perf_counter()
        for n, item in enumerate(items, start=1):
            await env.run_task(item, skill, models.student)
            print(json.dumps({"done": n, "seconds": time.perf_counter() - t0}), flush=True)
            if time.time() > deadline:
                break
        await models.aclose()

    asyncio.run(run())


def run_arm(arm: str, tasks: int, max_seconds: float) -> dict[str, Any]:
    threads = {"default": 0, "1": 1, "all": affinity_cores()}[arm]
    cmd = [sys.executable, __file__, "--worker", str(threads), "--tasks", str(tasks),
           "--deadline", str(time.time() + max_seconds)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    done, seconds, chosen, note = 0, 0.0, threads, ""
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            rec = json.loads(line)
            if "threads" in rec:
                chosen, note = rec["threads"], rec["note"]
            else:
                done, seconds = rec["done"], rec["seconds"]
        proc.wait(timeout=max_seconds + 120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return {"arm": arm, "threads": chosen, "note": note, "calls": done, "seconds": seconds,
            "calls_s": done / seconds if seconds else 0.0}


def busy_loops(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=8, help="student tasks per arm and round (one call each)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of alternating arms")
    ap.add_argument("--loads", type=int, nargs="+", default=[0, 2], help="busy-loop processes beside the model")
    ap.add_argument("--arms", nargs="+", default=["default", "1", "all"])
    ap.add_argument("--max-seconds", type=float, default=90.0, help="stop an arm after this long")
    ap.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--deadline", type=float, default=0.0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker is not None:
        worker(args.worker, args.tasks, args.deadline)
        return
    rows = []
    for load in args.loads:
        loops = busy_loops(load)
        try:
            time.sleep(3 if load else 0)
            seen = read_cpus().load
            runs: dict[str, list[dict[str, Any]]] = {arm: [] for arm in args.arms}
            for _ in range(args.rounds):
                for arm in args.arms:
                    runs[arm].append(run_arm(arm, args.tasks, args.max_seconds))
                    print(json.dumps({"load_procs": load, **runs[arm][-1]}), file=sys.stderr, flush=True)
            for arm, rs in runs.items():
                calls, seconds = sum(r["calls"] for r in rs), sum(r["seconds"] for r in rs)
                rows.append({"load_procs": load, "machine_load": seen, "arm": arm,
                             "threads": "/".join(sorted({str(r["threads"]) for r in rs})), "note": rs[0]["note"],
                             "calls": calls, "seconds": seconds, "calls_s": calls / seconds if seconds else 0.0})
        finally:
            for p in loops:
                p.kill()
                p.wait()
    print(f"\ncores {affinity_cores()} (os.cpu_count {os.cpu_count()}); {args.tasks} demo student tasks per arm "
          f"and round, {args.rounds} rounds; 'load seen' = what the default read (other work included)\n")
    print("| busy loops | load seen | arm | threads | calls | seconds | calls/s | share of best |")
    print("|---|---|---|---|---|---|---|---|")
    for load in args.loads:
        group = [r for r in rows if r["load_procs"] == load]
        best = max(r["calls_s"] for r in group) or 1.0
        for r in group:
            print(f"| {load} | {r['machine_load']:.1f} | {r['arm']} | {r['threads']} | {r['calls']} | "
                  f"{r['seconds']:.1f} | {r['calls_s']:.3f} | {100 * r['calls_s'] / best:.0f}% |")
    for r in rows:
        if r["arm"] == "default":
            print(f"\ndefault at {r['load_procs']} busy loops: {r['note']}")


if __name__ == "__main__":
    main()
