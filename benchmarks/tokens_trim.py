"""Tokens per training step with evidence trimming on versus off, on the same data.

    .venv/bin/python benchmarks/tokens_trim.py [--batch 8] [--answer-words 1500]

The data: `facts` with a verbose student (the loopback server of benchmarks/latency_server.py answers every
question with `--answer-words` words; no latency), so each trajectory is long, as an agent's usually is.
The teacher is given a 128k context window, so nothing forces a cut: "off" sets
env.max_trajectory_tokens to 10^9 (every message shown whole; duplicates are still collapsed when a prompt
is fitted), "on" keeps the default 1500 tokens per trajectory. Tokens are the server's usage counts
(about 4 characters a token) as the meter recorded them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latency_server import LatencyServer  # noqa: E402
from step_latency import step_config  # noqa: E402

from skillgrad.engine.session import open_run, train_sync  # noqa: E402


def run(url: str, batch: int, max_traj: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        cfg = step_config(url, 8, batch, "local", 1.0, out, f"env.max_trajectory_tokens={max_traj}",
                          "model.teacher.n_ctx=128000", "evaluation.use_gate=true")
        summary = train_sync(open_run(cfg, out))
        rec = json.loads((out / "history.json").read_text())[0]
        by_stage = summary["token_summary"]["by_stage"]
        trims = [json.loads(x).get("trimmed") for x in (out / "steps/step_0001/rollout/results.jsonl")
                 .read_text().splitlines()]
        return {"by_stage": by_stage, "action": rec["action"], "n_trimmed": sum(1 for t in trims if t)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=12)
    ap.add_argument("--answer-words", type=int, default=1500)
    args = ap.parse_args()
    os.environ.setdefault("SKILLGRAD_BENCH_KEY", "sk-bench-loopback")
    words = " ".join(f"step{i} considered the question carefully" for i in range(args.answer_words // 5))
    server = LatencyServer(0.0, answer=words).start()
    try:
        rows = [("off (no trajectory limit)", run(server.base_url, args.batch, 10**9)),
                ("on (env.max_trajectory_tokens=1500)", run(server.base_url, args.batch, 1500))]
    finally:
        server.stop()

    def tok(r: dict, stage: str, role: str) -> int:
        t = r["by_stage"].get(stage, {}).get(role, {})
        return int(t.get("prompt_tokens", 0)) + int(t.get("completion_tokens", 0))

    print(f"\nOne training step on facts, batch {args.batch}, a student answering with ~{args.answer_words} words\n")
    print("| evidence trimming | trajectories trimmed | reflect (teacher) tokens | all teacher tokens | "
          "student tokens (baseline + step) | total |")
    print("|---|---:|---:|---:|---:|---:|")
    base = None
    for name, r in rows:
        teacher = sum(tok(r, s, "teacher") for s in r["by_stage"])
        student = sum(tok(r, s, "student") for s in r["by_stage"])
        reflect = tok(r, "reflect", "teacher")
        base = base or reflect
        print(f"| {name} | {r['n_trimmed']} of {args.batch} | {reflect:,} ({reflect / base:.0%}) | {teacher:,} | "
              f"{student:,} | {teacher + student:,} |")


if __name__ == "__main__":
    main()
