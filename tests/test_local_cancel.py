"""A cancelled local call frees the embedded model (issue 21): the generation stops at its next token instead of
running to max_tokens while every later call waits behind it and times out."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from skillgrad.config.schema import RoleConfig
from skillgrad.models.base import Request
from skillgrad.models.providers.local import LlamaPool, LocalProvider


def test_a_cancelled_call_releases_the_model(gguf_path: Path) -> None:
    pool = LlamaPool()
    p = LocalProvider(RoleConfig(provider="local", model=str(gguf_path), n_threads=1), "student", pool=pool)
    long = Request(messages=[{"role": "user", "content": "Write a very long story about a dragon, at least 2000 words."}],
                   max_tokens=2000, temperature=0.0)  # the model writes until max_tokens
    short = Request(messages=[{"role": "user", "content": "Say hi."}], max_tokens=2, temperature=0.0)

    async def go() -> tuple[float, str]:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(p(long), timeout=2.0)
        t0 = time.monotonic()
        while p._entry.lock.locked() and time.monotonic() - t0 < 60:
            await asyncio.sleep(0.05)
        freed = time.monotonic() - t0
        c = await p(short)  # the model answers again
        return freed, c.text

    try:
        freed, text = asyncio.run(go())
    finally:
        pool.clear()
    # 2000 tokens take minutes here (measured: 600 in 100 s); a stopped generation frees the model at once
    assert freed < 30, freed
    assert isinstance(text, str)


class Story(BaseModel):  # the grammar holds each part to 1000 characters at least: a reply of ~750 tokens
    beginning: str = Field(min_length=1000)
    middle: str = Field(min_length=1000)
    end: str = Field(min_length=1000)


def test_a_cancelled_grammar_call_and_its_prompt_stop_at_once(gguf_path: Path) -> None:
    """A teacher call (grammar-constrained JSON) cannot be ended by forcing end-of-text; llama.cpp's abort
    callback stops it within a graph node, so a stop request (SIGTERM) is not held up by the reply."""
    pool = LlamaPool()
    p = LocalProvider(RoleConfig(provider="local", model=str(gguf_path), n_threads=1), "teacher", pool=pool)
    long = Request(messages=[{"role": "user", "content": "Write a very long story about a dragon, at least 2000 "
                              "words, as JSON."}], schema=Story, max_tokens=1500,
                   temperature=0.0)

    async def go() -> float:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(p(long), timeout=2.0)
        t0 = time.monotonic()
        while p._entry.lock.locked() and time.monotonic() - t0 < 120:
            await asyncio.sleep(0.02)
        return time.monotonic() - t0

    try:
        freed = asyncio.run(go())
        assert p._entry.abort_cb is None  # the abort callback is removed with the call (it costs speed)
        again = asyncio.run(p(Request(messages=[{"role": "user", "content": "Say hi."}], max_tokens=2)))
    finally:
        pool.clear()
    assert freed < 5, freed  # before: the rest of the reply (15 s or more here)
    assert isinstance(again.text, str)
