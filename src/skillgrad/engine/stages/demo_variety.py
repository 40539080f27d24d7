"""Demonstrations that vary with their task: a verified reply that repeats another example's reply is not taken.

A 135M student copies the reply of its worked examples, not their idea. When two examples already say the same
thing about different tasks ("Hey there, I'm so glad you're interested in Seattle!" / "... in trail
conditions!"), the student answers every task with that sentence, and the Goodhart guard (engine/goodhart.py)
then blocks the candidate at the gate: in the suite, push-length's steps 2-4 were all blocked so ("6 of 6 replies
are near-duplicates"), after the demonstrate stage had picked the shortest passing replies, which were the
template. The measure is the guard's: the share of words two replies share beyond the text every reply must
contain (`Trajectory.extras["required_text"]`: section labels, a fixed sentence), against the share their two
tasks share.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from skillgrad.engine.goodhart import MIN_OWN_WORDS, MORE_ALIKE_THAN_TASKS, NEAR_DUPLICATE

_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str, required: Iterable[str] = ()) -> set[str]:
    low = text.casefold()
    for lit in sorted({r.casefold() for r in required if r.strip()}, key=len, reverse=True):
        low = low.replace(lit, " ")
    return set(_WORD.findall(low))


def _overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def repeats(question: str, reply: str, shown: Iterable[tuple[str, str]], required: Iterable[str] = ()) -> str:
    """The reply among `shown` (question, reply) pairs that `reply` repeats for a different task, or ''."""
    required = list(required)
    own, q = _words(reply, required), _words(question)
    if len(own) < MIN_OWN_WORDS:  # too few words of its own to call it a repeat (the guard's short-reply rule)
        return ""
    for sq, sr in shown:
        other = _words(sr, required)
        if len(other) < MIN_OWN_WORDS or _words(sq) == q:
            continue
        o = _overlap(own, other)
        if o >= NEAR_DUPLICATE and o >= _overlap(q, _words(sq)) + MORE_ALIKE_THAN_TASKS:
            return sr
    return ""


def required_texts(trajs: Iterable[object]) -> list[str]:
    """The literal texts the environment says every reply of these tasks must contain."""
    out: list[str] = []
    for t in trajs:
        out += [str(x) for x in (getattr(t, "extras", None) or {}).get("required_text", []) or []]
    return list(dict.fromkeys(out))
