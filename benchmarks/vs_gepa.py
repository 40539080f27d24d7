"""skillgrad vs GEPA on the same data, the same embedded student and teacher, and the same call budget.

Usage: python benchmarks/vs_gepa.py [--families facts fewshot-format] [--seed 1] [--out benchmarks/out/vs_gepa]

For each family: skillgrad trains with the family's demo config (shrunk by --size); its LLM calls (student +
teacher) set GEPA's budget: `max_metric_calls` = skillgrad's student calls (GEPA's metric calls are student
rollouts) and GEPA's reflection calls come on top, counted and shown. GEPA optimises one component, the
skill text, through an adapter over the same environment (`env.run_task`: the same student prompt and scorer)
and a reflection LM that is our teacher model through the models layer (same meter, so calls and tokens are
counted the same way). Both final skills and the initial skill are then scored on the held-out split with
the same student: the held-out gain is paired per item against the initial skill, with a 95% bootstrap
interval. The held-out split is the environment's test split (never seen by either optimiser); for
fewshot-format its questions are re-worded with another family seed, so no wording is shared either.
Prints a markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from skillgrad.config.loader import load_config, packaged_config_path
from skillgrad.engine.intervals import paired_by_id
from skillgrad.envs.base import Item
from skillgrad.envs.registry import create_env
from skillgrad.models.factory import Models, build_models

CONFIGS = {"facts": "demo.yaml", "fewshot-format": "demo-fewshot.yaml"}
T = TypeVar("T")
# GEPA is synchronous; our models are async and keep per-loop state, so every call runs on one loop thread.
_LOOP = asyncio.new_event_loop()
threading.Thread(target=_LOOP.run_forever, daemon=True).start()


def sync(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run_coroutine_threadsafe(coro, _LOOP).result()


SIZES = {"facts": ["env.n_facts=10", "train.num_epochs=1", "train.batch_size=5"],
         "fewshot-format": ["env.split_ratio=10:8:12", "train.num_epochs=1", "train.batch_size=5"]}


def totals(models: Models) -> dict[str, Any]:
    s = models.meter.summary()
    by_role = s.get("by_role", {}) if isinstance(s, dict) else {}
    tot = s.get("total", {}) if isinstance(s, dict) else {}
    return {"calls": tot.get("calls", 0), "tokens": tot.get("total_tokens", 0),
            "student_calls": (by_role.get("student") or {}).get("calls")}


def train_skillgrad(family: str, overrides: list[str], out: Path) -> dict[str, Any]:
    run_dir = out / f"skillgrad-{family}"
    t0 = time.monotonic()
    cmd = [sys.executable, "-m", "skillgrad.cli", "train", "-c", str(packaged_config_path(CONFIGS[family])),
           *[x for o in overrides for x in ("-o", o)], "-o", "evaluation.eval_test=false", "--out", str(run_dir),
           "--quiet"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"skillgrad train failed: {proc.stderr.strip()[-400:]}")
    s = json.loads((run_dir / "summary.json").read_text())
    tok = (s.get("token_summary") or {})
    roles = tok.get("by_role") or {}
    return {"skill": (run_dir / "best_skill.md").read_text(), "minutes": (time.monotonic() - t0) / 60,
            "calls": (tok.get("total") or {}).get("calls", 0), "tokens": (tok.get("total") or {}).get("total_tokens", 0),
            "student_calls": (roles.get("student") or {}).get("calls") or (tok.get("total") or {}).get("calls", 0)}


class SkillAdapter:
    """GEPA adapter: one component ("skill"), evaluated by the skillgrad environment with our student."""

    def __init__(self, env: Any, models: Models) -> None:
        self.env, self.models = env, models

    def evaluate(self, batch: list[Item], candidate: dict[str, str], capture_traces: bool = False) -> Any:
        from gepa.core.adapter import EvaluationBatch

        async def run_all() -> list[Any]:
            return [await self.env.run_task(it, candidate["skill"], self.models.student, feedback=True)
                    for it in batch]

        trajs = sync(run_all())
        return EvaluationBatch(outputs=[t.answer for t in trajs], scores=[t.hard for t in trajs],
                               trajectories=trajs if capture_traces else None)

    def make_reflective_dataset(self, candidate: dict[str, str], eval_batch: Any,
                                components_to_update: list[str]) -> dict[str, list[dict[str, Any]]]:
        records = [{"Inputs": {"question": t.question}, "Generated Outputs": t.answer,
                    "Feedback": f"expected: {t.gold}; score {t.hard}; {t.fail_reason or 'correct'}"}
                   for t in (eval_batch.trajectories or [])]
        return {c: records for c in components_to_update}

    propose_new_texts = None


def reflection_lm(models: Models, max_tokens: int) -> Any:
    """GEPA's LanguageModel callable over our teacher (so its calls go through the same meter and cache)."""

    def call(prompt: str | list[dict[str, Any]]) -> str:
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
        c = sync(models.teacher.complete(messages, max_tokens=max_tokens, temperature=0.3, stage="gepa"))
        return c.text

    return call


def held_out(env: Any, models: Models, skill: str, items: list[Item]) -> dict[str, float]:
    async def run_all() -> dict[str, float]:
        return {it.id: (await env.run_task(it, skill, models.student, feedback=False)).hard for it in items}

    return sync(run_all())


def run_family(family: str, seed: int, out: Path, extra: list[str]) -> list[dict[str, Any]]:
    overrides = [*SIZES[family], f"train.seed={seed}", "env.workers=1", *extra]
    sg = train_skillgrad(family, overrides, out)
    cfg = load_config(packaged_config_path(CONFIGS[family]), overrides)
    env = create_env(cfg.env)
    splits = env.load_splits()
    test = list(splits.test)
    if family == "fewshot-format":  # the same held-out countries, worded with another seed
        other = load_config(packaged_config_path(CONFIGS[family]), [*overrides, f"env.family_seed={seed + 100}"])
        reworded = {it.id: it for it in create_env(other.env).load_splits().test}
        test = [reworded.get(it.id, it) for it in test]
    initial = env.initial_skill()

    import gepa

    (out / f"gepa-{family}").mkdir(parents=True, exist_ok=True)
    models = build_models(cfg, cache_path=out / f"gepa-{family}" / "llm_cache.sqlite")
    t0 = time.monotonic()
    result = gepa.optimize(seed_candidate={"skill": initial}, trainset=list(splits.train), valset=list(splits.val),
                           adapter=SkillAdapter(env, models),
                           reflection_lm=reflection_lm(models, cfg.model.teacher.max_tokens or 256),
                           max_metric_calls=int(sg["student_calls"]), reflection_minibatch_size=3, seed=seed,
                           raise_on_exception=False, display_progress_bar=False)
    gepa_minutes = (time.monotonic() - t0) / 60
    gepa_cost = totals(models)
    gepa_skill = result.best_candidate["skill"] if isinstance(result.best_candidate, dict) else str(
        result.best_candidate)
    (out / f"gepa-{family}" / "best_skill.md").write_text(gepa_skill)

    base = held_out(env, models, initial, test)
    rows = []
    for name, skill, minutes, cost in (("skillgrad", sg["skill"], sg["minutes"], sg),
                                       ("GEPA", gepa_skill, gepa_minutes, gepa_cost)):
        p = paired_by_id(base, held_out(env, models, skill, test))
        rows.append({"family": family, "optimizer": name, "initial": p["mean_a"], "trained": p["mean_b"],
                     "gain": p["mean_diff"], "ci": (p["ci_low"], p["ci_high"]), "n": p["n"],
                     "calls": cost["calls"], "tokens": cost["tokens"], "minutes": minutes})
    sync(models.aclose())
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--families", nargs="+", default=["facts", "fewshot-format"], choices=list(CONFIGS))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/out/vs_gepa"))
    ap.add_argument("-o", dest="overrides", action="append", default=[],
                    help="config override for both optimisers, e.g. -o model.student.n_threads=1")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for f in args.families:  # results.json is rewritten after each family, so a partial run leaves its rows
        rows += run_family(f, args.seed, args.out, args.overrides)
        (args.out / "results.json").write_text(json.dumps(rows, indent=1))
    (args.out / "results.json").write_text(json.dumps(rows, indent=1))
    print("| family | optimizer | held-out initial | held-out trained | gain (points) | 95% interval | n | "
          "LLM calls | tokens | minutes |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        lo, hi = r["ci"]
        print(f"| {r['family']} | {r['optimizer']} | {100 * r['initial']:.1f}% | {100 * r['trained']:.1f}% | "
              f"{100 * r['gain']:+.1f} | {100 * lo:+.1f} .. {100 * hi:+.1f} | {r['n']} | {r['calls']} | "
              f"{r['tokens']} | {r['minutes']:.1f} |")


if __name__ == "__main__":
    main()
