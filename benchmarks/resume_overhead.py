"""Resume overhead: time from restarting a killed run to its first new provider call, per stage killed in.

    .venv/bin/python benchmarks/resume_overhead.py [--latency 0.3]

A child process trains one step on `facts` against the loopback server (benchmarks/latency_server.py,
which records when each request arrives). The run is SIGKILLed shortly after a given stage starts
(events.jsonl), then the same command is started again; the table gives the time from that restart
to the first request reaching the server, and how many calls were replayed from the cache instead.
A fresh run's time to its first call (same command, empty run directory) is the floor: interpreter
start-up, imports and config loading, which every restart pays.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latency_server import LatencyServer  # noqa: E402

STAGES = ["baseline", "rollout", "reflect", "gate"]


def child(url: str, out: str) -> None:
    from step_latency import step_config

    from skillgrad.engine.session import open_run, train_sync

    cfg = step_config(url, 2, 10, "local", 1.0, Path(out))
    train_sync(open_run(cfg, Path(out)))


def start(url: str, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, __file__, "--child", url, str(out)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def events(out: Path) -> list[dict]:
    path = out / "events.jsonl"
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return rows


def first_call_after(server: LatencyServer, t0: float, timeout: float = 60.0) -> float:
    end = time.time() + timeout
    while time.time() < end:
        later = [a for a in list(server.arrivals) if a >= t0]
        if later:
            return min(later) - t0
        time.sleep(0.005)
    raise TimeoutError("no provider call after restart")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.3)
    ap.add_argument("--child", nargs=2)
    args = ap.parse_args()
    os.environ.setdefault("SKILLGRAD_BENCH_KEY", "sk-bench-loopback")
    if args.child:
        child(*args.child)
        return
    server = LatencyServer(args.latency).start()
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "fresh"
            t0 = time.time()
            p = start(server.base_url, out)
            rows.append(("(fresh run, no kill)", first_call_after(server, t0), 0))
            p.wait()
            for stage in STAGES:
                out = Path(tmp) / stage
                p = start(server.base_url, out)
                while not any(e["event"] == "stage_start" and e.get("stage") == stage for e in events(out)):
                    time.sleep(0.01)
                time.sleep(args.latency * 1.5)  # mid-stage: some of its calls done, some in flight
                p.send_signal(signal.SIGKILL)
                p.wait()
                n_before = len(events(out))
                t0 = time.time()
                p = start(server.base_url, out)
                wait = first_call_after(server, t0)
                p.wait()
                replayed = sum(1 for e in events(out)[n_before:] if e["event"] == "llm_call" and e.get("cached"))
                rows.append((stage, wait, replayed))
    finally:
        server.stop()
    print(f"\nResume overhead ({args.latency * 1000:.0f} ms per call; one step, batch 10, concurrency 2)\n")
    print("| killed in stage | restart -> first new provider call | calls replayed from the cache |")
    print("|---|---:|---:|")
    for stage, wait, replayed in rows:
        print(f"| {stage} | {wait:.2f} s | {replayed} |")


if __name__ == "__main__":
    main()
