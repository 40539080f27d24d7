"""Content checks: what a reply must say that its request does not already say, so a restatement cannot pass.

- `equals` / `one_of`: a gold value (a label, a computed number, a transformed field), for the whole reply or, with
  `key`, for one field of the reply's JSON object. Compared as values: case, surrounding white space, quotes,
  backticks and a closing full stop are ignored; numbers compare as numbers (`"42"`, `42`, `42.0`, `1,200`).
- `fact`: a fact of the request the reply must carry correctly (a number, a name, a state), found as a whole token
  (`40` is not found in `140` or `40.5`), and none of the values that contradict it (`wrong`: `60` where 40 of 60
  sites are live, `finished` for a job still running); with `key`, in that field of the JSON object.
"""

from __future__ import annotations

import json
import re
from typing import Any

_GROUPED = re.compile(r"(?<=\d),(?=\d{3}\b)")  # 1,200 -> 1200
_EDGE_QUOTES = "\"'`“”‘’"
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def norm_value(text: str) -> str:
    """A value as it compares: lower case, single spaces, no surrounding quotes or closing full stop."""
    t = " ".join(_GROUPED.sub("", str(text)).split()).casefold()
    for _ in range(2):
        t = t.strip().strip(_EDGE_QUOTES).strip().rstrip(".").strip()
    return t


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def same_value(got: str, want: str) -> bool:
    a, b = norm_value(got), norm_value(want)
    if a == b:
        return True
    x, y = _number(a), _number(b)
    return x is not None and y is not None and x == y


def json_object(reply: str) -> dict[str, Any] | None:
    """The reply's JSON object: the first `{...}` that parses, inside a code fence or not; None when there is none."""
    decoder = json.JSONDecoder()
    for text in [*_FENCE.findall(reply), reply]:
        for m in re.finditer(r"\{", text):
            try:
                value, _ = decoder.raw_decode(text, m.start())
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    return None


def field_text(reply: str, key: str) -> str | None:
    """Field `key` of the reply's JSON object as text (a number or a list as its JSON); None when absent."""
    obj = json_object(reply)
    if obj is None or key not in obj or obj[key] is None:
        return None
    value = obj[key]
    return value if isinstance(value, str) else json.dumps(value)


def mentions(text: str, value: str) -> bool:
    """`value` as a whole token of `text` (case ignored, digit grouping ignored): `40` in "40 of 60", not in "140"."""
    want = " ".join(_GROUPED.sub("", value).split())
    if not want:
        return False
    pattern = r"(?<![\w.])" + re.escape(want).replace(r"\ ", r"\s+") + r"(?!\w|\.\d)"
    return re.search(pattern, _GROUPED.sub("", text), re.IGNORECASE) is not None


def target(reply: str, key: str) -> str | None:
    """What a content check reads: the whole reply, or the field `key` of its JSON object (None: no such field)."""
    return field_text(reply, key) if key else reply


def passes(op: str, reply: str, *, arg: str, key: str, values: list[str], wrong: list[str]) -> bool:
    got = target(reply, key)
    if got is None:
        return False
    if op == "equals":
        return same_value(got, arg)
    if op == "one_of":
        return any(same_value(got, v) for v in values)
    # fact
    return mentions(got, arg) and not any(mentions(got, w) for w in wrong)
