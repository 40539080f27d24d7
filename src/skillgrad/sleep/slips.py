"""Typing slips in the closed-class words the miner keys on, mended before a message is read.

People type corrections fast, and the modals, negations, pronouns and wish verbs that statement_forms.py and
directives.py key on arrive misspelt: "There shoud be a way to add products" (real_preferences_fresh4.json), "i
shold publish" (_fresh2.json, _fresh3.json), "plese order the configuraiton" (_fresh5.json, _fresh7.json), "liek
this" (_fresh.json, _fresh6.json), "jsut", "wiht", "ahve", "befoer", "wether" (two people each), "i wnat
to use", "we shodu alos have" (_fresh8.json). A user-turn word is read as a keyword when it is one slip from it: two
neighbouring letters swapped, or one letter after the first left out of a keyword of 5+ letters. Only the closed
list below is ever a target, never a content word, and the typed word has 4+ letters. A slip that is an English word
or a common name of its own is left as typed: one of a word left off the list because its slips are words
("where" -> "were", "there" -> "three", "from" -> "form", "every" -> "ever"), one of two keywords ("thse": these or
those), and the few listed in _WORDS ("could" -> "cold", "until" -> "util"). Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# The closed-class words the forms and the directive grammar key on (modals, negations, pronouns, rule adverbs,
# wish verbs); apostrophes dropped for matching.
KEYWORDS = (
    "should would could shall must need needs want wants prefer like dont doesnt didnt isnt arent wasnt wont cant "
    "shouldnt wouldnt couldnt never always also only just still again instead rather without with please what which "
    "this that these those their your have make sure because before after until unless whether into"
).split()
# Read only to find slips of two words ("ther": there or their, left alone); never a target.
_OTHERS = "where there every from".split()
# Slips of a keyword that are words or common names of their own.
_WORDS = frozenset("cold util sill pleas pease rater doest thee".split())
_APOSTROPHE = {"dont": "don't", "doesnt": "doesn't", "didnt": "didn't", "isnt": "isn't", "arent": "aren't",
               "wasnt": "wasn't", "wont": "won't", "cant": "can't", "shouldnt": "shouldn't", "wouldnt": "wouldn't",
               "couldnt": "couldn't"}
_TOKEN = re.compile(r"(?<![\w@./\\`-])[A-Za-z]+(?:['’][A-Za-z]+)?(?![\w@/\\`-]|\.\w)")


def _slips(word: str) -> set[str]:
    """The ways a keyword is mistyped by one slip: a neighbouring pair swapped, or a letter after the first dropped
    (5+ letters: a 4-letter keyword less one letter is too often a word of its own)."""
    out = {word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(len(word) - 1)}
    if len(word) >= 5:
        out |= {word[:i] + word[i + 1:] for i in range(1, len(word))}
    return {s for s in out if len(s) >= 4} - {word}


def _table(keywords: Iterable[str], others: Iterable[str]) -> dict[str, str]:
    """Each slip of one keyword only, to that keyword."""
    seen: dict[str, set[str]] = {}
    for k in [*keywords, *others]:
        for s in _slips(k):
            seen.setdefault(s, set()).add(k)
    known = {*keywords, *others, *_WORDS}
    return {s: k for s, (k, *more) in seen.items() if not more and s not in known and k in keywords}


_MEND = _table(KEYWORDS, _OTHERS)


def _cased(typed: str, word: str) -> str:
    word = _APOSTROPHE.get(word, word)
    if typed.isupper():
        return word.upper()
    return word[:1].upper() + word[1:] if typed[:1].isupper() else word


def mend(text: str) -> str:
    """The text with each typed keyword slip read as the keyword ("There shoud be" -> "There should be"); names,
    paths and identifiers (a word joined to "@", "/", "_", "-", "." or a backtick) are left as typed."""
    def one(m: re.Match[str]) -> str:
        typed = m.group(0)
        key = typed.lower().replace("'", "").replace("’", "")
        return _cased(typed, _MEND[key]) if key in _MEND else typed
    return _TOKEN.sub(one, text)


def unmend(words: str, original: str) -> str:
    """A statement's words read from `mend(original)` as the user typed them: each mended keyword back to its slip,
    where the user never typed the keyword itself in the message (then which one was the slip is unknown)."""
    for m in _TOKEN.finditer(original):
        typed = m.group(0)
        key = typed.lower().replace("'", "").replace("’", "")
        if key in _MEND:
            fixed = _cased(typed, _MEND[key])
            if not re.search(rf"(?<![\w'’]){re.escape(fixed)}(?![\w'’])", original):
                words = re.sub(rf"(?<![\w'’]){re.escape(fixed)}(?![\w'’])", typed.replace("\\", r"\\"), words, count=1)
    return words
