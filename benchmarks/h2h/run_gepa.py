"""GEPA's side: `gepa.optimize` on one component (the skill text), in its own process.

    python benchmarks/h2h/run_gepa.py SPEC.json     (written by head_to_head.py)

The student is the task's skillgrad environment (the same prompt and scorer skillgrad trains with); the reflection
LM is the run's teacher (the served model, or `--teacher-url`'s). Both are routed through the proxy under the tag
"gepa", and a stopper ends the run when the proxy's log holds the call or token budget. The reflection template is
skillgrad's generic analyst prompt (same text, plus one sentence on the example form the harness sends as chat
turns) with GEPA's two placeholders in place of the skill and the failed tasks, and the last sentence, which asks
for JSON edits, asking instead for the whole improved skill in a fenced block (GEPA's output format).
Exceptions are not swallowed silently: GEPA keeps going past a failed call (`raise_on_exception=False`, so one
bad reply does not end the run), and every exception raised by the adapter or the reflection LM is counted and
written to the result.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
import traceback
from collections.abc import Coroutine
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from h2h.serve import count_usage  # noqa: E402

T = TypeVar("T")
# the one example form the harness sends the student as chat turns (envs/chat.py), said to every teacher
EXAMPLE_FORMAT = ("A worked example reaches the student only when it is written under a `## Examples` heading as "
                  "a `Q: <task>` line followed by an `A: <reply>` line.")
_LOOP = asyncio.new_event_loop()  # GEPA is synchronous; our models are async with per-loop state
threading.Thread(target=_LOOP.run_forever, daemon=True).start()
ERRORS: list[str] = []
WINDOWS: list[list[float]] = []  # wall-clock [start, end] of each GEPA iteration (its step), from its callbacks


class IterationClock:
    """GEPA's own iteration events mark where each step starts and ends (an iteration cut short by the stopper
    or an exception ends with the run)."""

    def on_iteration_start(self, _event: Any) -> None:
        WINDOWS.append([time.time()])

    def on_iteration_end(self, _event: Any) -> None:
        if WINDOWS and len(WINDOWS[-1]) == 1:
            WINDOWS[-1].append(time.time())


def sync(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run_coroutine_threadsafe(coro, _LOOP).result()


def counted(where: str, fn: Any) -> Any:
    def wrapped(*a: Any, **k: Any) -> Any:
        try:
            return fn(*a, **k)
        except Exception as e:  # counted, then re-raised for GEPA to handle as it documents
            ERRORS.append(f"{where}: {type(e).__name__}: {str(e)[:200]}")
            raise
    return wrapped


def reflection_template(budget: int) -> str:
    """skillgrad's generic analyst prompt in GEPA's template form (see the module docstring)."""
    text = resources.files("skillgrad.prompts").joinpath("analyst_error.md").read_text(encoding="utf-8")
    system, user = text.split("<!-- user -->")
    system = system.replace("<!-- system -->", "").strip()
    head, found, _ = system.rpartition("Reply with one JSON object")
    if not found:  # the analyst prompt changed: the template must be remade, never sent without its instructions
        raise SystemExit("run_gepa.reflection_template: analyst_error.md no longer ends with its JSON instruction")
    system = head + (f"{EXAMPLE_FORMAT} Reply with the complete improved skill (the current skill with your edits "
                     "applied) inside one ``` fenced block.")
    user = (user.replace("{{skill}}", "<curr_param>").replace("{{trajectories}}", "<side_info>")
            .replace("{{buffer}}", "").replace("{{meta}}", "").replace(" ({{n}})", "").strip())
    return (system + "\n\n" + user).replace("{{budget}}", str(budget))


class SkillAdapter:
    def __init__(self, env: Any, models: Any) -> None:
        self.env, self.models = env, models
        self.evaluate = counted("evaluate", self._evaluate)
        self.make_reflective_dataset = counted("reflective_dataset", self._reflective)

    propose_new_texts = None

    def _evaluate(self, batch: list[Any], candidate: dict[str, str], capture_traces: bool = False) -> Any:
        from gepa.core.adapter import EvaluationBatch

        async def run_all() -> list[Any]:
            return [await self.env.run_task(it, candidate["skill"], self.models.student, feedback=True)
                    for it in batch]

        trajs = sync(run_all())
        for t in trajs:
            if t.error:
                ERRORS.append(f"rollout {t.item_id}: {t.error[:200]}")
        return EvaluationBatch(outputs=[t.answer for t in trajs], scores=[t.hard for t in trajs],
                               trajectories=trajs if capture_traces else None)

    def _reflective(self, candidate: dict[str, str], eval_batch: Any,
                    components_to_update: list[str]) -> dict[str, list[dict[str, Any]]]:
        records = [{"Inputs": {"question": t.question}, "Generated Outputs": t.answer,
                    "Feedback": f"expected: {t.gold}; score {t.hard}; {t.fail_reason or 'correct'}"}
                   for t in (eval_batch.trajectories or [])]
        return {c: records for c in components_to_update}


def main(spec_path: Path) -> None:
    import gepa

    from skillgrad.config.loader import load_config
    from skillgrad.envs.registry import create_env
    from skillgrad.models.factory import build_models

    spec = json.loads(spec_path.read_text())
    out = Path(spec["out"])
    cfg = load_config(Path(spec["config"]), [*spec["overrides"], "cache.enabled=false"])
    env = create_env(cfg.env)
    splits = env.load_splits()
    models = build_models(cfg, cache_path=None)
    cap, log, tag, budget = spec["teacher_cap"], Path(spec["log"]), spec["tag"], spec["budget"]
    budget_tokens = int(spec.get("budget_tokens", 0))

    def spent(used: tuple[int, int]) -> bool:
        return used[0] >= budget or bool(budget_tokens and used[1] >= budget_tokens)

    proposals = []

    def reflection_lm(prompt: str | list[dict[str, Any]]) -> str:
        proposals.append(1)  # one reflection call per GEPA iteration: its step
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
        return sync(models.teacher.complete(messages, max_tokens=cap, temperature=0.3, stage="gepa")).text

    template = reflection_template(spec["edit_budget"])
    (out / "reflection_template.txt").write_text(template)
    t0, started = time.monotonic(), time.time()  # the log's clock: its rows before this are another run's
    result: Any = None
    try:
        result = gepa.optimize(
            seed_candidate={"skill": env.initial_skill()}, trainset=list(splits.train), valset=list(splits.val),
            adapter=SkillAdapter(env, models),  # type: ignore[arg-type]  # duck-typed
            reflection_lm=counted("reflection_lm", reflection_lm),
            reflection_prompt_template=template, reflection_minibatch_size=3, seed=spec["seed"],
            max_metric_calls=budget, stop_callbacks=[lambda _state: spent(count_usage(log, tag, started))],
            raise_on_exception=False, display_progress_bar=False, run_dir=str(out / "gepa_run"),
            callbacks=[IterationClock()])  # type: ignore[list-item]  # GEPACallback is a protocol
        skill = result.best_candidate["skill"] if isinstance(result.best_candidate, dict) else str(
            result.best_candidate)
        row: dict[str, Any] = {"skill": skill, "candidates": len(result.candidates),
                               "val_best": max(result.val_aggregate_scores)}
    except Exception as e:
        row = {"error": f"gepa.optimize raised {type(e).__name__}: {str(e)[:300]}"}
        (out / "traceback.txt").write_text(traceback.format_exc())
    windows = [w if len(w) == 2 else [w[0], time.time()] for w in WINDOWS]
    row.update(wall_s=time.monotonic() - t0, exceptions=len(ERRORS), exception_samples=ERRORS[:5], steps=len(proposals),
               step_windows=windows)
    sync(models.aclose())
    (out / "result.json").write_text(json.dumps(row, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
