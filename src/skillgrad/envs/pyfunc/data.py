"""In-process examples and a metric callable, as DSPy and GEPA users hold them, turned into items and scores.

An example is a mapping (a `dspy.Example` works through its `toDict()`), or a plain string taken as the input.
Its input is the first of INPUT_KEYS it has; its expected answer (shown to the teacher) the first of GOLD_KEYS.
A metric is called `metric(example, reply)` with the example as the caller gave it and returns a score in [0, 1],
or a score and feedback text: `(score, "feedback")`, `{"score": s, "feedback": "..."}`, or an object with
`.score` and `.feedback` (as GEPA's feedback metrics return).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from skillgrad.envs.base import Item
from skillgrad.errors import UsageError

INPUT_KEYS = ("input", "question", "prompt", "query", "task")
GOLD_KEYS = ("answer", "gold", "expected", "output", "label", "target")
SETS = {"train": "trainset", "val": "valset", "test": "testset"}


def as_mapping(example: Any, where: str) -> dict[str, Any]:
    if isinstance(example, str):
        return {"input": example}
    if isinstance(example, Mapping):
        return dict(example)
    to_dict = getattr(example, "toDict", None)  # dspy.Example
    if callable(to_dict):
        return dict(to_dict())
    raise UsageError(f"{where}: an example must be a dict like {{'input': ..., 'answer': ...}} or a string, "
                     f"not {type(example).__name__}")


def to_item(example: Any, split: str, index: int) -> Item:
    where = f"{SETS[split]}[{index}]"
    record = as_mapping(example, where)
    key = next((k for k in INPUT_KEYS if record.get(k) not in (None, "")), None)
    if key is None:
        raise UsageError(f"{where}: no input field; give each example one of {', '.join(INPUT_KEYS)} "
                         f"(it has: {', '.join(map(str, record)) or 'nothing'})")
    gold_key = next((k for k in GOLD_KEYS if k in record), None)
    return Item(id=str(record.get("id", f"{split}-{index}")), inputs={"question": str(record[key])},
                gold=record[gold_key] if gold_key else None, task_type=str(record.get("task_type", "default")))


def fingerprint(data: Mapping[str, Sequence[Any]]) -> str:
    """A short digest of every example of every split (order included): a resumed run checks it."""
    canon = {split: [as_mapping(e, f"{SETS[split]}[{i}]") for i, e in enumerate(data.get(split, ()))]
             for split in SETS}
    text = json.dumps(canon, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def metric_name(metric: Callable[..., Any]) -> str:
    module = getattr(metric, "__module__", "") or ""
    name = getattr(metric, "__qualname__", "") or type(metric).__name__
    return f"{module}.{name}" if module and module != "__main__" else name


def read_score(value: Any, name: str) -> tuple[float, str]:
    """(score, feedback) from what a metric returned; a ValueError naming the metric for anything else."""
    feedback: Any = ""
    if isinstance(value, Mapping):
        score, feedback = value.get("score"), value.get("feedback", "")
    elif isinstance(value, tuple) and len(value) == 2:
        score, feedback = value
    elif hasattr(value, "score"):
        score, feedback = value.score, getattr(value, "feedback", "")
    else:
        score = value
    if isinstance(score, bool):
        score = float(score)
    if not isinstance(score, int | float) or math.isnan(score) or not 0.0 <= score <= 1.0:
        raise ValueError(f"metric {name} returned {value!r}; return a score in [0, 1], (score, feedback) or "
                         "{'score': s, 'feedback': text}")
    return float(score), "" if feedback is None else str(feedback)
