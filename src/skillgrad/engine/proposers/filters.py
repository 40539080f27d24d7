"""Every filter a proposed worked example passes before the environment's scorer sees it, in one place.

A proposer asks `Filters.why_not(t, reply, source)` ('' means the reply may go to the scorer) and, once the scorer
passed it, `Filters.repeat_why` (checked in task order, engine/proposers/corrections.py). What each filter stops:

For every student:
- a reply longer than `optimizer.max_example_chars` (with its request);
- a reply that carries the learned block's marker text (the system text echoed, not the task done);
- a reply that copies the scorer's own words or regexes (the contract's `checker` / `patterns`; engine/goodhart.py);
- a reply that repeats one of the skill's headings ("# Engineering status updates" opened every tldr-status reply);
- a reply that restates its request (engine/goodhart.py `restates_request`: push-length's
  `Q: The app now shows trail conditions ...` with the same words as its reply taught the student to hand requests
  back);
- a reply that was in a candidate the gate refused (a step whose skill did not change proposes the same again);
- a reply that repeats another example's reply for another task (a 135M student copies the reply, not the idea;
  the guard's near-duplicate measure, beyond the texts the tasks require).
The task's gold answer is exempt from the request, refusal and opening filters: it is the one reply the data
call right.

For a small student only (measured on the 135M model; a capable model's replies misfired on them, issue 31):
- a reply that talks about replies or the task instead of doing it ("The response must contain ...");
- a reply that stops after a lead-in (cut at the reply cap);
- a reply that keeps the student's stock opening (engine/proposers/openings.py), unless it is a capable teacher's
  correction whose clause with those words names the task ("I'm sorry your book arrived with water damage."; the
  agent-teacher runs of support-signoff refused two such corrections as the student's "I'm sorry" habit);
- a reply that keeps a wrong copy of a required phrase beside the right one ("I can help you with that" next to
  "I can't help with that").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from skillgrad.engine.goodhart import (
    MIN_OWN_WORDS,
    MORE_ALIKE_THAN_TASKS,
    NEAR_DUPLICATE,
    Guard,
    checker_text_hits,
    restates_request,
)
from skillgrad.engine.proposers.openings import names_task, stock_opening, stock_openings
from skillgrad.engine.proposers.text import norm_text, norm_words, overlap, without, words
from skillgrad.engine.proposers.wording import example_request
from skillgrad.envs.base import ReplyContract, Trajectory
from skillgrad.skill.examples import find_examples, split_examples

GOLD = "expected_answer"  # the source name of the task's gold answer as a reply
TEACHER = "teacher_correction"  # the source name of the teacher's own reply

# A reply that talks about replies ("The response must contain exactly 3 sections", "This is a fixed answer")
# describes the check instead of doing the task: the 135M student copied such a sentence into every reply (Sleep
# benchmark, benchmarks/sleep_sessions.py). Narrow on purpose: "The CI checks failed on the lint step" and "The
# request requires approval" are content (issue 31), so a check's verdict needs "the/all/every checks" and a
# request only "asks/wants". A bare "Check failed." ending a reply (a tldr-status correction, this round) is the
# verdict narrated, caught at a sentence start.
_ABOUT_REPLIES = re.compile(
    r"\b(?:the|a|your|this|each|every) (?:response|reply|answer|output)s? (?:must|should|has to|needs? to|is required)\b"
    r"|\bsections? named\b|\bfixed answer\b|(?:^|[.!?:]\s+|\b(?:the|all|every|each)\s+)checks? (?:failed|passed)\b|\bwhat was wrong\b"
    r"|\b(?:has|have|with) a line (?:that|with|starting|beginning|ending)\b|\bwith the prefix\b"
    r"|\bthe (?:task|question|request|user) (?:asks|asked|wants|wanted|is asking)\b"
    r"|\bthis is (?:a|an|the|my) (?:response|reply|answer)\b"
    r"|\bthis (?:response|reply) (?:is|was|does|did|has|will)\b"
    r"|\bthe assistant (?:replied|said|wrote)\b", re.IGNORECASE)
_MARKER = re.compile(r"SKILLGRAD\s*:\s*LEARNED", re.IGNORECASE)
# A reply cut off after announcing what comes ("Here's how:  1."): the small student reached its reply cap.
_DANGLING = re.compile(r":\s*(?:(?:\d+[.)]|[-*])\s*)?\Z")
_TOKEN = re.compile(r"[a-z0-9']+|\|")


def small_junk(reply: str, ends: str = "") -> str:
    """Why a small student's reply is no worked example whatever its score ('' when it may be one): it talks about
    replies instead of doing the task, or stops at a lead-in (`ends`: the text a passing reply ends with)."""
    if _ABOUT_REPLIES.search(reply):
        return "talks about the reply or the task instead of doing it"
    tail = reply.rstrip()
    if _DANGLING.search(tail) and not (ends.strip() and tail.endswith(ends.strip())):
        return "stops after announcing what comes (cut off at the reply cap)"
    return ""


def carries_marker(reply: str) -> bool:
    """The learned block's marker text ("## SKILLGRAD:LEARNED START") in a reply: the system text echoed."""
    return bool(_MARKER.search(reply))


def is_phrase(text: str) -> bool:
    """A required text that is a plain phrase of 3+ words ("I can't help with that"), not a label or a form."""
    return len(_TOKEN.findall(text.lower())) >= 3 and bool(re.fullmatch(r"[A-Za-z0-9' ,.!?-]+", text))


def near_variant(text: str, required: Iterable[str]) -> str:
    """A wrong copy of a required phrase of 3+ words in `text` ("I can help you with that" beside the required
    "I can't help with that"), or ''. Exact copies are left out, and so are forms."""
    low = text.lower()
    for q in required:
        if not is_phrase(q):
            continue
        target = _TOKEN.findall(q.lower())
        rest = _TOKEN.findall(low.replace(q.lower(), " | "))
        for size in (len(target) - 1, len(target), len(target) + 1):
            for i in range(len(rest) - size + 1):
                window = rest[i:i + size]
                if "|" not in window and window != target and SequenceMatcher(None, window, target).ratio() >= 0.7:
                    return " ".join(window)
    return ""


def repeats(question: str, reply: str, shown: Iterable[tuple[str, str]], fixed: Iterable[str] = ()) -> str:
    """The reply among `shown` (question, reply) pairs that `reply` repeats for a different task, or '': they share
    NEAR_DUPLICATE of their own words (beyond the texts the tasks require), MORE_ALIKE_THAN_TASKS more than the two
    tasks share (the Goodhart guard's measure)."""
    fixed = list(fixed)
    own, q = set(without(reply, fixed).split()), set(words(question))
    if len(own) < MIN_OWN_WORDS:  # too few words of its own to call it a repeat (the guard's short-reply rule)
        return ""
    for sq, sr in shown:
        other = set(without(sr, fixed).split())
        if len(other) < MIN_OWN_WORDS or set(words(sq)) == q:
            continue
        o = overlap(own, other)
        if o >= NEAR_DUPLICATE and o >= overlap(q, set(words(sq))) + MORE_ALIKE_THAN_TASKS:
            return sr
    return ""


def skill_headings(skill: str) -> list[str]:
    """The skill's headings of 2+ words outside its examples (normalised): a reply that repeats one echoes the
    system text. Headings only: a rule line the reply restates (a fact the skill holds) is what an example shows."""
    body, _ = split_examples(skill)
    lines = (norm_words(x) for x in body.splitlines() if x.lstrip().startswith("#"))
    return [x for x in lines if len(x.split()) >= 2]


@dataclass
class Filters:
    """The filters of one step's demonstrate stage (see the module text) and the examples shown so far."""

    skill_lines: list[str]
    shown: list[tuple[str, str]]  # (request, reply) of the skill's examples, then of this step's
    fixed: list[str]  # the texts the step's tasks require of every reply (their contracts' form)
    refused: dict[tuple[str, str], int]  # (item id, normalised reply) -> the step whose refused candidate held it
    opening: str  # the opening every request of the step shares (engine/proposers/wording.py)
    max_chars: int
    small: bool  # the small-student strategy's filters too
    stock: set[tuple[str, ...]] = field(default_factory=set)  # the student's stock openings (small student only)
    # the teacher writes beyond the small student (a context window over 4,096 tokens: corrections.py): its reply
    # that shares the habit's first words but names the task is no habit
    capable_teacher: bool = False

    @classmethod
    def for_step(cls, trajs: Sequence[Trajectory], skill: str, refused: dict[tuple[str, str], int] | None,
                 opening: str, *, small: bool, max_chars: int) -> Filters:
        fixed = list(dict.fromkeys(x for t in trajs if t.contract is not None for x in t.contract.fixed_texts()))
        stock = stock_openings([(t.question, t.answer) for t in trajs if t.answer.strip() and not t.env_error],
                               fixed) if small else set()
        return cls(skill_headings(skill), [(e.question, e.reply) for e in find_examples(skill)], fixed,
                   dict(refused or {}), opening, max_chars, small, stock)

    def why_not(self, t: Trajectory, reply: str, source: str) -> str:
        """Why `reply` may not be `t`'s worked example before scoring ('' when it may)."""
        c = t.contract or ReplyContract()
        gold = source == GOLD
        if len(t.question) + len(reply) > self.max_chars:
            return "longer than max_example_chars"
        if carries_marker(reply):
            return "carries the learned block's marker text"
        guard = Guard.build(checker_texts=c.checker, regexes=c.patterns, fixed_texts=c.fixed_texts())
        if hits := checker_text_hits(reply, guard):
            return hits[0]
        norm = norm_words(reply)
        if any(x in norm for x in self.skill_lines):
            return "repeats one of the skill's headings"
        if not gold and (why := self.again(t, reply)):
            return why
        if self.small:
            if why := small_junk(reply, c.ends_with):
                return why
            habit = "" if gold else stock_opening(reply, self.stock, c.fixed_texts())
            if habit and not (self.capable_teacher and source == TEACHER
                              and names_task(reply, self.stock, t.question, c.fixed_texts())):
                return (f"opens with the student's stock opening ({habit!r}, most replies of the step do): every "
                        "later reply would open so")
            if variant := near_variant(reply, c.fixed_texts()):
                return f"keeps a wrong copy of a required phrase ({variant!r})"
        return ""

    def again(self, t: Trajectory, reply: str) -> str:
        """Why `reply` was already refused for `t`, or restates its request ('' if neither)."""
        step = self.refused.get((t.item_id, norm_text(reply)))
        if step is not None:
            return f"was in step {step}'s candidate, which the gate refused"
        fixed = t.contract.fixed_texts() if t.contract is not None else ()
        asked = example_request(t.question, self.opening)
        if norm_words(reply) == norm_words(asked) or restates_request(reply, t.question, fixed):
            return "restates its request"
        return ""

    def repeat_why(self, t: Trajectory, reply: str) -> str:
        same = repeats(t.question, reply, self.shown, self.fixed)
        return f"repeats another example's reply for a different task ({' '.join(same.split())[:80]!r})" if same \
            else ""

    def show(self, t: Trajectory, reply: str) -> None:
        self.shown.append((t.question, reply))


def content_ok(reply: str, contract: ReplyContract | None) -> bool:
    """A reply carries the task's content where the contract states one (a gold value): a label put on the student's
    own reply is kept only then (issue 30)."""
    if contract is None or not contract.gold:
        return True
    low = reply.casefold()
    return any(g.casefold() in low for g in contract.gold)

