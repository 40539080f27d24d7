"""Goodhart guard: a gain made of gaming the scorer is refused, not reported.

Two ways a small teacher and student have been seen to game a rule scorer (issue 17): the teacher pastes the
checker's own text into the skill (a regex, the description of a check, "a reply that matches ...", a rubric
sentence, a gold answer, or the analyst prompt's in-context example), and the student then replies with that
text for every task; a 47-character description of a `max_chars` check passed the check on every held-out task.

- `checker_text_hits(text, guard)`: why an edit's text copies checker or prompt text (empty: it does not).
  The update stage refuses such edits unless `evaluation.allow_checker_text` is set.
- `degenerate_replies(trajectories)`: why a skill's replies look like gaming (one short reply for most items,
  most replies opening with the same long text or near-duplicates of each other whatever the task, replies
  that restate the skill, the scorer's words, the requirement or their request: `restates_request` measures a
  reply's overlap with its request, not only an exact echo); the gate blocks such a candidate. Text the task
  requires of every reply (the environment's `ReplyContract`, `Trajectory.contract`: a `TL;DR:` prefix, a fixed
  refusal sentence, a tool-call scaffold) is taken out first, so a correct fixed form is not a repeat; a shared
  template is measured among the replies long enough to show one, whatever their share of all replies.
  The rules exist because form checks can pass without content. Where the contract states a content check (a gold
  value: `equals`, `one_of`, a `fact`), a reply that is its task's gold beyond the form has its pass established by
  that check: it is no restatement, however many of its words the request holds (a slug, a copied field), and a
  short reply to such a task is no wordless one. The same short reply still counts as one reply for every task
  where the golds of the items it answers differ (a constant `medium`, right on some); alike where they are alike.
  `degenerate_kind(reason)` names the rule that fired, for the summary's counts.

The guard never reads an environment's feedback wording: what it knows of a scorer is the contract's data.
- `sample_replies(before, after)`: a few held-out replies before and after, for summaries and reports.

Pure functions: no I/O, no config.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, is_dataclass, replace
from typing import Any

from skillgrad.engine.proposers.text import STOP, alpha_words, norm_words, overlap, without, word_runs, words

_REGEX_META = re.compile(r"\\[sdwSDWAZbB]|\(\?|\[\^|[*+?]\)|\.\*|\\\.")

MIN_COPY_WORDS = 6  # a shared run of this many words is a copy, not a coincidence
# A reply that restates its request (restates_request); set on the development suite's replies
# (tests/fixtures/suite_replies.json and restatements of benchmarks/skills_suite requests, tests/test_goodhart.py)
RESTATE_MIN_WORDS = 3
RESTATE_SHARE = 0.8
RESTATE_NEW_WORDS = 2
SHORT_REPLY_CHARS = 80  # "the same short reply for most items" means shorter than this
MIN_ITEMS = 3  # fewer replies than this say nothing about a pattern
SHARED_OPENING_CHARS = 60  # most replies opening with this much of the same text (beyond what the task requires)
NEAR_DUPLICATE = 0.6  # two replies to different tasks sharing this share of their words say the same thing
MORE_ALIKE_THAN_TASKS = 0.3  # ... and this much more of their words than the two tasks share
MIN_OWN_WORDS = 6  # a reply with fewer words of its own is left to the short-reply rule
SHARED_RUN_WORDS = 15  # most replies holding the same run of this many words as a reply to another task


_norm = norm_words


@dataclass(frozen=True)
class Guard:
    """What an edit must not copy: the checkers' literal texts (regexes, rubrics, long gold answers, check
    descriptions) and the teacher prompts' own example lines."""

    checker_texts: tuple[str, ...] = ()
    regexes: tuple[str, ...] = ()
    prompt_lines: tuple[str, ...] = ()
    _norm_checker: tuple[str, ...] = field(default=(), repr=False)
    # the reply contracts' fixed texts (envs/base.py): the form a reply is asked for is no copy of the checker's
    # words, though a check may quote it (ticket-tool's names its `<tool_call>{"name": ...}` form)
    fixed: tuple[str, ...] = ()

    @classmethod
    def build(cls, *, checker_texts: Iterable[str] = (), regexes: Iterable[str] = (),
              prompt_texts: Iterable[str] = (), fixed_texts: Iterable[str] = ()) -> Guard:
        texts = tuple(dict.fromkeys(t for t in checker_texts if len(_norm(t).split()) >= MIN_COPY_WORDS))
        pats = tuple(dict.fromkeys(r for r in regexes if len(r) >= 4 and _REGEX_META.search(r)))
        lines = tuple(dict.fromkeys(n for t in prompt_texts for ln in t.splitlines()
                                    if len((n := _norm(ln)).split()) >= MIN_COPY_WORDS))
        fixed = tuple(sorted(dict.fromkeys(t for t in fixed_texts if t.strip()), key=len, reverse=True))
        return cls(texts, pats, lines, tuple(_norm(t) for t in texts), fixed)

    def without_checker(self, texts: Iterable[str]) -> Guard:
        """This guard less the checker texts `texts` (a task's own answers, for its own worked example)."""
        drop = set(texts)
        kept = [(t, n) for t, n in zip(self.checker_texts, self._norm_checker, strict=True) if t not in drop]
        if len(kept) == len(self.checker_texts):
            return self
        return replace(self, checker_texts=tuple(t for t, _ in kept), _norm_checker=tuple(n for _, n in kept))


def fixed_texts_of_items(items: Iterable[Any], contract: Callable[[Any], Any] = lambda _: None) -> list[str]:
    """The fixed texts of the items' reply contracts (the form a passing reply holds; Guard.fixed)."""
    return list(dict.fromkeys(x for it in items if (c := contract(it)) is not None for x in c.fixed_texts()))


def checker_texts_of_items(items: Iterable[Any],
                           contract: Callable[[Any], Any] = lambda _: None) -> tuple[list[str], list[str]]:
    """(texts, regexes) a guard must know from a split's items: from each item's reply contract (envs/base.py), the
    scorer's own words, its regexes and its gold values; for an item without one, its gold (the teacher sees it as
    the expected answer). Long texts only count (Guard.build)."""
    texts: list[str] = []
    regexes: list[str] = []
    for it in items:
        c = contract(it)
        if c is None:
            if isinstance(getattr(it, "gold", None), str):
                texts.append(it.gold)
            continue
        texts += [*c.checker, *c.gold]
        regexes += list(c.patterns)
    return texts, regexes


_word_runs = word_runs


def checker_text_hits(text: str, guard: Guard) -> list[str]:
    """Why `text` (an edit's content, or the lines a rewrite added) copies checker or prompt text; [] if not."""
    if not text.strip():
        return []
    hits: list[str] = []
    for pat in guard.regexes:
        if pat in text:
            hits.append(f"copies a checker's regex ({pat!r})")
            break
    for q in guard.fixed:
        text = text.replace(q, " ")
    norm = _norm(text)
    runs = _word_runs(norm, MIN_COPY_WORDS)
    if runs:
        for src, n in zip(guard.checker_texts, guard._norm_checker, strict=True):
            if n in norm or runs & _word_runs(n, MIN_COPY_WORDS):
                hits.append(f"copies checker text ({src[:60]!r})")
                break
        for line in guard.prompt_lines:
            if line in norm or runs & _word_runs(line, MIN_COPY_WORDS):
                hits.append(f"copies the analyst prompt's own text ({line[:60]!r})")
                break
    return hits


# ---------------------------------------------------------------------------- replies
def _system_text(t: Any) -> str:
    """The skill's instructions the student was given: the system text without worked examples (a reply in the
    form of an example is what an example is for; one copied verbatim everywhere is caught as a repeat)."""
    from skillgrad.skill.examples import split_examples

    msgs = getattr(t, "messages", None) or []
    sys_msgs = [m.get("content", "") for m in msgs if isinstance(m, dict) and m.get("role") == "system"]
    return split_examples(str(sys_msgs[0]))[0] if sys_msgs else ""


def _restates(reply: str, source: str) -> bool:
    """The reply is (nearly) a passage of `source`: contained in it, or most of its words run through it."""
    r, s = _norm(reply), _norm(source)
    if not r or not s:
        return False
    if len(r.split()) >= 3 and r in s:
        return True
    said = r.split()
    if len(said) < 4:
        return False
    return len([w for w in said if w in set(s.split())]) / len(said) >= 0.8 and len(
        _word_runs(r, 4) & _word_runs(s, 4)) >= max(1, (len(said) - 3) // 2)


DEGENERATE_KINDS = {"same short reply": "the same short reply", "shared opening": "open with the same",
                    "near-duplicates": "near-duplicates", "no words": "hold no words", "restated text": "restate",
                    "shared run": f"the same {SHARED_RUN_WORDS} words"}


def degenerate_kind(reason: str) -> str:
    """The rule behind a `degenerate_replies` reason: a DEGENERATE_KINDS key ("other" for an unknown text)."""
    return next((k for k, phrase in DEGENERATE_KINDS.items() if phrase in reason), "other")


def _fixed(t: Any) -> tuple[str, ...]:
    """The literal texts the task requires of every reply (its contract's form: a `TL;DR:` prefix, a fixed refusal
    sentence, a tool-call scaffold), as the environment states them (envs/base.py ReplyContract)."""
    c = getattr(t, "contract", None)
    return c.fixed_texts() if c is not None else ()


def _own_text(t: Any) -> str:
    """A reply's normalized words without the literal text its task requires of every reply."""
    return without(str(t.answer or ""), _fixed(t))


def _golds(t: Any) -> frozenset[str]:
    """The task's gold values as its contract states them (its content checks: `equals`, `one_of`, a `fact`),
    normalized; empty where no content check judges the reply."""
    return frozenset(n for g in getattr(getattr(t, "contract", None), "gold", ()) if (n := _norm(str(g))))


def _content_checked(t: Any) -> bool:
    """A content check judges this task's reply: it passes only by carrying the gold value, so few words are no
    sign of a reply that passes on form alone (`office`, `9219`: a wrong one fails its check and gains nothing)."""
    return bool(_golds(t))


def _is_gold_answer(t: Any) -> bool:
    """Beyond the contract's form, the reply is its task's gold value and nothing else (`Sentiment: positive` where
    the gold is `positive`, a slug equal to the task's slug): the content check established its pass, so it
    carries content even where its words are the request's, the requirement's or the same as another reply's."""
    golds = _golds(t)
    own = _own_text(t)
    if not golds or not own:
        return False
    rest = without(own, golds)
    if not rest:
        return True
    # The task's hand-written reference reply with its gold values is that answer in the reference's own form
    # (`{"room": "C9", "day": "Monday"}`: its keys are no restatement). The requirement as the teacher reads it
    # quotes the reference, so the development suite's room-booking references were each flagged as restating it.
    ref = _norm(str(getattr(getattr(t, "contract", None), "reference", "") or ""))
    carried = [g for g in golds if f" {g} " in f" {ref} "]
    return bool(carried) and all(f" {g} " in f" {own} " for g in carried) and \
        set(rest.split()) <= set(without(ref, golds).split())


def _beats_constant(answered: Sequence[Any], reply: str) -> bool:
    """Where a content check judges every item, the replies pass more items than `reply` given to all of them
    would: they depend on the task beyond that label (a skill that answers `positive` to most reviews and tells the
    others apart). A constant, or one reply that passes only where it is the gold, passes no more than itself.
    Development evidence: team-route's few-shot start ("Team: IT support", a team that does not exist, for 4 of 6
    validation items; the other 2 right) was blocked as a constant although no constant passes any of them."""
    if not all(_content_checked(t) and is_dataclass(t) for t in answered):  # `replace` below needs a dataclass
        return False
    passed = sum(float(getattr(t, "hard", 0.0) or 0.0) >= 1.0 - 1e-9 for t in answered)
    alike = sum(_is_gold_answer(replace(t, answer=reply)) for t in answered)
    return passed > alike


def restates_request(reply: str, question: str, fixed: Iterable[str] = ()) -> bool:
    """The reply says nothing its request does not: beyond the fixed form, at least RESTATE_SHARE of its words are
    the request's and it adds at most RESTATE_NEW_WORDS subject words of its own ("TL;DR: <the request>", the
    request under `Summary:` with `Risks: None.`, a refusal sentence followed by the request). A reply that carries
    a fact the request lacks (a number, a name, a verdict's reason) adds words and is no restatement."""
    own = without(reply, fixed).split()
    if len(own) < RESTATE_MIN_WORDS:
        return False
    asked = set(words(question))
    inside = sum(w in asked for w in own)
    new = {w for w in own if w not in asked and len(w) > 2 and w not in STOP}
    return inside / len(own) >= RESTATE_SHARE and len(new) <= RESTATE_NEW_WORDS


def stock_sentences(answered: Sequence[Any]) -> tuple[str, ...]:
    """Sentences of their own (beyond the contract's form) that replies to at least MIN_ITEMS different tasks hold
    alike, and that are no part of those tasks' requests: a template line added to every reply, as in a
    development-suite push-length run with an agent teacher (its request plus "Grab your order before Sunday
    night.", which adds words, so no reply alone was a restatement). A sentence carrying a task's answer (a gold
    value) is content, not a template."""
    answers = {g for t in answered for g in _answers(t)}
    seen: dict[str, set[str]] = {}
    for t in answered:
        question = _norm(str(getattr(t, "question", "") or ""))
        for sentence in re.split(r"(?<=[.!?])\s+|\n+", str(t.answer or "")):
            own = without(sentence, _fixed(t))
            if len(own.split()) >= RESTATE_MIN_WORDS and own not in question:
                seen.setdefault(own, set()).add(question)
    return tuple(s for s, qs in seen.items()
                 if len(qs) >= MIN_ITEMS and not any(f" {a} " in f" {s} " for a in answers))


def _answers(t: Any) -> list[str]:
    """A task's short answers, normalized: its contract's gold values, or its gold when that is a value of a few
    words (not a requirement's description)."""
    gold = [*getattr(getattr(t, "contract", None), "gold", ()), getattr(t, "gold", "")]
    return [n for g in gold if isinstance(g, str) and (n := _norm(g)) and len(n.split()) <= 3]


def _copies(reply: str, source: str) -> bool:
    """`reply` holds a run of MIN_COPY_WORDS words of `source` (the scorer's own words)."""
    return bool(word_runs(_norm(reply), MIN_COPY_WORDS) & word_runs(_norm(source), MIN_COPY_WORDS))


def _shared_opening(own: list[tuple[str, str]]) -> str | None:
    """Most replies (to different tasks) open with the same SHARED_OPENING_CHARS characters of their own text."""
    measured = [(q, text) for q, text in own if len(text) >= SHARED_OPENING_CHARS]
    n = len(measured)
    groups: dict[str, list[tuple[str, str]]] = {}
    for q, text in measured:
        groups.setdefault(text[:SHARED_OPENING_CHARS], []).append((q, text))
    if not groups:
        return None
    group = max(groups.values(), key=len)
    if len(group) * 2 <= n or len(group) < MIN_ITEMS or len({q for q, _ in group}) < 2:
        return None
    texts = [x for _, x in group]
    k = len(texts[0])
    while any(not x.startswith(texts[0][:k]) for x in texts):
        k -= 1
    return (f"{len(group)} of {n} replies open with the same {k} characters beyond what the task requires (of "
            f"those long enough to compare): "
            f"{texts[0][:80]!r}")


_overlap = overlap


def _near_duplicates(own: list[tuple[str, str]]) -> str | None:
    """Most replies share most of their own words with a reply to another task, far more than the two tasks share
    (replies that differ where their tasks differ, `region 1` / `region 2`, are not repeats): they do not vary
    with the task."""
    sets = [(set(q.split()), w) for q, text in own if len(w := set(text.split())) >= MIN_OWN_WORDS]
    n = len(sets)  # the replies with words enough of their own to compare
    best: list[float] = []
    for i, (qi, wi) in enumerate(sets):
        overlaps = [o for j, (qj, wj) in enumerate(sets)
                    if j != i and qj != qi and (o := _overlap(wi, wj)) >= _overlap(qi, qj) + MORE_ALIKE_THAN_TASKS]
        best.append(max(overlaps, default=0.0))
    dup = [b for b in best if b >= NEAR_DUPLICATE]
    if len(dup) * 2 <= n or len(dup) < MIN_ITEMS:
        return None
    return (f"{len(dup)} of {n} replies are near-duplicates of a reply to another task (up to "
            f"{round(100 * max(dup))}% of their words shared beyond what the task requires)")


def _shared_run(own: list[tuple[str, str]]) -> str | None:
    """Most replies hold the same run of SHARED_RUN_WORDS words of their own text as a reply to another task, a run
    neither task holds: one stock sentence under a label of every reply. Review-sections (this round): 8 of 10
    held-out replies carried "Risks: This feature was removed from the email client in 2018, and it's not possible
    to remove it entirely."; their Summary lines differed, so no reply was a near-duplicate as a whole."""
    n = SHARED_RUN_WORDS
    grams = [(q, _word_runs(text, n) - _word_runs(q, n)) for q, text in own if len(text.split()) >= n]
    hit: list[str] = []
    for i, (qi, gi) in enumerate(grams):
        same = next((g for j, (qj, gj) in enumerate(grams) if j != i and qj != qi for g in gi & gj), None)
        if same is not None:
            hit.append(same)
    if len(hit) * 2 <= len(grams) or len(hit) < MIN_ITEMS:
        return None
    common = Counter(hit).most_common(1)[0][0]
    return (f"{len(hit)} of {len(grams)} replies hold the same {n} words as a reply to another task, beyond what the "
            f"task requires: {common!r}")


def degenerate_replies(trajectories: Sequence[Any]) -> str | None:
    """Why a skill's replies look like gaming the scorer, or None.

    Degenerate: the same short reply for most items (a reply that does not depend on the task), most replies
    restate the task's requirement (its gold, as the teacher sees it) or the skill's own instructions (the
    system text) or echo the task word for word, or most replies open with the same SHARED_OPENING_CHARS
    characters or share NEAR_DUPLICATE of their words with a reply to another task (both measured beyond the
    text the task requires: a fixed refusal sentence followed by the task's own words is no repeat). A reply that reuses the task's facts in the required
    form ("TL;DR: the DNS switch is complete" for "Write an update: the DNS switch is complete") is not
    degenerate: it is what such tasks ask for. A reply whose content check passes it (`_is_gold_answer`) is no
    restatement, and the same reply to items whose stated golds are the same is that answer, not a constant.
    Needs at least MIN_ITEMS replies."""
    answered = [t for t in trajectories if str(getattr(t, "answer", "") or "").strip()]
    if len(answered) < MIN_ITEMS:
        return None
    n = len(answered)
    def key(t: Any) -> str:
        return _norm(t.answer) or t.answer.strip()

    top, k = Counter(key(t) for t in answered).most_common(1)[0]
    same = [t for t in answered if key(t) == top]
    questions = {_norm(str(getattr(t, "question", "") or "")) for t in same}
    # one reply for items whose golds differ does not depend on the task (a constant `medium` right on some);
    # one reply for items the contract gives one gold is that answer, given alike (the golds unknown: differ)
    one_gold = all(_golds(t) for t in same) and len({_golds(t) for t in same}) == 1
    if k * 2 > n and len(questions) > 1 and len(top) < SHORT_REPLY_CHARS and not one_gold \
            and not _beats_constant(answered, same[0].answer):
        return f"the same short reply for {k} of {n} items: {same[0].answer.strip()[:80]!r}"
    wordless = sum(len(alpha_words(t.answer)) < 2 and not _content_checked(t) for t in answered)
    if wordless * 2 > n:  # `1. 1.` / `2. '1.` passes a list check and says nothing
        return f"{wordless} of {n} replies hold no words (e.g. {answered[0].answer.strip()[:60]!r})"
    kinds: Counter[str] = Counter()
    stock = stock_sentences(answered)
    for t in answered:
        if _is_gold_answer(t):  # its pass is the content check's, whatever words the gold shares with the task
            continue
        gold, question = getattr(t, "gold", ""), str(getattr(t, "question", "") or "")
        checker = getattr(getattr(t, "contract", None), "checker", ())
        if any(_copies(_own_text(t), x) for x in checker):  # beyond the form: the checker quotes that too
            kinds["the wording of a check"] += 1
        elif isinstance(gold, str) and len(_norm(gold).split()) >= 4 and _restates(_own_text(t), gold):
            # beyond the form, as for the checker: a requirement that quotes its tool-call scaffold held most words
            # of every correct call ("Microwave sparks" in create_ticket), and a 6-of-6 candidate was blocked
            kinds["the task's requirement"] += 1
        elif _restates(t.answer, _system_text(t)):
            kinds["the skill's instructions"] += 1
        elif question and restates_request(t.answer, question, _fixed(t)):
            kinds["the task's request"] += 1  # an echo, or the request in the required form
        elif getattr(t, "hard", 0) > 0 and question and stock and restates_request(t.answer, question, (*_fixed(t), *stock)):
            kinds["the task's request with a stock sentence"] += 1  # counted where it passed: a template's gain
    total = sum(kinds.values())
    if total * 2 > n:
        what = ", ".join(f"{w} ({c})" for w, c in kinds.most_common())
        return f"{total} of {n} replies restate {what}"
    own = [(_norm(str(getattr(t, "question", "") or "")), _own_text(t)) for t in answered]
    return _shared_opening(own) or _near_duplicates(own) or _shared_run(own)


def sample_replies(before: Sequence[Any], after: Sequence[Any], *, k: int = 3,
                   max_chars: int = 300) -> list[dict[str, Any]]:
    """Up to k held-out items with their reply before and after: those whose score changed first (gains, then
    losses), then the rest in id order, so a reader sees what a gain is made of."""
    a = {t.item_id: t for t in after}
    pairs = [(b, a[b.item_id]) for b in sorted(before, key=lambda t: str(t.item_id)) if b.item_id in a]
    pairs.sort(key=lambda p: (p[1].hard == p[0].hard, p[0].hard - p[1].hard))
    return [{"item_id": b.item_id, "question": str(getattr(b, "question", "") or "")[:max_chars],
             "before": {"hard": b.hard, "reply": str(b.answer or "")[:max_chars]},
             "after": {"hard": x.hard, "reply": str(x.answer or "")[:max_chars]}} for b, x in pairs[:k]]


_PLACEHOLDER = re.compile(r"^(?:\.{2,}|…|todo|tbd|n/?a|none|null|empty|placeholder|guidance|no guidance)$")
_STAMP = re.compile(r"^[\W\d_]*(?:\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2})[\W\dTZ_:.+-]*$|^[\W\d_]+$")


def says_nothing(text: str) -> str | None:
    """Why an edit's text carries no instruction at all, or None: a placeholder (`...`, `TODO`, `N/A`) or nothing but
    digits, punctuation or a timestamp (`1.0.2.3.4`). Short facts ("alpha", "Port 9219") are content."""
    t = text.strip().strip("\"'`").strip()
    if not t or _PLACEHOLDER.match(t.lower().rstrip(".:!")):
        return f"placeholder or empty ({t[:40]!r})"
    return f"a bare timestamp or number ({t[:40]!r})" if _STAMP.match(t) else None


def junk_text(text: str, guard: Guard | None = None) -> str | None:
    """Why a generated block (a slow update's guidance) is junk rather than guidance, or None: empty or near
    empty, a placeholder (`...`, `TODO`, `N/A`), a bare timestamp or number, or a copy of checker text (`guard`)."""
    if why := says_nothing(text):
        return why
    t = text.strip().strip("\"'`").strip()
    if len([w for w in words(t) if not w.isdigit()]) < 3:
        return f"near empty ({t[:40]!r})"
    hits = checker_text_hits(t, guard) if guard is not None else []
    return hits[0] if hits else None
