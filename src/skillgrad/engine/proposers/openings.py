"""The small student's stock opening, cut from its replies before they become worked examples (small-student
strategy only: engine/proposers/sources.py).

A small student opens most replies the same way whatever the task ("Hey everyone, it's a great ...", "I'm sorry for
any confusion."). Such an opening is its habit, not the task's content: an example that keeps it teaches every later
reply to open so, and the Goodhart guard then blocks the candidate as degenerate, or it lets through a skill whose
held-out replies are the template. Measured on the suite's push-length skill (engine defaults, 2026-11-26): every
example kept "Hey everyone, ..." or "Hey there, I'm so glad you're interested in ...", steps 2 and 3 were blocked
as near-duplicates, and all 10 held-out replies opened "Hey everyone, it's a great", 2 of them past the 140-character
limit (held-out 0.60). The one run that reached 1.00 had kept replies without it ("We just added a price drop on the
headlamp in your wishlist.").

An opening is stock when at least STOCK_SHARE of a step's replies (STOCK_MIN of them, to different tasks) start with
the same STOCK_WORDS words, at the reply's start or right after its first clause. A reply that opens so is offered
as an example with its first sentence (or, for a one-sentence reply, its first clause) cut, when that cut holds none
of the text the task requires (a `TL;DR:` label or `1.` is the form, not a habit) and the rest still says something;
the environment's scorer decides whether the rest passes. A reply that keeps a stock opening is no example (the
task's expected answer excepted). Replies that open with JSON, code, a list or a required text have no stock
opening, nor do replies whose opening words are the request's own ("This PR ..." for "Review this PR: ...").

A capable teacher's correction (corrections.py) may share the habit's first words and still be the task's reply: its
clause that holds them names the task ("I'm sorry your book arrived with water damage." for "The book arrived with
water damage."), where the 135M student's never does ("I'm sorry for any confusion.", "I'm sorry for your loss,").
`names_task` tells the two apart; the small student's own replies are not offered that way out (its "Hey there, I'm
so glad you're interested in the headlamp" names the task after its habit, and was the push-length template above).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from skillgrad.engine.proposers.text import alpha_words, subject_words, words

STOCK_WORDS = 2
# Subject words of the request that a clause must hold to name the task: one may be a coincidence ("order" in "I'm
# sorry for the delay with your order"); the two support-signoff corrections refused in the agent-teacher runs held
# 3 and 4, the 135M student's stock clauses in those runs none.
MIN_TASK_WORDS = 2
STOCK_SHARE = 0.2
STOCK_MIN = 3
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_CLAUSE_END = re.compile(r"(?<=[,;:!])\s+")
_ANY_END = re.compile(r"(?<=[.,;:!?])\s+")


def _key(text: str) -> tuple[str, ...]:
    return tuple(words(text.replace("'", ""))[:STOCK_WORDS])


def _prose_key(reply: str, required: Iterable[str] = ()) -> tuple[str, ...]:
    """The opening words of a reply that opens with prose ('()' for JSON, code, a list, or a text the task requires
    at the start: `TL;DR:`, `1.`, a fixed refusal sentence are the form, not a habit)."""
    reply = reply.strip()
    if not reply[:1].isalpha() or any(r.strip() and reply.casefold().startswith(r.strip().casefold()) for r in required):
        return ()
    k = _key(reply)
    return k if len(k) == STOCK_WORDS else ()


def _openings(reply: str, required: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A prose reply's opening words, and those right after its first clause (each '()' when there are none)."""
    first = _prose_key(reply, required)
    if not first:
        return (), ()
    parts = _CLAUSE_END.split(reply.strip(), maxsplit=1)
    return first, _prose_key(parts[1], required) if len(parts) == 2 else ()


def stock_openings(replies: Sequence[tuple[str, str]], required: Iterable[str] = ()) -> set[tuple[str, ...]]:
    """The openings (first STOCK_WORDS words) that at least STOCK_SHARE of the (task, reply) pairs share, for
    STOCK_MIN or more different tasks: at the start of the reply, or right after its first clause ("Hey there, I'm
    so glad you're interested in ...": both the greeting and what follows it are the habit)."""
    required = list(required)
    tasks: dict[tuple[str, ...], set[str]] = {}
    for q, reply in replies:
        asked = set(words(q.replace("'", "")))
        # an opening made of the request's own words names the task ("This PR ..." for "Review this PR: ..."):
        # capable replies open so on every task, and it is their subject, not a habit
        for k in set(_openings(reply, required)) - {()}:
            if not set(k) <= asked:
                tasks.setdefault(k, set()).add(q)
    floor = max(STOCK_MIN, STOCK_SHARE * len(replies))
    return {k for k, v in tasks.items() if len(v) >= floor}


def stock_opening(reply: str, stock: set[tuple[str, ...]], required: Iterable[str] = ()) -> str:
    """The stock opening `reply` starts with, or has right after its first clause ('' when none)."""
    first, second = _openings(reply, list(required))
    hit = first if first and first in stock else second if second and second in stock else ()
    return " ".join(hit)


def names_task(reply: str, stock: set[tuple[str, ...]], question: str, required: Iterable[str] = ()) -> bool:
    """Whether the clause of `reply` that holds its stock opening names the task: MIN_TASK_WORDS subject words of
    `question` in it, the stock words left out ("I'm sorry you received Emma instead of Dune." for "I received the
    wrong book, I ordered Dune and got Emma."). False when the reply has no stock opening."""
    first, second = _openings(reply, list(required))
    if first and first in stock:
        clause, key = reply.strip(), first
    elif second and second in stock:
        clause, key = _CLAUSE_END.split(reply.strip(), maxsplit=1)[1], second
    else:
        return False
    clause = _ANY_END.split(clause, maxsplit=1)[0]
    return len((subject_words(clause) - set(key)) & subject_words(question)) >= MIN_TASK_WORDS


def without_stock_opening(reply: str, stock: set[tuple[str, ...]], required: Iterable[str] = ()) -> str:
    """`reply` without its stock opening ('' when it has none, or when the cut would take a required text or leave
    fewer than 3 words or another stock opening): the first sentence when more follow, else the first clause."""
    reply, req = reply.strip(), [r for r in required if r.strip()]
    if not stock_opening(reply, stock, req):
        return ""
    for split in (_SENTENCE_END, _CLAUSE_END):
        parts = split.split(reply, maxsplit=1)
        if len(parts) < 2:
            continue
        head, rest = parts[0], parts[1].strip()
        if any(r.casefold() in head.casefold() for r in req) or len(alpha_words(rest)) < 3:
            continue
        if _key(rest) in stock:  # "Hey there, I'm so glad ...": the next clause is a habit too
            continue
        return rest[:1].upper() + rest[1:]
    return ""
