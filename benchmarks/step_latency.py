"""One training step's wall time against its critical path, local pool versus Ray.

    .venv/bin/python benchmarks/step_latency.py [--latency 0.3] [--batch 16] [--ray-workers 1 2 4]

Student and teacher are an OpenAI-compatible server on loopback that answers every call after a fixed
latency (benchmarks/latency_server.py). The step: `facts`, a batch of B rollouts (one student call each),
B/4 analyst calls (failure minibatches of 4; every answer fails), concat merge and no ranking call (no
teacher call), patch update (none), gate on B validation items. No demonstrate stage
(optimizer.demonstrations=0): how many calls it makes, and in how many rounds, depends on what the teacher
writes, so the critical path would not be exact. With every concurrency knob at c (env.workers,
gradient.analyst_workers, both roles' concurrency) the critical path is
rounds = ceil(B/c) + ceil((B/4)/c) + ceil(B/c), times the latency. The baseline evaluation before the
step is not counted (it also warms Ray's workers). Ray runs each item as one task holding exec.num_cpus=1,
so on N local workers at most N items run at once: its critical path runs rollout and gate items
min(c, N) at a time.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latency_server import LatencyServer  # noqa: E402

from skillgrad.config.loader import load_config, packaged_config_path  # noqa: E402
from skillgrad.engine.session import open_run, train_sync  # noqa: E402


def step_config(url: str, c: int, batch: int, backend: str, num_cpus: float, out: Path, *extra: str) -> Any:
    role = ["base_url={url}", "model=bench", "api_key_env=SKILLGRAD_BENCH_KEY", f"concurrency={c}",
            "max_retries=2", "max_tokens=256"]
    return load_config(packaged_config_path("demo.yaml"), [
        "model.backend=openai", *[f"model.{r}.{kv.format(url=url)}" for r in ("teacher", "student") for kv in role],
        f"env.n_facts={batch}", f"env.workers={c}", "train.num_epochs=1", f"train.batch_size={batch}",
        f"train.train_size={batch}", "gradient.minibatch_size=4", f"gradient.analyst_workers={c}",
        "gradient.failure_only=true", "gradient.merge_mode=concat", f"evaluation.sel_env_num={batch}",
        "evaluation.eval_test=false", "evaluation.edit_credit=false", f"exec.backend={backend}",
        f"exec.num_cpus={num_cpus}", "optimizer.demonstrations=0", f"env.out_root={out}", *extra])


def rounds(batch: int, c: int, items_at_once: int | None = None) -> int:
    """Sequential call rounds: rollout and gate items run `items_at_once` (default c) at a time; the
    analyst calls run in the driver, c at a time."""
    k = items_at_once or c
    return math.ceil(batch / k) + math.ceil(math.ceil(batch / 4) / c) + math.ceil(batch / k)


def one_step(server: LatencyServer, c: int, batch: int, backend: str, num_cpus: float = 1.0) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = step_config(server.base_url, c, batch, backend, num_cpus, Path(tmp) / "run")
        before = len(server.arrivals)
        train_sync(open_run(cfg, Path(tmp) / "run"))
        import json

        hist = json.loads((Path(tmp) / "run" / "history.json").read_text())
        rec = hist[0]
        return {"wall": rec["wall_time_s"], "action": rec["action"], "calls": len(server.arrivals) - before,
                "timing": rec["timing"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.3)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--ray-workers", type=int, nargs="*", default=[1, 2, 4])
    args = ap.parse_args()
    os.environ.setdefault("SKILLGRAD_BENCH_KEY", "sk-bench-loopback")
    server = LatencyServer(args.latency).start()
    rows = []
    try:
        for c in args.concurrency:
            r = one_step(server, c, args.batch, "local")
            rows.append(("local pool", c, rounds(args.batch, c), r))
        for n in args.ray_workers:
            import ray

            ray.init(num_cpus=n, include_dashboard=False, log_to_driver=False)
            try:
                for c in args.concurrency:
                    r = one_step(server, c, args.batch, "ray")
                    rows.append((f"ray, {n} worker{'s' * (n > 1)}", c, rounds(args.batch, c, min(c, n)), r))
            finally:
                ray.shutdown()
    finally:
        server.stop()
    lat = args.latency
    print(f"\nOne training step (batch {args.batch}, {math.ceil(args.batch / 4)} analyst calls, gate on "
          f"{args.batch} items), {lat * 1000:.0f} ms per call\n")
    print("| executor | concurrency | critical path (rounds x latency) | step wall time | wall / critical | "
          "calls | rollout / reflect / gate s |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, c, rds, r in rows:
        crit = rds * lat
        t = r["timing"]
        print(f"| {name} | {c} | {rds} x {lat:g} = {crit:.2f} s | {r['wall']:.2f} s | {r['wall'] / crit:.2f}x | "
              f"{r['calls']} | {t.get('rollout_s', 0):.2f} / {t.get('reflect_s', 0):.2f} / "
              f"{t.get('evaluate_s', 0):.2f} |")


if __name__ == "__main__":
    main()
