"""`skillgrad estimate`: calls, tokens and cost per stage for a whole run, before anything is spent.

The real trainer runs the configured run in a temporary folder against counting models (`CountingProvider`):
every call is answered at once, with no provider and no cache. The teacher returns a valid reply of the
requested schema (so edits are applied and gated); `ForecastEnv` scores as a typical short run goes (every
training task fails, the first candidate is accepted, later ones are not). The calls are tallied per trainer
stage, so the count follows the loop exactly: multi-turn tasks, probes, demonstrations, gates and run-end
tests included. Prompt tokens are the real prompts measured with each
role's tokenizer; completion tokens are each call's reply cap (an upper bound); the cost is the price table's
for the configured models.
"""

from __future__ import annotations

import asyncio
import functools
import os
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from skillgrad.config.schema import Config, RoleConfig
from skillgrad.envs.base import Trajectory
from skillgrad.envs.registry import create_env
from skillgrad.models.base import Completion, Request, Usage
from skillgrad.models.factory import build_models, create_provider
from skillgrad.models.prices import is_loopback_url
from skillgrad.models.tokens import ESTIMATOR, TokenCounter, request_tokens

STUDENT_REPLY = "I am not sure."  # fails the task's check, like a student that has not learned the skill yet
AGENTS = ("codex", "claude_code")


def sample_json(schema: dict[str, Any], defs: dict[str, Any], key: str = "", salt: int = 0) -> Any:
    """A small value valid for `schema` that still carries content: two items per list, `append` edits."""
    if "$ref" in schema:
        return sample_json(defs[schema["$ref"].split("/")[-1]], defs, key, salt)
    for k in ("anyOf", "oneOf"):
        if k in schema:
            options = [o for o in schema[k] if o.get("type") != "null"] or schema[k]
            return sample_json(options[0], defs, key, salt)
    if "allOf" in schema:
        return sample_json(schema["allOf"][0], defs, key, salt)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return "append" if "append" in schema["enum"] else schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {k: sample_json(v, defs, k, salt) for k, v in schema.get("properties", {}).items()}
    if kind == "array":  # two items where allowed: a teacher proposes more than one edit
        n = min(max(2, int(schema.get("minItems", 0))), int(schema.get("maxItems", 2)))
        return [sample_json(schema.get("items", {}), defs, key, salt * 2 + i) for i in range(n)]
    if kind == "string":
        text = f"Counted {key or 'text'} {salt}: check the answer before replying."  # distinct: no dedup merges
        lo, hi = int(schema.get("minLength", 0)), int(schema.get("maxLength", len(text)))
        return (text * (lo // len(text) + 1))[:max(lo, min(hi, len(text)))]
    if kind in ("integer", "number"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        value = max(lo + (1 if "exclusiveMinimum" in schema else 0), min(1, schema.get("maximum", 1)))
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return True
    return None


def sample_reply(schema: type[BaseModel], salt: int = 0) -> str:
    js = schema.model_json_schema()
    value = sample_json(js, js.get("$defs", {}), salt=salt)
    try:
        return schema.model_validate(value).model_dump_json()
    except ValidationError:  # a constraint the sampler does not know: the call still counts, its reply fails
        return "{}"


class ForecastEnv:
    """The run's environment, scored as the forecast assumes: every training task fails (every step reflects on
    its whole batch); in evaluation the starting skill fails and any changed skill passes, so the first candidate
    is accepted and later ones tie and are rejected (one accepted step, as in a typical short run: the run-end
    test then scores two distinct skills). Everything else is the environment's own (tasks, turns, prompts)."""

    def __init__(self, env: Any) -> None:
        self._env = env
        self._initial = env.initial_skill()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)

    async def run_task(self, item: Any, skill: str, student: Any, **kw: Any) -> Trajectory:
        t = await self._env.run_task(item, skill, student, **kw)
        if t.env_error:
            return t
        passed = not kw.get("feedback", True) and skill != self._initial
        return replace(t, hard=float(passed), soft=float(passed),
                       fail_reason="" if passed else (t.fail_reason or "wrong_answer: counted as failed"))


class CountingProvider:
    """Answers without a model under the configured provider's name and model (so the price table and the
    context window are the real ones), reporting the prompt in the role's tokens and the reply cap."""

    def __init__(self, rc: RoleConfig, role: str) -> None:
        self.name, self.model = str(rc.provider), rc.model
        if rc.provider == "openai" and not rc.azure_endpoint:  # priced as the real provider will be (factory.price_name)
            self.loopback = is_loopback_url(rc.base_url or os.environ.get("OPENAI_BASE_URL", ""))
        self.is_agent = rc.provider in AGENTS
        self.supports_vision = bool(rc.vision)
        self._counter = ESTIMATOR
        self._calls = 0
        if rc.provider == "local":  # the GGUF's own vocabulary; loading it sends nothing anywhere
            real = create_provider(rc, role)
            # the same texts (skill, templates, items) are counted again and again across the run
            self.model, self._counter = real.model, TokenCounter("the GGUF's vocabulary",
                                                                 functools.lru_cache(maxsize=8192)(real.count_tokens))

    def params(self) -> dict[str, Any]:
        return {}

    def token_counter(self) -> TokenCounter:
        return self._counter

    async def __call__(self, req: Request) -> Completion:
        self._calls += 1
        text = sample_reply(req.schema, self._calls) if req.schema is not None else STUDENT_REPLY
        prompt = request_tokens(req, self._counter.count) - req.max_tokens
        return Completion(text=text, usage=Usage(prompt_tokens=max(prompt, 0), completion_tokens=req.max_tokens),
                          model=self.model, provider=self.name, finish_reason="stop")

    async def aclose(self) -> None:
        return None


def estimate_run(cfg: Config) -> dict[str, Any]:
    return asyncio.run(_estimate(cfg))


async def _estimate(cfg: Config) -> dict[str, Any]:
    from skillgrad.core.events import EventLog
    from skillgrad.engine.context import CURRENT_STAGE
    from skillgrad.engine.session import teacher_settings
    from skillgrad.engine.trainer import Trainer
    from skillgrad.runs.store import RunStore

    # no cache (a shared one would answer from real replies), no budget stop, no stop at the score ceiling
    # (the counting replies may score 1.0 where real ones would not) and no early stop of the gate (a rejected
    # candidate is counted on every selection item, engine/gate/early.py): the whole run is counted, an upper bound
    cfg = cfg.model_copy(update={"cache": cfg.cache.model_copy(update={"enabled": False, "path": ""}),
                                 "budget": type(cfg.budget)(),
                                 "train": cfg.train.model_copy(update={"stop_at_ceiling": False}),
                                 "evaluation": cfg.evaluation.model_copy(update={"gate_early_stop": False})},
                         deep=True)
    rows: dict[tuple[str, str], dict[str, Any]] = {}  # (trainer stage, role) -> tally, in first-call order
    open_stages: list[str] = []  # the trainer's stages under way; a call belongs to the newest

    sizes: dict[str, Any] = {}

    def listen(e: dict[str, Any]) -> None:
        kind = e.get("event")
        if kind == "run_start":
            sizes.update(steps=e.get("total_steps"), train=e.get("n_train"), val=e.get("n_val"), test=e.get("n_test"))
        elif kind == "stage_start":
            open_stages.append(str(e["stage"]))
        elif kind == "stage_end" and e.get("stage") in open_stages:
            del open_stages[len(open_stages) - 1 - open_stages[::-1].index(str(e["stage"]))]
        elif kind == "llm_call":
            # the calling task's own stage (stages run side by side); outside any stage, the newest one open
            stage = CURRENT_STAGE.get() or (open_stages[-1] if open_stages else str(e.get("stage") or "-"))
            stage = "test" if stage.startswith("test_") else stage  # the run-end test scores its skills together
            row = rows.setdefault((stage, str(e.get("role"))), {"stage": stage, "role": str(e.get("role")), "calls": 0,
                                                                 "prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0})
            row["calls"] += 1
            row["prompt_tokens"] += int(e.get("prompt_tokens") or 0)
            row["completion_tokens"] += int(e.get("completion_tokens") or 0)
            row["cost"] = None if row["cost"] is None or e.get("cost") is None else row["cost"] + float(e["cost"])

    # the run's files are thrown away: a memory-backed folder spares the disk's fsyncs (most of the time)
    scratch = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="skillgrad-estimate-", dir=scratch) as tmp:
        run_dir = Path(tmp)
        emit = EventLog(run_dir / "events.jsonl", listeners=[listen])
        env: Any = ForecastEnv(create_env(cfg.env))
        models = build_models(cfg, cache_path=None, emit=emit, env=env, make_provider=CountingProvider)
        max_tokens, temperature = teacher_settings(cfg)
        trainer = Trainer(cfg, env, models, RunStore(run_dir), emit, teacher_max_tokens=max_tokens,
                          teacher_temperature=temperature)
        try:
            await trainer.run()
        finally:
            await models.aclose()
    table = list(rows.values())
    total = {k: sum(r[k] for r in table) for k in ("calls", "prompt_tokens", "completion_tokens")}
    costs = [r["cost"] for r in table]
    total["cost"] = None if any(c is None for c in costs) else sum(costs)
    return {"steps": sizes.pop("steps", 0), "rows": table, "total": total, "split_sizes": sizes}
