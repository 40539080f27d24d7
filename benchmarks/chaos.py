"""Chaos benchmark: SIGKILL a training run at many points, resume each time, and count how many held.

    .venv/bin/python benchmarks/chaos.py [--points 30] [--chains 3] [--jobs 1] [--seed 0]

The run is tests/chaos_driver.py's tiny configuration (10 facts, 2 epochs x 2 steps, slow update and
meta skill on, the embedded model). An uninterrupted run with the same seed is the reference. Kill points
are drawn from its events: after the n-th provider call of a stage (or at its start), every stage in turn
(so each is hit), dealt into `--chains` chains. Each chain is one run directory killed at its points in run
order, resumed after each, then finished; a chain holds when it makes zero repeated provider calls,
has every file the reference has, and ends with the same gate decisions and best_skill.md. The table
gives, per stage, how many kill points were hit and how many of their chains held.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from chaos_driver import KillPoint, Verdict, compare, finish, run_until  # noqa: E402
from train_helpers import events  # noqa: E402


def candidate_points(clean: Path) -> list[KillPoint]:
    """Every (stage, step/epoch, k) with k < the provider calls that stage made in the reference run."""
    points, current, calls = [], None, 0
    for ev in events(clean):
        if ev["event"] == "stage_start":
            current, calls = ev, 0
        elif ev["event"] == "llm_call" and not ev.get("cached") and current is not None:
            calls += 1
        elif ev["event"] == "stage_end" and current is not None and ev.get("stage") == current["stage"]:
            epoch_end = current["stage"] in ("slow_update", "meta_skill")
            step = None if epoch_end or current["stage"].startswith(("test_", "final_")) else current["step"]
            epoch = current["epoch"] if epoch_end else None
            points += [KillPoint(current["stage"], step=step, epoch=epoch, after_calls=k)
                       for k in range(0, max(calls, 1))]
            current = None
    return points


def stratified(pool: list[KillPoint], n: int, rng: random.Random) -> list[KillPoint]:
    """`n` points, every stage first (one each, round robin), then the rest at random."""
    by_stage: dict[str, list[KillPoint]] = defaultdict(list)
    for p in pool:
        by_stage[p.stage].append(p)
    for points in by_stage.values():
        rng.shuffle(points)
    chosen: list[KillPoint] = []
    while len(chosen) < min(n, len(pool)):
        for points in by_stage.values():
            if points and len(chosen) < n:
                chosen.append(points.pop())
    return chosen


def order_key(clean: Path) -> dict[tuple[str, int | None, int | None], int]:
    """Position of each stage in the reference run, to kill a chain's points in run order."""
    pos: dict[tuple[str, int | None, int | None], int] = {}
    for i, ev in enumerate(e for e in events(clean) if e["event"] == "stage_start"):
        for key in ((ev["stage"], ev["step"], None), (ev["stage"], None, ev["epoch"]), (ev["stage"], None, None)):
            pos.setdefault(key, i)
    return pos


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--points", type=int, default=30, help="kill points in all")
    ap.add_argument("--chains", type=int, default=3, help="run directories the points are spread over")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1, help="chains run at once (one llama.cpp thread each)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="skillgrad-chaos-"))
    t0 = time.monotonic()
    clean = work / "clean"
    finish(clean)
    clean_s = time.monotonic() - t0
    pool = candidate_points(clean)
    chosen = stratified(pool, args.points, random.Random(args.seed))
    pos = order_key(clean)
    chains: list[list[KillPoint]] = [chosen[i:: args.chains] for i in range(args.chains)]
    hit: dict[str, int] = defaultdict(int)
    held: dict[str, int] = defaultdict(int)
    failures: list[str] = []

    def walk(n: int) -> tuple[list[KillPoint], Verdict]:
        chain = sorted(chains[n], key=lambda p: (pos.get((p.stage, p.step, p.epoch), 10**6), p.after_calls))
        run = work / f"chain{n}"
        reached = [p for p in chain if run_until(run, p)]
        finish(run)
        return reached, compare(run, clean)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool_:  # each chain is its own run directory
        results = list(pool_.map(walk, range(len(chains))))
    for n, (reached, verdict) in enumerate(results):
        for p in reached:
            hit[p.stage] += 1
            held[p.stage] += verdict.held
        if not verdict.held:
            failures.append(f"chain {n}: {verdict}")
    seconds = time.monotonic() - t0
    print(f"kill points: {sum(hit.values())} reached of {len(chosen)} drawn from {len(pool)}, "
          f"{args.chains} chains; reference run {clean_s:.0f} s, all {seconds:.0f} s; run dirs in {work}")
    print()
    print("| stage | kill points | held |")
    print("|---|---:|---:|")
    for stage in sorted(hit, key=lambda s: pos.get((s, None, None), 10**6)):
        print(f"| {stage} | {hit[stage]} | {held[stage]} |")
    print(f"| **all** | **{sum(hit.values())}** | **{sum(held.values())}** |")
    for line in failures:
        print(line)
    print(json.dumps({"reached": sum(hit.values()), "held": sum(held.values())}))


if __name__ == "__main__":
    main()
