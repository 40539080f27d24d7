"""The one text normaliser of the proposers and the Goodhart guard: how replies, requests and examples compare.

Every comparison (a reply that repeats another, restates its request, echoes the skill, was refused before) uses
these functions, so that two filters never disagree on what "the same words" means. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"[a-z0-9]+")
_ALPHA = re.compile(r"[A-Za-z]{3,}")
_STEM_WORD = re.compile(r"[a-z][a-z_]{2,}")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# Words that say nothing about a task's subject (a subject is made of the others).
STOP = frozenset("""a an the this that these those my our your his her its their me we you i he she it they
him them us of in on at to for from by with about into over after before under than and or but if then so as
is are was were be been being do does did done have has had can could will would should shall may might must
please just now all any some every each no not only also very too quick one two again still need needs want
wants like get got give make let new old more most other same such there here what which who whom whose when
where why how""".split())


def norm_text(s: str) -> str:
    """Whitespace collapsed, case folded: how requests, examples and refused replies are compared as wholes."""
    return " ".join(s.split()).casefold()


def words(text: str) -> list[str]:
    """The lower-case words (letters and digits) of `text`, in order."""
    return _WORD.findall(text.casefold())


def norm_words(text: str) -> str:
    """`text` as its words joined by single spaces (punctuation and case gone)."""
    return " ".join(words(text))


def without(text: str, fixed: Iterable[str]) -> str:
    """`text`'s words without the fixed texts a form requires (a `TL;DR:` label, a refusal sentence), longest first:
    what the reply says of its own."""
    out = f" {norm_words(text)} "
    for lit in sorted({norm_words(x) for x in fixed if x.strip()}, key=len, reverse=True):
        if lit:
            out = re.sub(rf"(?<= ){re.escape(lit)}(?= )", " ", out)
    return " ".join(out.split())


def alpha_words(text: str) -> list[str]:
    """Words of 3+ letters: what "says something" counts."""
    return _ALPHA.findall(text)


def stems(text: str, n: int = 5) -> set[str]:
    """The first `n` letters of each word of 3+ letters (underscores kept): "config" and "configuration", "report"
    and "reports" are one stem, so a reply's own words are counted apart from inflections of its request's."""
    return {w[:n] for w in _STEM_WORD.findall(text.casefold())}


def sentences(text: str) -> list[str]:
    return [p.strip() for p in _SENTENCE_END.split(text.strip().replace("\n", " ")) if p.strip()]


def subject_words(text: str) -> set[str]:
    """The words of `text` that can name a subject (3+ characters, not a STOP word)."""
    return {w for w in words(text.replace("'", "")) if len(w) > 2 and w not in STOP}


def overlap(a: set[str], b: set[str]) -> float:
    """Jaccard overlap of two word sets."""
    return len(a & b) / len(a | b) if a | b else 0.0


def word_runs(norm: str, n: int) -> set[str]:
    """The runs of `n` consecutive words of a normalised text."""
    w = norm.split()
    return {" ".join(w[i:i + n]) for i in range(len(w) - n + 1)}
