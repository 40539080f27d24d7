"""Token counting: the model's own tokenizer where one can be had, else a documented estimate.

- `local`: the GGUF's own vocabulary (the provider's `count_tokens`).
- OpenAI / Azure models that tiktoken knows: tiktoken's encoding. Its encoding files are downloaded on
  first use and cached; when that is impossible (offline, no cache) the estimate is used and the
  counter's name says why.
- Anthropic: the API's `count_tokens` endpoint, called twice on first use to calibrate tokens per
  character for the model (a network call per count would be far too slow for prompt trimming).
- Anything else: `ESTIMATE`, ceil(characters / 4) (OpenAI's rule of thumb for English text).

The counter's name goes into events (`token_counter`) and summary.json, so a report says which was used.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from skillgrad.models.base import Request

ESTIMATE = "estimate: ceil(chars / 4)"
TIKTOKEN_LOAD_TIMEOUT_S = 10.0  # tiktoken's download has no timeout of its own
# OpenAI's documented chat framing: a few tokens per message plus the reply primer.
PER_MESSAGE_TOKENS = 4
REPLY_PRIMER_TOKENS = 3


def estimate(text: str) -> int:
    return math.ceil(len(text) / 4)


@dataclass(frozen=True)
class TokenCounter:
    name: str
    count: Callable[[str], int]


ESTIMATOR = TokenCounter(ESTIMATE, estimate)


def tiktoken_counter(model: str, *, timeout_s: float = TIKTOKEN_LOAD_TIMEOUT_S) -> TokenCounter:
    """tiktoken's encoding for an OpenAI model name, or the estimate (named with the reason)."""
    try:
        import tiktoken
        from tiktoken.model import encoding_name_for_model
    except ImportError:
        return TokenCounter(f"{ESTIMATE} (tiktoken not installed)", estimate)
    try:
        enc_name = encoding_name_for_model(model)
    except KeyError:
        return TokenCounter(f"{ESTIMATE} (tiktoken does not know model {model!r})", estimate)
    box: dict[str, Any] = {}

    def load() -> None:
        try:
            box["enc"] = tiktoken.get_encoding(enc_name)
        except Exception as e:  # noqa: BLE001 - any download/cache failure means "not available"
            box["error"] = f"{type(e).__name__}"

    worker = threading.Thread(target=load, name="tiktoken-load", daemon=True)
    worker.start()
    worker.join(timeout_s)
    enc = box.get("enc")
    if enc is None:
        why = box.get("error") or f"no answer in {timeout_s:g} s"
        return TokenCounter(f"{ESTIMATE} (tiktoken {enc_name} encoding unavailable: {why}; "
                            "it is downloaded on first use)", estimate)
    return TokenCounter(f"tiktoken {enc_name}", lambda text: len(enc.encode(text, disallowed_special=())))


CALIBRATION_TEXT = (
    "Skills are markdown documents that an agent reads as its instructions. A training step scores the "
    "student on a batch of tasks, asks the teacher why tasks failed, and applies at most a few edits. "
    'JSON: {"op": "insert", "section": "## Facts", "text": "The capital of Veloria is Marn."} 12345.'
)


def calibrated_counter(name: str, count_remote: Callable[[str], int]) -> TokenCounter:
    """Tokens per character measured once with `count_remote` (framing overhead subtracted)."""
    short = "a"
    n_long, n_short = count_remote(CALIBRATION_TEXT), count_remote(short)
    per_char = max(n_long - n_short, 1) / (len(CALIBRATION_TEXT) - len(short))
    return TokenCounter(f"{name} (calibrated: {per_char:.3f} tokens/char)",
                        lambda text: math.ceil(len(text) * per_char))


def message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def request_tokens(req: Request, count: Callable[[str], int] = estimate) -> int:
    """Upper-bound estimate of a request's tokens: prompt (with chat framing) plus the reply cap."""
    prompt = sum(count(message_text(m.get("content"))) + PER_MESSAGE_TOKENS for m in req.messages)
    return prompt + REPLY_PRIMER_TOKENS + req.max_tokens
