"""Prompt prefixes the embedded model can come back to without evaluating them again.

llama-cpp-python keeps the KV cache of the previous call and evaluates only the part of a new prompt that
differs from it. A training run alternates between prompts that do not share a prefix (the student's skill
and examples, then the teacher's analyst prompt, then the student again), so every switch back would
evaluate the student's whole prompt again (700+ tokens in the demo). `KvStates` saves the model's state when
a call is about to overwrite a long prefix and restores the saved one that shares most with a later prompt.

Replies do not change: a restored state holds the same KV cells, in the same order, that evaluating the
prefix produced, and the library then evaluates the rest of the prompt as it would after the previous call
(tests/test_kv_states.py compares with a freshly reset model on the real embedded model).
"""

from __future__ import annotations

import ctypes
import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

MIN_TOKENS = 64  # shorter prefixes are cheaper to evaluate again than to save (a state is ~23 KB a token here)
MAX_STATES = 6  # the student's skill, the candidate's, and a few teacher prompts
MAX_BYTES = 384 << 20


def common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    """Length of the longest common prefix of two token arrays."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if len(diff) else n


@dataclass(eq=False)  # compared by identity
class _Saved:
    tokens: np.ndarray
    data: Any  # ctypes byte array filled by llama_state_seq_get_data
    nbytes: int


@dataclass
class KvStats:
    saved: int = 0
    restored: int = 0
    reused_tokens: int = 0  # prompt tokens a restore spared from evaluation


class KvStates:
    """Saved KV states of one llama context (sequence 0), most recently used last. Called with the model's lock
    held, from the one thread that runs the model, right before each generation."""

    def __init__(self, max_states: int = MAX_STATES, max_bytes: int = MAX_BYTES,
                 min_tokens: int = MIN_TOKENS) -> None:
        self.max_states = max_states
        self.max_bytes = max_bytes
        self.min_tokens = min_tokens
        self._saved: list[_Saved] = []
        self.stats = KvStats()

    def __len__(self) -> int:
        return len(self._saved)

    def before(self, llama: Any, tokens: list[int]) -> None:
        """Bring the state that shares most with `tokens` into the model; save the one it holds when this
        prompt would overwrite more than `min_tokens` of it."""
        want = np.asarray(tokens, dtype=np.intc)
        held_n = int(llama.n_tokens)
        held = np.asarray(llama.input_ids[:held_n], dtype=np.intc)
        keep = common_prefix(held, want)
        best, best_n = None, keep
        for s in self._saved:
            n = common_prefix(s.tokens, want)
            if n > best_n:
                best, best_n = s, n
        if held_n - keep >= self.min_tokens:  # this prompt overwrites a long part of what the model holds
            self._save(llama, held)
        if best is not None and best_n - keep >= self.min_tokens:
            self._restore(llama, best)
            self.stats.reused_tokens += best_n - keep

    def _save(self, llama: Any, held: np.ndarray) -> None:
        import llama_cpp

        ctx = llama._ctx.ctx
        llama._ctx.kv_cache_seq_rm(0, len(held), -1)  # cells past n_tokens (an aborted decode) are not state
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        n = llama_cpp.llama_state_seq_get_data(ctx, buf, size, 0)
        if n <= 0:
            return
        # A saved state that the new one extends (same prompt, another question) is no longer needed.
        self._saved = [s for s in self._saved if common_prefix(s.tokens, held) < len(s.tokens) - self.min_tokens]
        self._saved.append(_Saved(held.copy(), buf, int(n)))
        while len(self._saved) > self.max_states or sum(s.nbytes for s in self._saved) > self.max_bytes:
            self._saved.pop(0)
        self.stats.saved += 1

    def _restore(self, llama: Any, saved: _Saved) -> None:
        import llama_cpp

        if saved in self._saved:  # saving the held state may have dropped it: it is restored all the same
            self._saved.remove(saved)
        self._saved.append(saved)
        llama._ctx.kv_cache_clear()
        if llama_cpp.llama_state_seq_set_data(llama._ctx.ctx, saved.data, saved.nbytes, 0) == 0:
            llama._ctx.kv_cache_clear()  # refused: evaluate from scratch
            llama.n_tokens = 0
            log.warning("local: a saved prompt state was refused by llama.cpp; evaluating the prompt again")
            return
        n = len(saved.tokens)
        llama.input_ids[:n] = saved.tokens
        llama.n_tokens = n
        llama._requires_eval = True  # the logits belong to another prompt: evaluate at least one token
        self.stats.restored += 1


_CLASS: Any = None


def llama_with_states() -> Any:
    """`llama_cpp.Llama` whose generations first consult the instance's `kv_states` (imported on first use)."""
    global _CLASS
    if _CLASS is None:
        from llama_cpp import Llama

        class StatefulLlama(Llama):  # type: ignore[misc]
            kv_states: KvStates | None = None
            prompt_reused = 0  # prompt tokens of the last generation that were not evaluated again

            def generate(self, tokens: Any, *args: Any, **kwargs: Any) -> Any:
                if self.kv_states is not None and len(tokens):
                    self.kv_states.before(self, list(tokens))
                want = np.asarray(tokens, dtype=np.intc)
                reused = common_prefix(np.asarray(self.input_ids[: self.n_tokens], dtype=np.intc), want)
                self.prompt_reused = min(reused, max(len(want) - 1, 0))  # the library evaluates one token at least
                return super().generate(tokens, *args, **kwargs)

        _CLASS = StatefulLlama
    return _CLASS
