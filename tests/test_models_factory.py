"""Role resolution from SkillOpt keys, lazy providers, the Models bundle, and rate/concurrency limits."""

from __future__ import annotations

import asyncio
import time

import pytest

from skillgrad.config.backends import map_backend
from skillgrad.config.schema import Config, RoleConfig
from skillgrad.errors import ConfigError
from skillgrad.models.base import Completion, Request, Usage
from skillgrad.models.factory import build_llm, build_models, resolve_role
from skillgrad.models.fakes import Fault
from skillgrad.models.limits import Limits, TokenBucket
from skillgrad.models.providers import load_provider_module


def _cfg(**model):
    return Config.model_validate({"model": model})


@pytest.mark.parametrize("backend,provider", [
    ("local", "local"), ("embedded", "local"), ("llama_cpp", "local"), ("openai", "openai"),
    ("openai_compatible", "openai"), ("compat", "openai"), ("qwen_chat", "openai"), ("openai_chat", "openai"),
    ("azure_openai", "azure"), ("claude", "anthropic"), ("claude_chat", "anthropic"), ("codex_exec", "codex"),
    ("claude_code_exec", "claude_code"),
])
def test_backend_names_map(backend, provider):
    assert resolve_role(_cfg(backend=backend), "teacher").provider == provider


def test_role_specific_backends_models_and_azure_detection():
    cfg = _cfg(backend="local", optimizer_backend="openai_chat", optimizer="gpt-4o",
               azure_openai_endpoint="https://x.openai.azure.com", target="gpt-5.4", reasoning_effort="low")
    teacher, student = resolve_role(cfg, "teacher"), resolve_role(cfg, "student")
    assert (teacher.provider, teacher.model, teacher.azure_endpoint) == ("azure", "gpt-4o", "https://x.openai.azure.com")
    assert (student.provider, student.model) == ("local", "")  # SkillOpt default name ignored for local
    assert teacher.reasoning_effort == student.reasoning_effort == "low"
    # an explicit role block wins
    cfg2 = Config.model_validate({"model": {"backend": "openai", "optimizer": "gpt-4o",
                                            "teacher": {"provider": "local", "model": ""}}})
    assert resolve_role(cfg2, "teacher").provider == "local"


def test_unknown_backend_suggests():
    with pytest.raises(ConfigError, match=r"model\.backend.*did you mean 'openai'"):
        resolve_role(_cfg(backend="opnai"), "student")
    with pytest.raises(ConfigError, match=r"model\.target_backend"):
        map_backend("nonsense", field="model.target_backend")


def test_lazy_provider_loading():
    assert load_provider_module("local").create
    assert load_provider_module("codex").create  # the agent harnesses live in providers/agents.py
    with pytest.raises(ConfigError, match="unknown provider"):
        load_provider_module("bard")


def test_build_models_shares_meter_budget_cache(gguf_path, tmp_path, event_sink):
    one = {"n_threads": 1}
    cfg = Config.model_validate({"budget": {"max_calls": 100}, "model": {"teacher": one, "student": one}})
    models = build_models(cfg, cache_path=tmp_path / "llm_cache.sqlite", emit=event_sink,
                          meter_snapshot={"by_stage": {"old": {"student": {"calls": 5}}}},
                          budget_snapshot={"calls": 5})

    async def run():
        await models.student.complete([{"role": "user", "content": "Hi"}], max_tokens=4, stage="rollout")
        await models.teacher.complete([{"role": "user", "content": "Hi"}], max_tokens=4, stage="reflect")

    asyncio.run(run())
    assert models.teacher.provider._entry is models.student.provider._entry  # one model in memory
    # same model and request: the teacher's call replays the student's reply from the shared cache
    assert models.meter.totals().calls == 7 and models.meter.totals().cache_hits == 1
    assert models.budget.calls == 6 and models.cache is not None and len(models.cache) == 1
    assert models.teacher.role == "teacher" and models.student.role == "student"
    asyncio.run(models.aclose())


def test_concurrency_limit_and_waits(fault_server, event_sink):
    fault_server.default = Fault.slow(0.3, text="x")
    llm = build_llm(RoleConfig(provider="openai", model="m", base_url=fault_server.base_url, concurrency=2),
                    "student", emit=event_sink)

    async def run():
        start = time.monotonic()
        await asyncio.gather(*(llm.complete([{"role": "user", "content": str(i)}]) for i in range(4)))
        return time.monotonic() - start

    elapsed = asyncio.run(run())
    assert elapsed >= 0.55  # 4 requests, 2 at a time, 0.3 s each
    starts = sorted(r["t"] for r in fault_server.requests)
    assert starts[2] - starts[0] >= 0.25
    assert any(w["kind"] == "concurrency" for w in event_sink.of("llm_wait"))


def test_rpm_bucket_makes_callers_wait(event_sink):
    # rpm=60: a burst of 60, then one request per second. 62 callers at once: the provider must see the
    # 61st about 1 s and the 62nd about 2 s after the first, and both waits are reported as events.
    seen: list[float] = []

    async def provider(req: Request) -> Completion:
        seen.append(time.monotonic())
        return Completion(text="ok", usage=Usage(1, 1))

    limited = Limits(concurrency=64, rpm=60, emit=event_sink).wrap(provider)

    async def run():
        start = time.monotonic()
        await asyncio.gather(*(limited(Request(messages=[{"role": "user", "content": str(i)}])) for i in range(62)))
        return start

    start = asyncio.run(run())
    waits = sorted(w["wait_s"] for w in event_sink.of("llm_wait") if w["kind"] == "rpm")
    assert [round(w) for w in waits] == [1, 2]
    seen.sort()
    assert seen[59] - start < 0.5  # the burst went straight through
    assert seen[60] - start >= 0.95 and seen[61] - start >= 1.95
    bucket = TokenBucket(60)  # 1 per second
    assert bucket.reserve(60) == 0.0
    assert bucket.reserve(1) == pytest.approx(1.0, abs=0.05)
