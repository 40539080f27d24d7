"""The persistent SQLite cache: hits, sample separation, sharing between processes."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

from conftest import free_port

from skillgrad.config.schema import RoleConfig
from skillgrad.models.base import Completion, Request, Usage
from skillgrad.models.cache import LLMCache, file_digest
from skillgrad.models.factory import build_llm
from skillgrad.models.meter import Meter
from skillgrad.models.providers.local import LocalProvider

MSGS = [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "Name a colour."}]


def test_cache_hit_replays_without_provider_call(gguf_path, tmp_path, event_sink):
    cache = LLMCache(tmp_path / "llm_cache.sqlite")
    meter = Meter(emit=event_sink)
    llm = build_llm(RoleConfig(provider="local", model=str(gguf_path), n_threads=1), "student", cache=cache, meter=meter,
                    emit=event_sink)

    async def run():
        first = await llm.complete(MSGS, max_tokens=12, stage="rollout")
        second = await llm.complete(MSGS, max_tokens=12, stage="rollout")
        return first, second

    first, second = asyncio.run(run())
    assert not first.cached and second.cached
    assert second.text == first.text and second.usage == first.usage
    assert second.finish_reason == first.finish_reason
    assert meter.provider_calls == 1  # the hit never reached the model
    total = meter.totals()
    assert total.calls == 2 and total.cache_hits == 1 and total.cached_tokens == first.usage.total
    assert cache.hits == 1 and cache.misses == 1 and len(cache) == 1
    assert [c["cached"] for c in event_sink.of("llm_call")] == [False, True]
    # a fresh cache object over the same file (a resumed run) hits too
    again = LLMCache(tmp_path / "llm_cache.sqlite")
    key = Request(messages=MSGS, max_tokens=12, stage="rollout", role="student").cache_key(
        "local", llm.provider.model, llm.provider.params())
    hit = again.get(key)
    assert hit is not None and hit.text == first.text and hit.cached


def test_samples_at_temperature_are_distinct_entries(gguf_path, tmp_path):
    cache = LLMCache(tmp_path / "c.sqlite")
    meter = Meter()
    llm = build_llm(RoleConfig(provider="local", model=str(gguf_path), n_threads=1), "student", cache=cache, meter=meter)

    async def run():
        a = await llm.complete(MSGS, max_tokens=10, temperature=0.9, sample=0)
        b = await llm.complete(MSGS, max_tokens=10, temperature=0.9, sample=1)
        a2 = await llm.complete(MSGS, max_tokens=10, temperature=0.9, sample=0)
        return a, b, a2

    a, b, a2 = asyncio.run(run())
    assert len(cache) == 2 and meter.provider_calls == 2
    assert not b.cached and a2.cached and a2.text == a.text


def test_key_ignores_secrets_but_not_params(tmp_path, fault_server, event_sink):
    """Two API keys, one endpoint: the second client's call is a cache hit, and no key reaches the file,
    the events or the key; another endpoint or sample index is another entry."""
    secret_a, secret_b = "sk-test-AAAA1111secret", "sk-test-BBBB2222secret"
    cache = LLMCache(tmp_path / "llm_cache.sqlite")

    def client(key: str, base_url: str = fault_server.base_url):
        return build_llm(RoleConfig(provider="openai", model="m", base_url=base_url, api_key=key, max_retries=0),
                         "student", cache=cache, emit=event_sink)

    first = asyncio.run(client(secret_a).complete(MSGS, max_tokens=8))
    second = asyncio.run(client(secret_b).complete(MSGS, max_tokens=8))
    assert not first.cached and second.cached and second.text == first.text
    assert len(fault_server.requests) == 1
    assert len(cache) == 1
    # another endpoint is another entry (its call fails: nothing listens there, but it misses the cache)
    other = f"http://127.0.0.1:{free_port()}/v1"
    try:
        asyncio.run(client(secret_a, other).complete(MSGS, max_tokens=8))
    except Exception:  # noqa: BLE001 - the point is only that it was not served from the cache
        pass
    assert len(cache) == 1
    req = Request(messages=MSGS)
    assert Request(messages=MSGS, sample=1).cache_key("p", "m", {}) != req.cache_key("p", "m", {})
    cache.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("llm_cache.sqlite*"))
    assert raw and secret_a.encode() not in raw and secret_b.encode() not in raw
    assert not any(secret_a in repr(f) or secret_b in repr(f) for _, f in event_sink.events)


_WRITER = textwrap.dedent("""
    import sys
    from skillgrad.models.base import Completion, Usage
    from skillgrad.models.cache import LLMCache
    cache = LLMCache(sys.argv[1])
    tag = sys.argv[2]
    for i in range(400):
        cache.put(f"{tag}-{i}", Completion(text=f"{tag} reply {i}", usage=Usage(3, 4), provider="p", model="m",
                                           finish_reason="stop"))
        if i % 10 == 0:
            assert cache.get(f"{tag}-{i}") is not None
    cache.close()
    print("done", tag)
""")


def test_two_processes_share_the_cache(tmp_path: Path):
    path = tmp_path / "shared.sqlite"
    LLMCache(path).put("seed", Completion(text="seeded", usage=Usage(1, 2), provider="p", model="m"))
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(path), tag], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for tag in ("a", "b")]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    cache = LLMCache(path)
    assert len(cache) == 801
    hit = cache.get("b-399")
    assert hit is not None and hit.text == "b reply 399" and hit.usage == Usage(3, 4) and hit.cached
    assert cache.get("seed").text == "seeded"


class _NoLoad:
    """Stands in for the model pool: cache keys need the provider's parameters, not loaded weights."""

    def get(self, path: Path, n_ctx: int, n_threads: int, adaptive: bool = False) -> object:
        return SimpleNamespace(llama=None, threads=1)


def test_local_cache_key_follows_the_gguf_content_not_its_name(tmp_path: Path, gguf_path: Path):
    same, other = tmp_path / "a" / gguf_path.name, tmp_path / "b" / gguf_path.name
    for p in (same, other):
        p.parent.mkdir()
        shutil.copyfile(gguf_path, p)
    with open(other, "ab") as f:
        f.write(b"\0")  # a different model under the same file name

    def key(path: Path) -> str:
        provider = LocalProvider(RoleConfig(provider="local", model=str(path)), "student", pool=_NoLoad())
        req = Request(messages=[{"role": "user", "content": "hi"}], max_tokens=4)
        return req.cache_key(provider.name, provider.model, provider.params())

    assert key(same) == key(gguf_path)  # the same weights share replies wherever they live
    assert key(same) != key(other)
    # the digest is computed once per path, mtime and size, and follows a rewrite of the file
    assert file_digest(same) == file_digest(gguf_path)
    shutil.copyfile(other, same)
    assert file_digest(same) == file_digest(other)


def test_identical_requests_in_flight_together_are_sent_once(tmp_path: Path):
    """Two skills that read the same to the student, scored at once, must not both pay (chaos resume counts it)."""
    cache = LLMCache(tmp_path / "c.sqlite")
    sent: list[str] = []

    async def provider(req: Request) -> Completion:
        sent.append(req.messages[-1]["content"])
        await asyncio.sleep(0.05)
        if req.messages[-1]["content"] == "boom":
            raise RuntimeError("provider down")
        return Completion(text="red", usage=Usage(prompt_tokens=3, completion_tokens=1), cost=0.0, cached=False,
                          model="m", provider="p")

    handler = cache.wrap(provider, provider="p", model="m", params={})
    other = [{"role": "user", "content": "Name a fruit."}]

    async def go() -> list[Completion]:
        return await asyncio.gather(handler(Request(MSGS)), handler(Request(MSGS)), handler(Request(other)))

    a, b, c = asyncio.run(go())
    assert sent == ["Name a colour.", "Name a fruit."]
    assert [a.cached, b.cached, c.cached] == [False, True, False] and a.text == b.text == "red"

    # a failed first call is not shared: the waiting one is sent itself (and fails on its own)
    boom = [{"role": "user", "content": "boom"}]

    async def fail() -> list[object]:
        return await asyncio.gather(handler(Request(boom)), handler(Request(boom)), return_exceptions=True)

    results = asyncio.run(fail())
    assert sent.count("boom") == 2 and all(isinstance(r, RuntimeError) for r in results)
