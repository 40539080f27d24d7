"""The held-out replies behind results.json's per-item scores (the proxy logs tokens, not text), so a reader can see
what each row's score is made of. From the repository root, after head_to_head.py has filled this folder:

    python benchmarks/results/2026-11-28/h2h-public/replies.py

Each row's `best_skill.md` is scored again on the test split the way the harness scores it (h2h/heldout.py: the
task's environment and student prompt, temperature 0, the same served model behind the same proxy); a skill text
met before is not asked again. Writes replies.jsonl (task, seed, system, item, gold, reply, score, and whether the
score equals the row's recorded one).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))

from h2h import heldout, run_skillgrad  # noqa: E402
from h2h.serve import Proxy, embedded_gguf, start_llama_server  # noqa: E402
from h2h.tasks import resolve  # noqa: E402
from head_to_head import slug  # noqa: E402

from skillgrad.models.factory import build_models  # noqa: E402


async def replies(cfg: Any, env: Any, test: list[Any], skill: str) -> dict[str, tuple[str, float]]:
    """item id -> (reply, hard score) of `skill` on the test items, as h2h/heldout.py scores them."""
    models = build_models(cfg, cache_path=None)
    try:
        got = {}
        for it in test:
            t = await env.run_task(it, skill, models.student, feedback=False, temperature=0.0)
            got[it.id] = (t.answer, t.hard)
        return got
    finally:
        await models.aclose()


def main() -> int:
    rows = json.loads((HERE / "results.json").read_text())
    server, upstream = start_llama_server(embedded_gguf(), 1, 4096, HERE / "replies_server.log")
    proxy = Proxy(upstream, HERE / "replies_requests.jsonl", {"teacher": 256})
    proxy.start()
    out = []
    try:
        for task_name in dict.fromkeys(r["task"] for r in rows):
            (task,) = resolve([task_name])
            route = run_skillgrad.route_overrides(proxy, slug(f"eval-{task.name}"), 256)
            cfg, env, splits = heldout.load_task_env(task.config, [*task.sized(False), *route])
            proxy.caps["student"] = int(getattr(env.options, "max_tokens", 0) or 0)
            test = list(splits.test)
            seen: dict[str, dict[str, tuple[str, float]]] = {}
            for r in (r for r in rows if r["task"] == task_name and "per_item" in r):
                path = HERE / slug(task_name) / f"seed{r['seed']}" / r["system"] / "best_skill.md"
                skill = path.read_text(encoding="utf-8")
                if skill not in seen:
                    seen[skill] = asyncio.run(replies(cfg, env, test, skill))
                for it in test:
                    reply, score = seen[skill][it.id]
                    out.append({"task": task_name, "seed": r["seed"], "system": r["system"], "item": it.id,
                                "gold": it.meta["judge"]["reference"], "reply": reply, "score": score,
                                "as_recorded": score == r["per_item"].get(it.id)})
                print(f"{task_name} seed {r['seed']} {r['system']}: "
                      f"{sum(x['score'] for x in out[-len(test):]) / len(test):.3f} (recorded {r['after']:.3f})",
                      flush=True)
    finally:
        proxy.stop()
        server.terminate()
        server.wait(timeout=30)
    (HERE / "replies.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
