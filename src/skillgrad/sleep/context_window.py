"""How much a local model can read: its trained context length and its tokenizer, read from the GGUF.

A night used to run the embedded model at a fixed 4096 tokens, so a real-size CLAUDE.md made every replay
fail with "does not fit the context window". The night now runs a local role at the model's own context
(SmolLM2-135M: 8192) and measures the memory file with the model's tokenizer (`vocab_only`: no weights).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from skillgrad.models.providers.local import resolve_gguf

DEFAULT_CONTEXT = 4096   # when the file does not say
MAX_CONTEXT = 32768      # a KV cache larger than this costs more memory than a night should take


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """llama.cpp warns on stderr (file descriptor 2) that a vocab-only load has no trained context; that line
    would land in every `sleep` command's output."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


@lru_cache(maxsize=4)
def _vocab(path: str) -> Any:
    from llama_cpp import Llama  # heavy import, only for a local role

    with _quiet_stderr():
        return Llama(model_path=path, vocab_only=True, verbose=False)


def local_window(model: str, role: str) -> tuple[int, Callable[[str], int]]:
    """(context tokens, token counter) of a local model ('' = the embedded one)."""
    llama = _vocab(str(resolve_gguf(model, role)))
    meta = llama.metadata or {}
    ctx = next((int(v) for k, v in meta.items() if k.endswith(".context_length") and str(v).isdigit()), 0)

    def count(text: str) -> int:
        return len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    return min(ctx or DEFAULT_CONTEXT, MAX_CONTEXT), count
