"""What a proposal says: the user's standing preferences, and only the worked examples that show one of them.

A night's engine run learns a block of worked examples on the night's tasks; staged as they are, they read as a
record of past tasks ("Q: Include grip in the brew install scripts ... A: ...") rather than what the user wants
going forward, and with the embedded 135M student some were its own nonsense passing replies (`git config
--global "~>"` as the worked example for "update my git configuration", a real-home night, docs/sleep.md). So
the proposal is built from the preferences the night mined, with their evidence:

- **Standing rules.** The teacher (your agent, an API model) turns the statements the training and selection
  tasks rest on into rules a person would put in a CLAUDE.md ("Design before code: when asked to design, reply
  with a design, no code."), each citing the user's words; a rule whose quote the user never wrote, that copies a
  request, or that says nothing is dropped. Without such a teacher (the embedded model writes junk) a rule is the
  user's own words of a preference they stated in 2 or more sessions ("Never use var."), or the reply opening
  their accepted answers share (`DONE:`).
  Statements of held-out tasks are never read: the held-out would then measure recall of its own checks.
- **Examples that show a rule.** A worked example stays only when its task rests on a statement a rule cites,
  and its reply says something: not a placeholder, not near empty, not its request restated (the engine's content
  checks, `engine/goodhart.py`), and not a reply without one word of its own beyond its request and the form a
  rule requires, a number alone being no content (`DONE: Report Builder 2` for "Give me the status of the report
  builder.", a 135M student's passing reply the engine had made a worked example). Where the user accepted an
  answer to such a task (not corrected, not interrupted) that passes the task's checks, that answer is the
  example: the user's own work.

The result is tested on the held-out like any candidate (night.py): the gate decides, as for every block.
Pure functions but `teacher_rules` (one teacher call).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from skillgrad.engine.goodhart import junk_text, restates_request, says_nothing
from skillgrad.engine.proposers.text import stems
from skillgrad.envs.tasks.records import TaskRecord
from skillgrad.models.base import LLM
from skillgrad.skill.examples import find_examples
from skillgrad.sleep.heldout import content_words, normalise
from skillgrad.sleep.preferences import preference_checks
from skillgrad.sleep.proposal_text import MIN_COPY_CHARS, names_the_tool

MAX_RULES = 8
MAX_EXAMPLES = 4  # the user's accepted answers shown as worked examples of their standing preferences
STANDING_SESSIONS = 2  # a preference the user stated in this many sessions holds going forward
RULES_MAX_TOKENS = 900
_LEAD = re.compile(r"(?i)^\s*(?:(?:no+|nope|stop|oops|again|actually|please|and|also|so|ok(?:ay)?)\b[\s,.!:;-]*)+")
# A reply that announces the work instead of doing it: the first line of an agent's turn as session exports keep it
# ("I'll help you convert the zsh_chop script ... First, let's look at ...", real_preferences_heldout.json).
_ANNOUNCES = re.compile(r"(?i)^\s*(?:<think>|(?:(?:sure|ok(?:ay)?|great|ah|oh)[,!.]?\s+)?(?:i'?ll|i\s+will|let\s+me|"
                        r"let'?s|i'?m\s+going\s+to|i\s+can\s+help|i'?d\s+be\s+happy)\b)")
_OPENING = re.compile(r"accepted replies open with (?P<x>[A-Za-z][\w-]*):")


@dataclass(frozen=True)
class Said:
    """One statement of the user's, from a task's evidence."""

    session: str
    turn: int
    words: str
    task_id: str
    opening: str = ""  # a reply opening (`DONE`) the user's accepted answers share across sessions


@dataclass
class Rule:
    text: str
    said: list[str] = field(default_factory=list)  # the user's words it rests on
    rests_on: set[tuple[str, int]] = field(default_factory=set)  # (session, turn) of those words

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.text, "said": self.said, "evidence": sorted([s, t] for s, t in self.rests_on)}


class StandingRule(BaseModel):
    rule: str = Field(..., min_length=8, max_length=220)
    said: list[str] = Field(default_factory=list, max_length=4)


class StandingRules(BaseModel):
    rules: list[StandingRule] = Field(default_factory=list, max_length=MAX_RULES)


RULES_SYSTEM = (
    "You write the standing preferences a user would put in their CLAUDE.md or AGENTS.md, from what they said to "
    f"their coding assistant. Up to {MAX_RULES} rules. Each rule is one imperative sentence (a short title and a "
    "colon before it is welcome) saying what the user wants from every future reply or change, generalised beyond "
    "the task it was said in: \"don't produce code, design solution first\" becomes \"Design before code: when "
    "asked to design, reply with a design, no code.\" Write a rule only where the user's words show a lasting "
    "preference (a rule, a correction they would make again, a convention of their project); leave out one-off "
    "task details and facts about one bug, never describe a past task, never copy a request, never name the tool "
    "writing this. In `said` quote the user's words each rule rests on, verbatim. Reply with JSON: "
    '{"rules": [{"rule": ..., "said": [...]}]}.')


def statements(tasks: Sequence[TaskRecord]) -> list[Said]:
    """The user's statements that training and selection tasks rest on (held-out tasks are never read)."""
    out: list[Said] = []
    seen: set[tuple[str, int, str]] = set()
    for t in tasks:
        if t.split == "test":
            continue
        for e in t.meta.get("evidence", []):
            why = str(e.get("why", ""))
            opening = m.group("x") if (m := _OPENING.search(why)) else ""
            if not (e.get("kind") or why.startswith("a standing preference") or opening):
                continue  # the request's own turn, not a statement
            words = why if opening else str(e.get("words", ""))  # an opening rests on answers, not on words
            s = Said(str(e.get("session", t.meta.get("session", ""))), int(e.get("turn", -1)),
                     " ".join(words.split()), t.task_id, opening)
            key = (s.session, s.turn, normalise(s.words))
            if s.words and key not in seen:
                seen.add(key)
                out.append(s)
    return out


def rules_prompt(said: Sequence[Said], tasks: Sequence[TaskRecord]) -> list[dict[str, str]]:
    asked = {t.task_id: " ".join(t.task.split())[:100] for t in tasks}
    lines = [f'- "{s.words}" (session {s.session[-12:]}, turn {s.turn + 1}; the request: "{asked.get(s.task_id, "")}")'
             for s in said]
    return [{"role": "system", "content": RULES_SYSTEM},
            {"role": "user", "content": "What the user said:\n" + "\n".join(lines)}]


def _quoted_in(quote: str, s: Said) -> bool:
    q, w = normalise(quote).strip(" \"'"), normalise(s.words)
    if q and (q in w or (len(w) >= 8 and w in q)):
        return True
    want = content_words(quote)
    return bool(want) and len(want & content_words(s.words)) >= 0.8 * len(want)


def rule_refusal(text: str, tasks: Sequence[TaskRecord]) -> str:
    """Why a rule may not enter a proposal ('' when it may): it names the tool, carries a redaction placeholder,
    copies a request of any split (a past task, not a preference) or says nothing."""
    if why := names_the_tool(text):
        return why
    low = normalise(text)
    for t in tasks:
        n = normalise(t.task)
        if len(n) >= MIN_COPY_CHARS and n in low:
            return f"copies a request: {t.task[:60]}"
    return junk_text(text) or ""


async def teacher_rules(teacher: LLM, said: Sequence[Said], tasks: Sequence[TaskRecord], *,
                        max_tokens: int = RULES_MAX_TOKENS,
                        on_drop: Callable[[str], None] | None = None) -> list[Rule]:
    """Rules the teacher writes from the statements, each kept only when a quote of it is one of them."""
    if not said:
        return []
    c = await teacher.complete(rules_prompt(said, tasks), schema=StandingRules, max_tokens=max_tokens,
                               temperature=0.0, stage="standing")
    parsed = c.parsed if isinstance(c.parsed, StandingRules) else None
    out: list[Rule] = []
    for r in parsed.rules if parsed else []:
        text = " ".join(r.rule.split())
        hits = [(q, s) for q in r.said for s in said if _quoted_in(q, s)]
        why = "" if hits else f"cites nothing the user said: {text[:60]}"
        why = why or rule_refusal(text, tasks)
        if why:
            if on_drop:
                on_drop(why)
            continue
        out.append(Rule(text, list(dict.fromkeys(q for q, _ in hits)), {(s.session, s.turn) for _, s in hits}))
    return _unique(out)


def _tidy(words: str) -> str:
    s = _LEAD.sub("", words).strip()
    s = s[:1].upper() + s[1:]
    return s if s.endswith((".", "!", "?", ":")) else s + "."


def offline_rules(said: Sequence[Said], tasks: Sequence[TaskRecord]) -> list[Rule]:
    """Without a teacher that can write rules: the user's own words of a preference they stated in
    STANDING_SESSIONS or more sessions (variants with the same checks are one preference; the shortest wording is
    the rule), and the reply opening their accepted answers share (mine.py mines one only when it recurs across
    sessions). One statement alone is no rule: on the public sessions it gave "Objects instead of raw." and
    "Github instead of using." (tests/fixtures/sessions/real_preferences*.json, development and held-out)."""
    groups: dict[tuple[Any, ...], list[Said]] = {}
    every: set[tuple[Any, ...]] = set()
    for s in said:
        prefs = [] if s.opening else preference_checks(s.words)
        key: tuple[Any, ...] = (("opening", s.opening),) if s.opening else (
            tuple(sorted((p.check.op, p.check.arg) for p in prefs)) or (normalise(s.words),))
        groups.setdefault(key, []).append(s)
        if s.opening:  # an opening is mined only once it recurs across sessions
            every.add(key)
    out = []
    for key, group in groups.items():
        if key in every or len({s.session for s in group}) >= STANDING_SESSIONS:
            text = (f"Start every reply with `{group[0].opening}:` (your accepted answers do)." if group[0].opening
                    else min((_tidy(s.words) for s in group), key=len))
            if not rule_refusal(text, tasks):
                out.append(Rule(text, list(dict.fromkeys(s.words for s in group)),
                                {(s.session, s.turn) for s in group}))
    return _unique(out)[:MAX_RULES]


def _unique(rules: list[Rule]) -> list[Rule]:
    seen: set[str] = set()
    return [r for r in rules if normalise(r.text) not in seen and not seen.add(normalise(r.text))]  # type: ignore[func-returns-value]


def example_refusal(question: str, reply: str, form: Sequence[str] = ()) -> str:
    """Why a worked example's reply is content-free ('' when it says something): the engine's content checks
    (a placeholder, near empty, the request restated), a reply that announces the work ("I'll help you ...",
    "Let me look ...") instead of doing it, or not one word of its own beyond its request and `form`, the words a
    rule requires of every reply (`DONE`); a number alone is no content."""
    if why := says_nothing(reply) or junk_text(reply):
        return why
    if restates_request(reply, question):
        return "restates its request"
    if _ANNOUNCES.match(reply):
        return "announces the work instead of doing it"
    if not stems(reply) - stems(" ".join([question, *form])):
        return f"says nothing beyond its request ({' '.join(reply.split())[:40]!r})"
    return ""


_REQUIRED_OPENING = re.compile(r"^\^(?:\\s\*)?([A-Za-z][\w-]{0,30}:)$")


def rule_form(rules: Sequence[Rule]) -> list[str]:
    """The openings rules require of every reply (`DONE:` of "Start every reply with `DONE:`", `Summary:` of
    "Start every reply with Summary:")."""
    out: list[str] = []
    for r in rules:
        for p in preference_checks(r.text):
            m = _REQUIRED_OPENING.match(p.check.arg) if p.check.op == "regex" else None
            if m and m.group(1) not in out:
                out.append(m.group(1))
    return out


def _rests_on(t: TaskRecord) -> set[tuple[str, int]]:
    return {(str(e.get("session")), int(e.get("turn", -1))) for e in t.meta.get("evidence", [])}


def answer_examples(tasks: Sequence[TaskRecord], rules: Sequence[Rule]) -> list[tuple[str, str]]:
    """The user's accepted answers that show a rule's required form (`DONE: the login service is healthy.`):
    answers to training and selection tasks resting on a rule's statements, opening with that form and passing
    every rule check of their task, as (request, answer) worked examples; at most MAX_EXAMPLES. Only answers in
    the form the user's accepted answers share: an export's first line of another reply ("Ah, let me run
    active_env first:", real_preferences.json) is no answer."""
    from skillgrad.envs.tasks.checks import run_check

    cited = {k for r in rules for k in r.rests_on}
    form = rule_form(rules)
    out: list[tuple[str, str]] = []
    for t in tasks:
        answer = str(t.meta.get("accepted", "")).strip()
        checks = [c for c in t.judge.checks if c.op != "no_refusal"]
        if t.split == "test" or not checks or not (_rests_on(t) & cited) or not any(
                answer.startswith(f) for f in form):
            continue
        if all(run_check(c, answer, []) for c in checks) and not example_refusal(t.task, answer, form) and not any(
                normalise(answer) == normalise(a) for _, a in out):  # one recurring request, one example
            out.append((" ".join(t.task.split()), answer))
    return out[:MAX_EXAMPLES]


def with_examples(block: str, examples: Sequence[tuple[str, str]]) -> str:
    """`block` with each (request, answer) as a worked example (an existing one for the request is replaced)."""
    from skillgrad.skill.examples import add_example

    for q, a in examples:
        block, _ = add_example(block, q, a)
    return block


def _task_of(question: str, tasks: Sequence[TaskRecord]) -> TaskRecord | None:
    """The task a worked example was asked as (the engine may drop an opening the step's requests share)."""
    q = content_words(question)
    best = max(((len(q & content_words(t.task)) / max(1, len(q)), t) for t in tasks), key=lambda x: x[0],
               default=(0.0, None))
    return best[1] if best[0] >= 0.6 else None


def students_own(reply: str, student: Collection[str]) -> bool:
    """The reply is one the engine took from the embedded model (normalised; the engine may have cut its
    opening)."""
    r = normalise(reply)
    return bool(r) and (r in student or (len(r) >= 40 and any(r in s for s in student)))


def keep_examples(block: str, tasks: Sequence[TaskRecord], rules: Sequence[Rule] | None,
                  student: Collection[str] = ()) -> tuple[str, list[str]]:
    """`block` without the worked examples that say nothing or that the embedded model wrote, and, when `rules` is
    given, without those whose task rests on no statement a rule cites (a record of a past task); why each went.
    `student`: the examples the engine took from the embedded model (night.py, `small_model_replies`; an agent
    teacher's correction is never one, even when the student later copies it): on the real project they were
    invented
    ("The NeoVim-in-VSCode plugin is designed to help you ... pip install -r requirements.txt" for a lazy.nvim
    fix, a rubric the 135M judge passed)."""
    cited = {k for r in rules for k in r.rests_on} if rules is not None else set()
    form = rule_form(rules or [])
    lines = block.splitlines()
    drop: list[tuple[int, int]] = []
    why: list[str] = []
    for ex in find_examples(block):
        reason = example_refusal(ex.question, ex.reply, form)
        if not reason and students_own(ex.reply, student):
            reason = "the small model's own reply, not your agent's or yours"
        if not reason and rules is not None:
            t = _task_of(ex.question, tasks)
            reason = "" if t is not None and _rests_on(t) & cited else "a past task no standing preference rests on"
        if reason:
            drop.append((ex.start, ex.end))
            why.append(f"example {ex.question[:50]!r}: {reason}")
    kept = [x for i, x in enumerate(lines) if not any(a <= i < b for a, b in drop)]
    text = "\n".join(kept)
    return (text + "\n" if block.endswith("\n") and text else text), why


def with_rules(block: str, rules: Sequence[Rule]) -> str:
    """`block` with each rule as a bullet under its first heading (or at its top), skipping rules it already has as
    a line of their own (an example's request that starts with the same words is no such line)."""
    have = {normalise(x).removeprefix("- ").strip() for x in block.splitlines()}
    have |= {h.removeprefix("-").strip() for h in have}
    new = [f"- {r.text}" for r in rules if normalise(r.text) not in have]
    if not new:
        return block
    lines = block.splitlines()
    at = 1 if lines and lines[0].lstrip().startswith("#") else 0
    return "\n".join([*lines[:at], *new, *([""] if lines[at:] and lines[at].strip() else []), *lines[at:]]) + (
        "\n" if block.endswith("\n") else "")
