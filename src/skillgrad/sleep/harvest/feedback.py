"""Feedback signals read from the user's next prompt: did the previous answer land?

A prompt that follows an answer often says how it went ("thanks, works", "still failing", "no, I meant ...").
The phrase lists are English defaults; `HarvestSettings` extends them. Correction is checked first, because
"no, use X instead" is more specific than a bare negative, and negative before positive because "thanks but it
still fails" is not praise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skillgrad.sleep.harvest.digest import FeedbackKind
from skillgrad.sleep.harvest.settings import HarvestSettings

POSITIVE = ("thanks", "thank you", "thx", "perfect", "great", "awesome", "excellent", "looks good", "lgtm",
            "works now", "that works", "it works", "working now", "nice", "well done", "exactly", "ship it")
NEGATIVE = ("doesn't work", "does not work", "didn't work", "did not work", "not working", "still broken",
            "still failing", "still fails", "still not", "still get", "still getting", "broken", "that's wrong",
            "that is wrong", "is wrong", "incorrect", "fails", "failed", "error", "you broke", "regression",
            "worse", "useless", "not what i", "nope")
CORRECTION = ("no,", "no.", "no ", "actually", "instead", "i meant", "i said", "i asked", "that's not",
              "that is not", "not that", "don't ", "do not ", "stop ", "you should have", "should be", "rather than",
              "why did you", "revert", "undo", "wrong file", "wrong approach")

# Only the opening of a prompt carries the reaction; later text is usually the next request.
_HEAD = 160


@dataclass(frozen=True)
class FeedbackPhrases:
    positive: tuple[str, ...]
    negative: tuple[str, ...]
    correction: tuple[str, ...]

    @classmethod
    def from_settings(cls, settings: HarvestSettings) -> FeedbackPhrases:
        def norm(xs: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(x.lower() for x in xs if x.strip())
        return cls(POSITIVE + norm(settings.positive_phrases), NEGATIVE + norm(settings.negative_phrases),
                   CORRECTION + norm(settings.correction_phrases))


def _has(head: str, phrases: tuple[str, ...]) -> bool:
    for p in phrases:
        # word-start boundary so "no " does not fire inside "piano ", "error" not inside "terror"
        if re.search(r"(?<![a-z0-9])" + re.escape(p), head):
            return True
    return False


def classify(prompt: str, phrases: FeedbackPhrases) -> FeedbackKind | None:
    """The feedback kind a follow-up prompt carries about the previous answer, or None."""
    head = " ".join(prompt.lower().split())[:_HEAD]
    if not head:
        return None
    if _has(head, phrases.correction):
        return "correction"
    if _has(head, phrases.negative):
        return "negative"
    if _has(head, phrases.positive):
        return "positive"
    return None
