"""Goodhart guard: a gain made of gaming the scorer is refused, not reported.

Two ways a small teacher and student have been seen to game a rule scorer (issue 17): the teacher pastes the
checker's own text into the skill (a regex, the description of a check, "a reply that matches ...", a rubric
sentence, a gold answer, or the analyst prompt's in-context example), and the student then replies with that
text for every task; a 47-character description of a `max_chars` check passed the check on every held-out task.

- `checker_text_hits(text, guard)`: why an edit's text copies checker or prompt text (empty: it does not).
  The update stage refuses such edits unless `evaluation.allow_checker_text` is set.
- `degenerate_replies(trajectories)`: why a skill's replies look like gaming (one short reply for most items,
  most replies opening with the same long text or near-duplicates of each other whatever the task, replies
  that restate the skill, the task or its requirement); the gate blocks such a candidate. Text the task
  requires of every reply (`Trajectory.extras["required_text"]`: a `TL;DR:` prefix, a fixed refusal sentence,
  a tool-call scaffold) is taken out first, so a correct fixed form is not a repeat. `degenerate_kind(reason)`
  names the rule that fired, for the summary's counts.
- `sample_replies(before, after)`: a few held-out replies before and after, for summaries and reports.

Pure functions: no I/O, no config.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

# How the environments word a check or its verdict for the teacher. Skill text in this voice was copied from
# the feedback, not written for the student.
_CHECK_VOICE = re.compile(
    r"\b(?:a|the|any) (?:passing )?reply (?:that|must be one that|should) (?:matches|is at (?:most|least)|contains|"
    r"does not|has a (?:line|section)|calls the tool|meets the rubric|starts with|ends with|is exactly)"
    r"|\bmatches the (?:regex|pattern)\b|\bno fixed answer; (?:the reply|a reviewer)\b|\bcheck failed:"
    r"|\bexpected answer:|\bevaluation: (?:correct|incorrect|partially correct)\b|\bthe rubric:"
    r"|\bcontains? one of '",  # a subject check's words as the feedback quotes them (three-steps: "... that contain
    # one of 'evening'," / "2. 'slow'," / "3. 'speed'," was verified as a worked example)
    re.IGNORECASE)
_REGEX_META = re.compile(r"\\[sdwSDWAZbB]|\(\?|\[\^|[*+?]\)|\.\*|\\\.")
_WORD = re.compile(r"[a-z0-9]+")
_ALPHA_WORD = re.compile(r"[A-Za-z]{3,}")

MIN_COPY_WORDS = 6  # a shared run of this many words is a copy, not a coincidence
SHORT_REPLY_CHARS = 80  # "the same short reply for most items" means shorter than this
MIN_ITEMS = 3  # fewer replies than this say nothing about a pattern
SHARED_OPENING_CHARS = 60  # most replies opening with this much of the same text (beyond what the task requires)
NEAR_DUPLICATE = 0.6  # two replies to different tasks sharing this share of their words say the same thing
MORE_ALIKE_THAN_TASKS = 0.3  # ... and this much more of their words than the two tasks share
MIN_OWN_WORDS = 6  # a reply with fewer words of its own is left to the short-reply rule
SHARED_RUN_WORDS = 15  # most replies holding the same run of this many words as a reply to another task


def _norm(s: str) -> str:
    return " ".join(_WORD.findall(s.lower()))


@dataclass(frozen=True)
class Guard:
    """What an edit must not copy: the checkers' literal texts (regexes, rubrics, long gold answers, check
    descriptions) and the teacher prompts' own example lines."""

    checker_texts: tuple[str, ...] = ()
    regexes: tuple[str, ...] = ()
    prompt_lines: tuple[str, ...] = ()
    _norm_checker: tuple[str, ...] = field(default=(), repr=False)

    @classmethod
    def build(cls, *, checker_texts: Iterable[str] = (), regexes: Iterable[str] = (),
              prompt_texts: Iterable[str] = ()) -> Guard:
        texts = tuple(dict.fromkeys(t for t in checker_texts if len(_norm(t).split()) >= MIN_COPY_WORDS))
        pats = tuple(dict.fromkeys(r for r in regexes if len(r) >= 4 and _REGEX_META.search(r)))
        lines = tuple(dict.fromkeys(n for t in prompt_texts for ln in t.splitlines()
                                    if len((n := _norm(ln)).split()) >= MIN_COPY_WORDS))
        return cls(texts, pats, lines, tuple(_norm(t) for t in texts))


def checker_texts_of_items(items: Iterable[Any]) -> tuple[list[str], list[str]]:
    """(texts, regexes) a guard must know from a split's items: each gold (the teacher sees it as the expected
    answer; long ones count, see Guard.build) and, for rule- or rubric-judged items (the `tasks` environment),
    the rubric and the check regexes. There the gold is the requirement in plain words, which a rule may
    restate: its feedback voice is caught by wording (_CHECK_VOICE), not as a copy."""
    texts: list[str] = []
    regexes: list[str] = []
    for it in items:
        judge = (getattr(it, "meta", None) or {}).get("judge")
        if isinstance(getattr(it, "gold", None), str) and not isinstance(judge, dict):
            texts.append(it.gold)
        if isinstance(judge, dict):
            if judge.get("rubric"):
                texts.append(str(judge["rubric"]))
            regexes += [str(c.get("arg", "")) for c in judge.get("checks", []) if c.get("op") == "regex"]
    return texts, regexes


def _word_runs(norm: str, n: int) -> set[str]:
    w = norm.split()
    return {" ".join(w[i:i + n]) for i in range(len(w) - n + 1)}


def checker_text_hits(text: str, guard: Guard) -> list[str]:
    """Why `text` (an edit's content, or the lines a rewrite added) copies checker or prompt text; [] if not."""
    if not text.strip():
        return []
    hits: list[str] = []
    m = _CHECK_VOICE.search(text)
    if m:
        hits.append(f"copies the wording of a check's feedback ({m.group(0)!r})")
    for pat in guard.regexes:
        if pat in text:
            hits.append(f"copies a checker's regex ({pat!r})")
            break
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
    words = r.split()
    if len(words) < 4:
        return False
    return len([w for w in words if w in set(s.split())]) / len(words) >= 0.8 and len(
        _word_runs(r, 4) & _word_runs(s, 4)) >= max(1, (len(words) - 3) // 2)


DEGENERATE_KINDS = {"same short reply": "the same short reply", "shared opening": "open with the same",
                    "near-duplicates": "near-duplicates", "no words": "hold no words", "restated text": "restate",
                    "shared run": f"the same {SHARED_RUN_WORDS} words"}


def degenerate_kind(reason: str) -> str:
    """The rule behind a `degenerate_replies` reason: a DEGENERATE_KINDS key ("other" for an unknown text)."""
    return next((k for k, phrase in DEGENERATE_KINDS.items() if phrase in reason), "other")


def _own_text(t: Any) -> str:
    """A reply's normalized words without the literal text its task requires of every reply (a `TL;DR:` prefix, a
    fixed refusal sentence, a tool-call scaffold: `Trajectory.extras["required_text"]`, set by the environment)."""
    text = _norm(str(t.answer or ""))
    for lit in sorted({_norm(x) for x in (getattr(t, "extras", None) or {}).get("required_text", [])}, key=len,
                      reverse=True):
        if lit:
            text = re.sub(rf"(?:^| ){re.escape(lit)}(?= |$)", " ", text)
    return " ".join(text.split())


def _shared_opening(own: list[tuple[str, str]]) -> str | None:
    """Most replies (to different tasks) open with the same SHARED_OPENING_CHARS characters of their own text."""
    n = len(own)
    groups: dict[str, list[tuple[str, str]]] = {}
    for q, text in own:
        if len(text) >= SHARED_OPENING_CHARS:
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
    return (f"{len(group)} of {n} replies open with the same {k} characters beyond what the task requires: "
            f"{texts[0][:80]!r}")


def _overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def _near_duplicates(own: list[tuple[str, str]]) -> str | None:
    """Most replies share most of their own words with a reply to another task, far more than the two tasks share
    (replies that differ where their tasks differ, `region 1` / `region 2`, are not repeats): they do not vary
    with the task."""
    sets = [(set(q.split()), set(text.split())) for q, text in own]
    n = len(sets)
    best: list[float] = []
    for i, (qi, wi) in enumerate(sets):
        overlaps = [o for j, (qj, wj) in enumerate(sets)
                    if j != i and qj != qi and len(wi) >= MIN_OWN_WORDS and len(wj) >= MIN_OWN_WORDS
                    and (o := _overlap(wi, wj)) >= _overlap(qi, qj) + MORE_ALIKE_THAN_TASKS]
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
    grams = [(q, _word_runs(text, n) - _word_runs(q, n)) for q, text in own]
    hit: list[str] = []
    for i, (qi, gi) in enumerate(grams):
        same = next((g for j, (qj, gj) in enumerate(grams) if j != i and qj != qi for g in gi & gj), None)
        if same is not None:
            hit.append(same)
    if len(hit) * 2 <= len(own) or len(hit) < MIN_ITEMS:
        return None
    common = Counter(hit).most_common(1)[0][0]
    return (f"{len(hit)} of {len(own)} replies hold the same {n} words as a reply to another task, beyond what the "
            f"task requires: {common!r}")


def degenerate_replies(trajectories: Sequence[Any]) -> str | None:
    """Why a skill's replies look like gaming the scorer, or None.

    Degenerate: the same short reply for most items (a reply that does not depend on the task), most replies
    restate the task's requirement (its gold, as the teacher sees it) or the skill's own instructions (the
    system text) or echo the task word for word, or most replies open with the same SHARED_OPENING_CHARS
    characters or share NEAR_DUPLICATE of their words with a reply to another task (both measured beyond the
    text the task requires: a fixed refusal sentence followed by the task's own words is no repeat). A reply that reuses the task's facts in the required
    form ("TL;DR: the DNS switch is complete" for "Write an update: the DNS switch is complete") is not
    degenerate: it is what such tasks ask for. Needs at least MIN_ITEMS replies."""
    answered = [t for t in trajectories if str(getattr(t, "answer", "") or "").strip()]
    if len(answered) < MIN_ITEMS:
        return None
    n = len(answered)
    counts = Counter(_norm(t.answer) or t.answer.strip() for t in answered)
    top, k = counts.most_common(1)[0]
    questions = {_norm(str(getattr(t, "question", "") or "")) for t in answered}
    if k * 2 > n and len(questions) > 1 and len(top) < SHORT_REPLY_CHARS:
        sample = next(t.answer.strip() for t in answered if (_norm(t.answer) or t.answer.strip()) == top)
        return f"the same short reply for {k} of {n} items: {sample[:80]!r}"
    wordless = sum(len(_ALPHA_WORD.findall(t.answer)) < 2 for t in answered)
    if wordless * 2 > n:  # `1. 1.` / `2. '1.` passes a list check and says nothing
        return f"{wordless} of {n} replies hold no words (e.g. {answered[0].answer.strip()[:60]!r})"
    kinds: Counter[str] = Counter()
    for t in answered:
        gold = getattr(t, "gold", "")
        if isinstance(gold, str) and _CHECK_VOICE.search(t.answer):
            kinds["the wording of a check"] += 1
        elif isinstance(gold, str) and len(_norm(gold).split()) >= 4 and _restates(t.answer, gold):
            kinds["the task's requirement"] += 1
        elif _restates(t.answer, _system_text(t)):
            kinds["the skill's instructions"] += 1
        elif _norm(t.answer) == _norm(str(getattr(t, "question", "") or "")):
            kinds["the task, word for word"] += 1  # an echo; a reply built from the task's facts is not one
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


def junk_text(text: str) -> str | None:
    """Why a generated block (a slow update's guidance) is junk rather than guidance, or None: empty or near
    empty, a placeholder (`...`, `TODO`, `N/A`), a bare timestamp or number, or checker feedback wording."""
    t = text.strip().strip("\"'`").strip()
    words = _WORD.findall(t.lower())
    if not t or _PLACEHOLDER.match(t.lower().rstrip(".:!")):
        return f"placeholder or empty ({t[:40]!r})"
    if _STAMP.match(t):
        return f"a bare timestamp or number ({t[:40]!r})"
    if len([w for w in words if not w.isdigit()]) < 3:
        return f"near empty ({t[:40]!r})"
    m = _CHECK_VOICE.search(t)
    if m:
        return f"copies the wording of a check's feedback ({m.group(0)!r})"
    return None
