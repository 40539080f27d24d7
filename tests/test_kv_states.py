"""Prompt reuse (models/providers/kv_states.py) on the real embedded model: alternating student and teacher
prompts reuse the student's prefix after a teacher call, and every reply and its last logits (greedy, seeded
sample, after a cancelled call) are bit for bit what a freshly reset model gives."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from skillgrad.config.schema import RoleConfig
from skillgrad.envs.chat import student_messages
from skillgrad.models.base import Request
from skillgrad.models.providers.kv_states import BLOCK, common_prefix, reusable
from skillgrad.models.providers.local import LlamaPool, LocalProvider

SKILL = """# Zorblax support

Answer questions about the Zorblax build tool in one short sentence. Use the facts and examples below; when
a question is not covered, say that the skill does not say.

## Examples
Q: What is the default Zorblax timeout in seconds?
A: The default Zorblax timeout is 36 seconds.
Q: What programming language is Zorblax written in?
A: Zorblax is written in Erlang.
Q: What file extension do Zorblax project files use?
A: Zorblax project files use the .zorq extension.
"""
TEACHER = ("You improve a skill: a markdown document that a frozen assistant reads as its instructions. You are "
           "shown a task the assistant failed and the expected answer. Propose one short edit that fixes it, as "
           "one line of plain text, and nothing else. Keep the edit concrete and self-contained.")


def student(skill: str, question: str, **kw: object) -> Request:
    return Request(messages=student_messages(skill, "You are a helpful assistant.", question), max_tokens=10, **kw)


def teacher(task: str, max_tokens: int = 10) -> Request:
    return Request(messages=[{"role": "system", "content": TEACHER}, {"role": "user", "content": task}],
                   max_tokens=max_tokens)


def test_common_prefix() -> None:
    a = np.array([1, 2, 3, 4], dtype=np.intc)
    assert common_prefix(a, np.array([1, 2, 9], dtype=np.intc)) == 2
    assert common_prefix(a, a[:2]) == 2
    assert common_prefix(a, np.array([], dtype=np.intc)) == 0
    assert reusable(common=100, exact=10 * BLOCK, prompt_len=200) == (100 // BLOCK) * BLOCK
    assert reusable(common=10 * BLOCK, exact=3 * BLOCK + 5, prompt_len=500) == 3 * BLOCK  # only exact blocks
    assert reusable(common=2 * BLOCK, exact=2 * BLOCK, prompt_len=2 * BLOCK) == BLOCK  # one token left to evaluate


def fresh(llama) -> None:
    llama.reset()
    llama._ctx.kv_cache_clear()
    llama.exact_n = 0


def logits(llama) -> np.ndarray:
    return np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),)).copy()


def test_restored_prefixes_give_the_replies_of_a_fresh_model(gguf_path: Path) -> None:
    pool = LlamaPool()
    p = LocalProvider(RoleConfig(provider="local", model=str(gguf_path), n_threads=1), "student", pool=pool)
    llama = p._entry.llama
    longer = SKILL + "Q: Who maintains Zorblax?\nA: The Zorblax core team maintains it.\n"
    calls = [
        student(SKILL, "How long is the default Zorblax timeout?"),
        teacher("Task: What is the Zorblax slogan? Expected: Think Clear Paths. Reply: I do not know."),
        student(SKILL, "Which language is Zorblax built with?"),  # the skill's prefix comes back
        teacher("Task: Where is the Zorblax data centre? Expected: Kenya. Reply: In Europe."),
        # a stage of teacher prompts, more than the states kept: one state stands for them all
        *(teacher(f"Task: What is Zorblax setting number {i}? Expected: {i * 7}. Reply: I am not sure.", 2)
          for i in range(8)),
        student(longer, "What extension do Zorblax files have?"),  # a candidate: the same prefix, one more example
        student(SKILL, "Who wrote Zorblax?", temperature=0.8, sample=3),  # a seeded sample
        teacher("Task: Who wrote Zorblax? Expected: Ada Quist. Reply: Nobody."),
        student(SKILL, "How long is the default Zorblax timeout?"),  # the whole prompt is saved: replay one token
    ]

    async def run_all(reset: bool) -> list[tuple[str, np.ndarray]]:
        out = []
        for r in calls:
            if reset:
                fresh(llama)
            out.append(((await p(r)).text, logits(llama)))
        return out

    try:
        reused = asyncio.run(run_all(reset=False))
        stats = llama.kv_states.stats
        assert stats.restored >= 3 and stats.reused_tokens >= 3 * 100, stats
        assert len(llama.kv_states) <= 3  # the skill's, the longer skill's (or one for both), the teacher's

        llama.kv_states = None
        again = asyncio.run(run_all(reset=True))
        assert [t for t, _ in again] == [t for t, _ in reused]
        assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(again, reused, strict=True))
    finally:
        pool.clear()


def test_a_cancelled_call_leaves_states_that_give_fresh_replies(gguf_path: Path) -> None:
    """A call cancelled mid-generation frees the model; the next calls (one restoring a saved prefix) reply
    as a fresh model does."""
    pool = LlamaPool()
    p = LocalProvider(RoleConfig(provider="local", model=str(gguf_path), n_threads=1), "student", pool=pool)
    llama = p._entry.llama
    q = student(SKILL, "What is the default Zorblax timeout?")
    long = Request(messages=[{"role": "system", "content": TEACHER},
                             {"role": "user", "content": "Write a very long story about a dragon."}], max_tokens=2000)

    async def go() -> str:
        await p(q)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(p(long), timeout=2.0)
        return (await p(q)).text

    try:
        after, after_logits = asyncio.run(go()), logits(llama)
        assert llama.kv_states.stats.restored >= 1
        llama.kv_states = None
        fresh(llama)
        assert asyncio.run(p(q)).text == after
        assert np.array_equal(logits(llama), after_logits)
    finally:
        pool.clear()
