"""Prompt prefixes the embedded model reuses, with replies that depend on the prompt alone.

llama-cpp-python keeps the KV cache of the previous call and evaluates only the part of a new prompt that
differs from it. Two things go wrong with that as it is:

- llama.cpp's numbers depend on how the prompt is cut into batches (a token's KV computed in a batch of 26
  differs in the last bits from the same token in a batch of 512), so a reply depended on which prompt came
  before it: the same demo gave 40.0 % or 43.3 % held-out depending on call order (one test reply differed).
- A training run alternates between prompts that share no prefix (the student's skill and examples, the
  teacher's analyst prompt, the initial and the best skill on the test split), and each switch back evaluated
  the student's whole prompt again (1,000+ tokens in the demo, 15 s a call under load).

So every prompt is evaluated in blocks of `BLOCK` tokens aligned at absolute positions, exactly as a fresh
model would, and only whole blocks that were evaluated as whole blocks are reused: a reused KV cell holds the
bits a fresh evaluation computes. `KvStates` saves the model's state when a call is about to overwrite a long
prefix and restores the saved one that shares most with a later prompt (tests/test_kv_states.py compares
replies and logits with a freshly reset model on the real embedded model).
"""

from __future__ import annotations

import ctypes
import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

BLOCK = 32  # prompt batch size: the unit of reuse (a smaller block evaluates long prompts more slowly)
MIN_TOKENS = 64  # shorter prefixes are cheaper to evaluate again than to save (a state is ~23 KB a token here)
MAX_STATES = 6  # the student's skills (current, candidate, initial), the teacher's prompt families
MAX_BYTES = 384 << 20


def common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    """Length of the longest common prefix of two token arrays."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if len(diff) else n


def reusable(common: int, exact: int, prompt_len: int) -> int:
    """Tokens of a held or saved state a prompt may reuse: the shared prefix, within the whole blocks that were
    evaluated as whole blocks (`exact`), leaving at least one prompt token to evaluate, cut to a block boundary."""
    return (min(common, exact, prompt_len - 1) // BLOCK) * BLOCK if prompt_len > 0 else 0


@dataclass(eq=False)  # compared by identity
class _Saved:
    tokens: np.ndarray  # whole blocks only
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

    def before(self, llama: Any, want: np.ndarray) -> None:
        """Bring the state that shares most with the prompt `want` into the model; save the one it holds when
        this prompt would overwrite more than `min_tokens` of its exact blocks."""
        exact = min(int(llama.n_tokens), int(llama.exact_n))
        held = np.asarray(llama.input_ids[:exact], dtype=np.intc)
        keep = reusable(common_prefix(held, want), exact, len(want))
        best, best_n = None, keep
        for s in self._saved:
            n = reusable(common_prefix(s.tokens, want), len(s.tokens), len(want))
            if n > best_n:
                best, best_n = s, n
        if exact - keep >= self.min_tokens:  # this prompt overwrites a long part of what the model holds
            self._save(llama, held)
        if best is not None and best_n - keep >= self.min_tokens:
            self._restore(llama, best)
            self.stats.reused_tokens += best_n - keep

    def _save(self, llama: Any, held: np.ndarray) -> None:
        import llama_cpp

        ctx = llama._ctx.ctx
        llama._ctx.kv_cache_seq_rm(0, len(held), -1)  # the partial block and the reply are not saved
        llama.n_tokens = len(held)
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        n = llama_cpp.llama_state_seq_get_data(ctx, buf, size, 0)
        if n <= 0:
            return
        # One state per family of prompts: a saved state that shares half its tokens or more with this one (the
        # same skill with another question, the teacher's next prompt of one stage) goes. Without this, a stage
        # of short teacher prompts pushed the student's 800-token skill prefix out between rollout and gate.
        self._saved = [s for s in self._saved if 2 * common_prefix(s.tokens, held) < len(s.tokens)]
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
        n = len(saved.tokens)
        if llama_cpp.llama_state_seq_set_data(llama._ctx.ctx, saved.data, saved.nbytes, 0) == 0:
            llama._ctx.kv_cache_clear()  # refused: evaluate from scratch
            n = 0
            log.warning("local: a saved prompt state was refused by llama.cpp; evaluating the prompt again")
        else:
            llama.input_ids[:n] = saved.tokens
            self.stats.restored += 1
        llama.n_tokens = llama.exact_n = n
        llama._requires_eval = True  # the logits belong to another prompt


_CLASS: Any = None


def llama_with_states() -> Any:
    """`llama_cpp.Llama` that evaluates prompts in aligned blocks and first consults its `kv_states`; build it
    with n_batch = n_ubatch = BLOCK (imported on first use)."""
    global _CLASS
    if _CLASS is None:
        from llama_cpp import Llama

        class StatefulLlama(Llama):  # type: ignore[misc]
            kv_states: KvStates | None = None
            exact_n = 0  # leading tokens of the KV cache that were evaluated as whole aligned blocks
            prompt_reused = 0  # prompt tokens of the last generation that were not evaluated again

            def generate(self, tokens: Any, *args: Any, **kwargs: Any) -> Any:
                want = np.asarray(tokens, dtype=np.intc)
                if self.kv_states is not None and len(want):
                    self.kv_states.before(self, want)
                exact = min(int(self.n_tokens), int(self.exact_n))
                held = np.asarray(self.input_ids[:exact], dtype=np.intc)
                keep = reusable(common_prefix(held, want), exact, len(want))
                if keep < self.n_tokens:  # the library then evaluates from `keep` on, in aligned blocks
                    self._ctx.kv_cache_seq_rm(-1, keep, -1)
                    self.n_tokens = keep
                self.prompt_reused = keep
                self.exact_n = (len(want) // BLOCK) * BLOCK
                return super().generate(tokens, *args, **kwargs)

        _CLASS = StatefulLlama
    return _CLASS
