"""A task's checks as a `ReplyContract` (envs/base.py): what a passing reply must contain, as data.

The engine reads this instead of the checks' feedback wording (DESIGN.md section 10). Each check adds what it
knows: `contains` a required text, `not_contains` and a negative lookahead a forbidden one, a section a label that
leads a line, a tool call a form to fill in, `max_chars` a limit, a regex its literal runs (at `\\A` the opening,
at a line start a label, before `\\Z` the ending) and its literal alternatives (`(low|medium|high)`) a group of
which a reply holds one. A check op this module does not know adds nothing: the contract states less, never
something wrong.
"""

from __future__ import annotations

import dataclasses
import re
import re._constants as _C  # the regex parser's opcodes
import re._parser as _sre
from collections.abc import Sequence
from typing import Any

from skillgrad.envs.base import Item, ReplyContract
from skillgrad.envs.tasks.checks import Check, regex_literals, tool_call_text

_GOLD_OPS = ("equals", "one_of", "fact")  # content checks: the value itself is the task's answer


def item_contract(item: Item) -> ReplyContract:
    """The contract of a `tasks` item (its judge is in `item.meta["judge"]`)."""
    from skillgrad.envs.tasks.records import Judge

    judge = Judge.model_validate(item.meta["judge"])
    c = task_contract(judge.kind, judge.checks, judge.rubric, judge.describe())
    return dataclasses.replace(c, reference=judge.reference.strip()) if judge.reference.strip() else c


def task_contract(kind: str, checks: Sequence[Check], rubric: str, describe: str) -> ReplyContract:
    """The contract of one task's judge (`describe`: the requirement as the teacher reads it)."""
    if kind != "rule":
        return ReplyContract(checker=tuple(t for t in (rubric, describe) if t.strip()))
    parts: dict[str, list[Any]] = {k: [] for k in ("required", "forbidden", "labels", "forms", "one_of", "gold",
                                                   "patterns")}
    starts = ends = ""
    limit = 0
    for c in checks:
        if c.op == "contains":
            parts["required"].append(c.arg)
        elif c.op == "not_contains":
            parts["forbidden"].append(c.arg)
        elif c.op in ("section_present", "section_contains"):
            parts["labels"].append(c.arg)
            if c.value:
                parts["required"].append(c.value)
        elif c.op == "tool_called":
            parts["forms"].append(tool_call_text(c.arg, c.key))
        elif c.op == "max_chars":
            limit = min(limit or int(c.arg), int(c.arg))
        elif c.op == "regex":
            parts["patterns"].append(c.arg)
            r = regex_parts(c.arg)
            starts, ends = starts or r["starts_with"], ends or r["ends_with"]
            for k in ("required", "forbidden", "labels", "one_of"):
                parts[k] += r[k]
        elif c.op in _GOLD_OPS:  # content checks (a gold value); their exact fields belong to checks.py
            parts["gold"] += [str(v) for v in (c.values or [c.arg]) if str(v).strip()]
            parts["forbidden"] += [w for w in c.wrong if w.strip()]  # a fact's contradicting values
    checker = (describe, *(f"the reply must be one that {c.describe()}" for c in checks))
    return ReplyContract(
        required=_uniq(x for x in parts["required"] if x not in (starts, ends) and x not in parts["labels"]),
        forbidden=_uniq(parts["forbidden"]), starts_with=starts, ends_with=ends, labels=_uniq(parts["labels"]),
        forms=_uniq(parts["forms"]), one_of=tuple(dict.fromkeys(parts["one_of"])), gold=_uniq(parts["gold"]),
        max_chars=limit, checker=_uniq(checker), patterns=_uniq(parts["patterns"]))


def _uniq(xs: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(x for x in xs if str(x).strip()))


def regex_parts(pattern: str) -> dict[str, Any]:
    r"""What a regex requires, as contract parts: `\ATL;DR: \S` -> starts_with 'TL;DR: '; `^1\. ` -> label '1. ';
    `OK\s*\Z` -> ends_with 'OK'; `"severity": "(low|high)"` -> required '"severity": "' and '"', one_of
    ('low', 'high'); `\A(?!.*\bnpm\b)` -> forbidden 'npm'."""
    out: dict[str, Any] = {"required": [], "forbidden": [], "labels": [], "one_of": [], "starts_with": "",
                           "ends_with": ""}
    try:
        parsed = list(_sre.parse(pattern))
    except (re.error, RecursionError, OverflowError):
        return out
    if len(parsed) == 2 and parsed[0] == (_C.AT, _C.AT_BEGINNING_STRING) and parsed[1][0] is _C.ASSERT_NOT:
        body = list(parsed[1][1][1])
        if body and body[0][0] in (_C.MAX_REPEAT, _C.MIN_REPEAT) and body[0][1][0] == 0:  # `.*`: anywhere
            out["forbidden"] = [t for t in regex_literals_of(body[1:]) if t.strip()]
        return out
    runs = regex_literals(pattern)
    out["required"] = runs
    lead = next((p for p in parsed[1:] if not _spacing_repeat(p)), None)  # `^\s*Summary:`: past the spacing
    if runs and parsed[0][0] is _C.AT and lead is not None and lead[0] is _C.LITERAL:
        if parsed[0][1] is _C.AT_BEGINNING_STRING:
            out["starts_with"] = runs[0]
        elif parsed[0][1] is _C.AT_BEGINNING:  # `^` (the checks run with re.MULTILINE): a line's start
            out["labels"] = [runs[0]]
    tail = [p for p in parsed if not _spacing_repeat(p)]
    if runs and len(tail) > 1 and tail[-1][0] is _C.AT and tail[-1][1] in (_C.AT_END, _C.AT_END_STRING) \
            and tail[-2][0] is _C.LITERAL:
        out["ends_with"] = runs[-1]
    out["one_of"] = _alternatives(parsed)
    return out


def regex_literals_of(parsed: list[Any]) -> list[str]:
    out, run = [], ""
    for op, av in parsed:
        if op is _C.LITERAL:
            run += chr(av)
            continue
        if run:
            out.append(run)
        run = ""
    return [*out, run] if run else out


def _spacing_repeat(piece: Any) -> bool:
    op, av = piece
    return op in (_C.MAX_REPEAT, _C.MIN_REPEAT) and av[0] == 0


def _alternatives(parsed: list[Any]) -> list[tuple[str, ...]]:
    """The groups of literal alternatives in a parsed regex (`(low|medium|high)`, `[xy]`)."""
    out: list[tuple[str, ...]] = []
    for op, av in parsed:
        if op is _C.SUBPATTERN:
            out += _alternatives(list(av[-1]))
        elif op is _C.BRANCH:
            alts = [regex_literals_of(list(b)) for b in av[1]]
            if all(len(a) == 1 and len(a[0]) == len(b) for a, b in zip(alts, av[1], strict=True)):
                out.append(tuple(a[0] for a in alts))
        elif op is _C.IN and av and all(o is _C.LITERAL for o, _ in av) and len(av) > 1:
            out.append(tuple(chr(v) for _, v in av))
    return out
