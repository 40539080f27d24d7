"""Where `skillgrad demo` spends its time: llama.cpp's own counters for every embedded-model call, per stage.

    .venv/bin/python benchmarks/demo_profile.py [--out /tmp/demo-profile] [-o model.student.n_threads=1 ...]

Runs the demo in this process with the local provider's calls wrapped: before and after each call it reads
llama.cpp's performance counters (prompt tokens evaluated and their milliseconds, tokens generated and
theirs), so the table separates the prompt tokens a call sends from those the model evaluated (the rest came
from its KV cache, models/providers/kv_states.py) and prompt evaluation from generation. Prints one row per
stage, role and reply schema; `calls.jsonl` in the run folder keeps every call.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

FIELDS = ("prompt", "compl", "wall", "n_p", "t_p", "n_g", "t_g")


def instrument(log_path: Path) -> None:
    """Record every local call's counters to `log_path` (one JSON line each)."""
    import llama_cpp

    from skillgrad.models.providers import local

    log = log_path.open("w")
    run = local.LocalProvider._run

    def counters(entry: Any) -> tuple[int, float, int, float]:
        p = llama_cpp.llama_perf_context(entry.llama._ctx.ctx)
        return p.n_p_eval, p.t_p_eval_ms, p.n_eval, p.t_eval_ms

    def measured(self: Any, req: Any, cancel: Any = None) -> Any:
        before, t0 = counters(self._entry), time.perf_counter()
        out = run(self, req, cancel)
        after = counters(self._entry)
        spent = [a - b for a, b in zip(after, before, strict=True)]
        log.write(json.dumps({
            "stage": req.stage, "role": self.role, "schema": req.schema.__name__ if req.schema else "",
            "prompt": out.usage.prompt_tokens, "compl": out.usage.completion_tokens,
            "wall": time.perf_counter() - t0, **dict(zip(("n_p", "t_p", "n_g", "t_g"), spent, strict=True))}) + "\n")
        log.flush()
        return out

    local.LocalProvider._run = measured


def table(log_path: Path) -> str:
    agg: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    for line in log_path.read_text().splitlines():
        d = json.loads(line)
        c = agg[(d["stage"], d["role"], d["schema"])]
        c["calls"] += 1
        for f in FIELDS:
            c[f] += d[f]
    rows = ["| stage | role | reply schema | calls | prompt tokens sent | evaluated | prompt eval s | tokens generated "
            "| generation s | call wall s |", "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    total: Counter[str] = Counter()
    for (stage, role, schema), c in sorted(agg.items(), key=lambda kv: -kv[1]["wall"]):
        rows.append(f"| {stage} | {role} | {schema} | {c['calls']} | {c['prompt']:,} | {c['n_p']:,} | "
                    f"{c['t_p'] / 1000:.1f} | {c['n_g']:,} | {c['t_g'] / 1000:.1f} | {c['wall']:.1f} |")
        total.update(c)
    rows.append(f"| **all** | | | {total['calls']} | {total['prompt']:,} | {total['n_p']:,} | {total['t_p'] / 1000:.1f} "
                f"| {total['n_g']:,} | {total['t_g'] / 1000:.1f} | {total['wall']:.1f} |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("/tmp/demo-profile"))
    ap.add_argument("-o", dest="overrides", action="append", default=[], help="config override for the demo")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    log_path = args.out / "calls.jsonl"
    instrument(log_path)
    from skillgrad.cli import main as cli

    load0, t0 = os.getloadavg()[0], time.monotonic()
    sys.argv = ["skillgrad", "demo", "--out", str(args.out / "run"), "--fresh", "--quiet",
                *[x for o in args.overrides for x in ("-o", o)]]
    try:
        cli()
    except SystemExit as e:
        if e.code:
            raise
    print(f"wall {(time.monotonic() - t0) / 60:.1f} min, load average {load0:.1f} at start, "
          f"{os.getloadavg()[0]:.1f} at end\n")
    print(table(log_path))


if __name__ == "__main__":
    main()
