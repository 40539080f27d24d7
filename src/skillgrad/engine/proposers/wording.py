"""How a worked example is asked (a proposer helper): without the opening that every training request of the step shares.

When every training request opens with the same words ("Review this PR: ...", "Write a push notification: ..."),
those words tell one task from another in nothing; they are how the data set was written. A 135M student that
sees every worked example asked that way ties the demonstrated form to that opening: on requests worded
otherwise ("Can you look at this change? ...") it dropped sections it wrote after "Review this PR:". Measured on
the review-sections suite skill with the same three verified examples (held-out, embedded SmolLM2-135M): asked
"Review this PR: <change>" 0.40, asked "<change>" 0.90; the hand-written example asked in a third wording, 1.00.

So when at least `MIN_TASKS` requests of the step share an opening that ends a sentence or a label (`:`, `?`, `.`,
`!`) on their first line and each keeps 3+ words after it, the examples are asked both ways in turn: the whole
request, and the part after the shared opening (capitalised); see `Wordings`. The reply is verified on the whole
task, as before. `asks` tells
whether a worked example (so asked) is a given task's, for the stages that leave a task's own example out.
Pure functions: no I/O, no model.
"""

from __future__ import annotations

from skillgrad.engine.proposers.text import norm_text

MIN_TASKS = 4  # fewer requests sharing an opening is a coincidence, not how the data are written
MIN_REST_WORDS = 3
_ENDS = (":", "?", ".", "!")


def shared_opening(questions: list[str]) -> str:
    """The words every request opens with, up to the last that ends a sentence or a label, on their first
    lines; '' when fewer than `MIN_TASKS` distinct requests, no such opening, or a request with < 3 words after it."""
    firsts = list(dict.fromkeys(" ".join(q.strip().splitlines()[0].split()) for q in questions if q.strip()))
    if len(firsts) < MIN_TASKS:
        return ""
    words = [f.split() for f in firsts]
    common = 0
    while all(len(w) > common for w in words) and len({w[common] for w in words}) == 1:
        common += 1
    while common and not words[0][common - 1].endswith(_ENDS):
        common -= 1
    if not common or any(len(w) - common < MIN_REST_WORDS for w in words):
        return ""
    return " ".join(words[0][:common])


def example_request(question: str, opening: str) -> str:
    """`question` as a worked example asks it: without `opening` (capitalised), or unchanged."""
    q = question.strip()
    if not opening or not norm_text(q).startswith(norm_text(opening) + " "):
        return q
    rest = q.split(None, len(opening.split()))[-1]
    return rest[:1].upper() + rest[1:]


class Wordings:
    """Which way each new example is asked: the wording its skill's examples hold fewer of, with the shared opening
    or without (a tie: without). Examples asked only without it failed where requests keep it: json-triage's
    validation requests open with "Triage:" like its training ones, and with every example asked without it the
    student named "triage" as the component on 3 of 6 (validation 0.50); asked both ways, 6 of 6 (1.00), and
    review-sections' held-out stayed at 0.90."""

    def __init__(self, opening: str, questions: list[str]) -> None:
        self.opening = opening
        with_it = sum(bool(opening) and norm_text(q).startswith(norm_text(opening) + " ") for q in questions)
        self.counts = [with_it, len(questions) - with_it]  # [asked with the opening, without]

    def ask(self, question: str) -> str:
        """`question` as the next example asks it (and counted)."""
        if not self.opening or example_request(question, self.opening) == question.strip():
            return question.strip()
        keep = self.counts[0] < self.counts[1]
        self.counts[0 if keep else 1] += 1
        return question.strip() if keep else example_request(question, self.opening)


def asks(task: str, example_question: str) -> bool:
    """Whether a worked example asked `example_question` is task `task`'s: the same request, or its end after a
    shared opening (3+ words after a sentence or a label end)."""
    t, e = norm_text(task), norm_text(example_question)
    if not e:
        return False
    if t == e:
        return True
    head = t[:-len(e)].rstrip() if t.endswith(" " + e) else ""
    return len(e.split()) >= MIN_REST_WORDS and head.endswith(_ENDS)
