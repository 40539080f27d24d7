"""The few-shot systems, skillgrad's venv side: verified gold replies, the zero-call few-shot baseline, DSPy's runs
(h2h/run_dspy.py in the peers venv) and the scoring endpoint DSPy's metric asks.

A gold reply counts only where the task's environment gives it full marks (`verify_example`, the check every
worked example passes in skillgrad): a gold that is a requirement in words is no reply and is not shown.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import threading
import time
from collections.abc import Coroutine
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

from skillgrad.envs.trajectory import question_text
from skillgrad.skill.examples import add_example

K_LABELED = 16  # DSPy LabeledFewShot's default k
MAX_BOOTSTRAPPED = 4  # DSPy BootstrapFewShot's default max_bootstrapped_demos
MIPRO_CANDIDATES = 2  # instruction and demo-set candidates (MIPROv2's light preset: 6)
PER_PREDICT = 2  # calls one DSPy predict may cost: ChatAdapter, then its JSONAdapter retry when the reply won't parse
T = TypeVar("T")


class Loop:
    """One event loop in a thread: the environment's async scorer called from synchronous code (HTTP handler)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)


def _gold_text(item: Any) -> str:
    """The item's gold reply: a `tasks` judge's hand-written `reference`, else the gold (the first of several)."""
    judge = (item.meta or {}).get("judge")
    if isinstance(judge, dict) and str(judge.get("reference") or "").strip():
        return str(judge["reference"]).strip()
    gold = item.gold[0] if isinstance(item.gold, list | tuple) and item.gold else item.gold
    return gold.strip() if isinstance(gold, str) else ""


async def verified_golds(env: Any, student: Any, items: list[Any]) -> dict[str, str]:
    """item id -> its gold reply, for the training items whose gold the environment passes."""
    out: dict[str, str] = {}
    for it in items:
        gold = _gold_text(it)
        if gold and hasattr(env, "verify_example") and float(await env.verify_example(it, gold, student)) >= 1 - 1e-9:
            out[it.id] = gold
    return out


def with_examples(skill: str, pairs: list[tuple[str, str]]) -> str:
    """The skill with (question, answer) pairs as worked examples, the form the harness sends as chat turns."""
    for q, a in pairs:
        skill, _ = add_example(skill, q, a)
    return skill


def fewshot_baseline(env: Any, student: Any, train: list[Any], initial: str, seed: int) -> tuple[str, dict[str, Any]]:
    """The zero-call few-shot baseline: k verified training golds as worked examples (skillgrad's own builder,
    engine/baselines.py, where this checkout has it; else LabeledFewShot on verified golds)."""
    order = list(train)
    random.Random(seed).shuffle(order)
    loop = Loop()
    try:
        try:
            from skillgrad.engine.baselines import build_fewshot  # type: ignore[attr-defined]
        except ImportError:
            golds = loop.run(verified_golds(env, student, order))
            pairs = [(question_text(it), golds[it.id]) for it in order if it.id in golds][:K_LABELED]
            return with_examples(initial, pairs), {"examples": len(pairs), "builder": "h2h LabeledFewShot stand-in"}
        fs = loop.run(build_fewshot(env, student, initial, order, K_LABELED, bootstrap=[], run_items=None))
        return fs.skill, {"examples": len(fs.examples), "builder": "skillgrad.engine.baselines"}
    finally:
        loop.close()


def mipro_plan(budget_calls: int, n_train: int, n_val: int) -> dict[str, int]:
    """MIPROv2's sizes for a call budget (its `auto` presets assume hundreds of calls): what each phase costs in
    predicts, each predict counted as PER_PREDICT calls. The proposer (data summary of one batch + its summary,
    then per candidate the program, module and instruction calls) comes first; half the rest bootstraps
    demo sets (one unshuffled and one shuffled set per candidate, each trying every pool task at most once), the
    remainder scores the default program and `num_trials` candidates on `val` validation tasks, full passes.
    The pool is also where its labeled demos come from (MIPROv2 has one trainset for both)."""
    n = MIPRO_CANDIDATES
    left = max(0, budget_calls // PER_PREDICT - (2 + 3 * n))
    pool = max(1, min(n_train, left // (2 * (n + 1))))
    rest = max(0, left - (n + 1) * pool)
    val = max(1, min(n_val, rest // 3))
    return {"num_candidates": n, "pool": pool, "val": val, "num_trials": max(1, rest // val - 1),
            "max_bootstrapped": MAX_BOOTSTRAPPED, "max_labeled": K_LABELED}


class ScoreServer:
    """POST /score {"item_id", "reply"} -> {"score"}: the task's own scorer (`verify_example`) for DSPy's metric."""

    def __init__(self, env: Any, student: Any, items: list[Any]) -> None:
        self.env, self.student, self.items = env, student, {it.id: it for it in items}
        self.loop = Loop()
        self._server: ThreadingHTTPServer | None = None

    def start(self) -> str:
        me = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def do_POST(self) -> None:
                req = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                item = me.items.get(str(req.get("item_id")))
                score = 0.0 if item is None else float(
                    me.loop.run(me.env.verify_example(item, str(req.get("reply", "")), me.student)))
                data = json.dumps({"score": score}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}/score"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
        self.loop.close()


def run_dspy(python: Path, spec: dict[str, Any], out: Path, initial: str, timeout: float) -> dict[str, Any]:
    """One DSPy optimiser run in the peers venv; its demos become the skill's worked examples."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "spec.json").write_text(json.dumps(spec, indent=1))
    t0 = time.monotonic()
    script = Path(__file__).resolve().parent / "run_dspy.py"
    try:
        proc = subprocess.run([str(python), str(script), str(out / "spec.json")], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"wall_s": time.monotonic() - t0, "error": f"DSPy run passed its {timeout:.0f} s limit"}
    (out / "stdout.log").write_text(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    res = out / "result.json"
    if not res.is_file():
        tail = " | ".join(proc.stderr.strip().splitlines()[-2:])[-300:]
        return {"wall_s": time.monotonic() - t0, "error": f"DSPy process exited {proc.returncode}: {tail}"}
    got = json.loads(res.read_text())
    demos = got.get("demos", [])
    text = str(got.get("instructions") or "").strip() or initial  # MIPROv2's chosen instruction replaces the text
    return {"wall_s": time.monotonic() - t0, "skill": with_examples(text + "\n", [(d["question"], d["answer"])
                                                                               for d in demos]),
            "instruction_changed": text != initial.strip(),
            "demos": len(demos), "bootstrapped": sum(d.get("source") == "bootstrapped" for d in demos),
            "exceptions": len(got.get("errors", [])), "dspy_errors": got.get("errors", [])[:3]}
