"""Dashboard page load for a 200-step run: time to first byte + full body of each page, over HTTP to a
real `skillgrad ui` process on loopback (cold = first request, warm = median of the next 5).

    .venv/bin/python benchmarks/ui_load.py [--steps 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from ui_helpers import Server, make_run  # noqa: E402

PAGES = [("runs list", "/"), ("run page", "/run?r=synth"), ("step detail", "/step?r=synth&n=150"),
         ("lineage", "/lineage?r=synth"), ("compare", "/compare?a=synth&b=synth"),
         ("report PNG (validation)", "/plot.png?r=synth&name=validation.png")]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "runs"
        root.mkdir()
        make_run(root, "synth", steps=args.steps, tasks=20)
        run = root / "synth"
        n_events = sum(1 for _ in open(run / "events.jsonl"))
        server = Server(root)
        try:
            print(f"synthetic run: {args.steps} steps, {n_events} events, "
                  f"{(run / 'events.jsonl').stat().st_size // 1024} KiB events.jsonl")
            print(f"{'page':<26}|{'cold (s)':>10} |{'warm p50 (s)':>13} |{'bytes':>9} | target")
            print("-" * 26 + "+" + "-" * 11 + "+" + "-" * 14 + "+" + "-" * 10 + "+--------")
            with httpx.Client(base_url=server.url, timeout=30) as c:
                for label, url in PAGES:
                    t0 = time.perf_counter()
                    r = c.get(url)
                    cold = time.perf_counter() - t0
                    r.raise_for_status()
                    warm = []
                    for _ in range(5):
                        t0 = time.perf_counter()
                        c.get(url).raise_for_status()
                        warm.append(time.perf_counter() - t0)
                    target = "on demand" if url.startswith("/plot.png") else "< 1 s"
                    print(f"{label:<26}|{cold:>10.3f} |{statistics.median(warm):>13.3f} |{len(r.content):>9} | {target}")
        finally:
            server.close()


if __name__ == "__main__":
    main()
