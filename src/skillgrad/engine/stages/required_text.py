"""What a failure feedback quotes as required, read closely enough to build a reply from it.

The environments word a failed check for the teacher ("contains 'security@corp.example'", "starts with '{'",
"contains '"severity"' then ':' then '"' then one of 'low', 'medium', 'high' then '"'", "contains one of
'password', 'reset'"). Three kinds of quoted text are told apart here, because a repair treats them differently:

- a **label**: one required text (`'TL;DR: '`, `'1. '`, `'Brightline Support'`), put in front of, after or
  leading a line of a reply (engine/stages/demonstrate.py);
- a **sequence** of pieces joined by "then" (the words of one pattern): its pieces are no labels (a reply
  labelled `'"'` or `':'` is noise); the whole sequence is composed into one text instead, its "some text" filled
  with a short phrase of the task and its "one of" with the alternative the reply or task names;
- **alternatives** ("one of 'password', 'reset'") and a single lower-case word a reply must contain: the reply
  must be *about* something (the task's subject); no label supplies that, and appended as lines (`admin` /
  `group` / `privilege`) they were copied into every held-out reply of a refusal-policy run.

Pure functions on text.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from difflib import SequenceMatcher

_Q = r"(?:'[^'\n]{1,120}'|\"[^\"\n]{1,120}\")"
_ALTS = rf"one of {_Q}(?:, {_Q})*"
_PIECE = rf"(?:{_Q}|some text|{_ALTS})"
_SEQUENCE = re.compile(rf"{_PIECE}(?: then {_PIECE})+")
_ONE_OF = re.compile(_ALTS)
_QUOTED = re.compile(r"'([^'\n]{1,120})'|\"([^\"\n]{1,120})\"")
# A text the feedback says must not be there ("... does not contain '4. '"); "did not start with 'ANSWER:'"
# reports a required text the reply lacked, so a "not" after "did" is no prohibition.
_NEGATED = re.compile(r"\b(?<!did )(?:not|never|no|without)\b[^'\"]*$", re.IGNORECASE)
_CONTENT_WORD = re.compile(r"\bcontains?\s*$", re.IGNORECASE)  # "contains 'printer'": a subject, not a label
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_TOKEN = re.compile(r"[a-z0-9']+|\|")
# Words that say nothing about a task's subject (a task phrase is made of the others).
_STOP = frozenset("""a an the this that these those my our your his her its their me we you i he she it they
him them us of in on at to for from by with about into over after before under than and or but if then so as
is are was were be been being do does did done have has had can could will would should shall may might must
please just now all any some every each no not only also very too quick one two again still need needs want
wants like get got give make let new old more most other same such there here what which who whom whose when
where why how""".split())


def _text(m: re.Match[str]) -> str:
    return m.group(1) if m.group(1) is not None else m.group(2)


def _blocked(feedback: str) -> list[tuple[int, int]]:
    return [m.span() for rx in (_SEQUENCE, _ONE_OF) for m in rx.finditer(feedback)]


def quoted_texts(feedback: str) -> list[str]:
    """The labels the failure feedback quotes as required: not a text it says must NOT be there ("does not contain
    '4. '"), not a piece of a sequence or of a list of alternatives, not a lower-case word the reply must contain
    (a subject: see the module text)."""
    spans = _blocked(feedback)
    out: list[str] = []
    for m in _QUOTED.finditer(feedback):
        text, before = _text(m), feedback[max(0, m.start() - 24):m.start()]
        if not text.strip() or _NEGATED.search(before) or any(a <= m.start() < b for a, b in spans):
            continue
        if re.fullmatch(r"[a-z][a-z-]*", text) and _CONTENT_WORD.search(before):
            continue
        out.append(text)
    return list(dict.fromkeys(out))


_INSTRUCTION = re.compile(r"^\s*[A-Za-z ]{1,30}:\s+")  # "Triage: ...", "Write a status update: ..."


def near_variant(text: str, required: list[str]) -> str:
    """A wrong copy of a required phrase of 3+ words in `text` ("I can help you with that" beside the required
    "I can't help with that"), or '': a repair that keeps it teaches the student both. Exact copies are left out,
    and so are forms (`{"title": "..."}`, a tool call): a filled form is no wrong copy of its blank."""
    low = text.lower()
    for q in required:
        words = _TOKEN.findall(q.lower())
        if not is_phrase(q):
            continue
        rest = _TOKEN.findall(low.replace(q.lower(), " | "))
        for size in (len(words) - 1, len(words), len(words) + 1):
            for i in range(len(rest) - size + 1):
                window = rest[i:i + size]
                if "|" not in window and window != words and SequenceMatcher(None, window, words).ratio() >= 0.7:
                    return " ".join(window)
    return ""


def is_phrase(text: str) -> bool:
    """A required text that is a plain phrase of 3+ words ("I can't help with that"), not a label or a form."""
    return len(_TOKEN.findall(text.lower())) >= 3 and bool(re.fullmatch(r"[A-Za-z0-9' ,.!?-]+", text))


def inline_texts(feedback: str) -> list[str]:
    """The labels the feedback asks a reply to contain or to end with (`contains 'security@corp.example'`), not to
    lead a line or a section with: such a text never leads a piece of the reply."""
    return [q for q in quoted_texts(feedback) if re.search(rf"(?:contains|ends with) {_quote_rx(q)}", feedback)]


_BANNED = re.compile(rf"does not (?:use the word|contain) ({_Q})")
ALIKE = 0.6  # SequenceMatcher ratio: `pnpm` / `npm` 0.86, `yarn` / `npm` 0.29, `const` / `var` 0.25
_CONTAINS = re.compile(rf"(?<![\w-])contains ({_Q})")  # a subject word too ('pnpm'), not only a label
_WORDLIKE = re.compile(r"[\w@][\w.@/+-]*")


def banned_texts(feedback: str) -> list[str]:
    """The words the feedback says a reply must not use ("does not use the word 'npm'", "does not contain 'var'");
    only word-like texts (a banned `'\\n4. '` is a form, not a word another word can replace)."""
    out = [_text(_QUOTED.fullmatch(m.group(1))) for m in _BANNED.finditer(feedback)]  # type: ignore[arg-type]
    return list(dict.fromkeys(x for x in out if _WORDLIKE.fullmatch(x)))


def swap_banned(reply: str, feedback: str, required: Sequence[str] = ()) -> str:
    """The reply with a banned word it uses replaced by a word the task requires ("use pnpm, not npm": `npm start` ->
    `pnpm start`), or '' when there is no such pair or the reply uses no banned word. A word the same feedback
    requires pairs with any banned word; a word only `required` names (the task's texts a reply already has) pairs
    with an alike one only (`pnpm` / `npm`, never `pnpm` / `var`). Words pair one to one, the most alike first (a
    task banning `npm` and `var` swaps `npm` only); the scorer decides whether the result passes."""
    said = [x for m in _CONTAINS.finditer(feedback)
            if _WORDLIKE.fullmatch(x := _text(_QUOTED.fullmatch(m.group(1))))]  # type: ignore[arg-type]
    known = [x for x in required if _WORDLIKE.fullmatch(x) and x not in said]
    pairs = sorted(((SequenceMatcher(None, r.lower(), b.lower()).ratio(), b, r) for b in banned_texts(feedback)
                    for r in dict.fromkeys(said + known)), reverse=True)
    out, used = reply, set()
    for alike, word, by in pairs:
        if word in used or by in used or (by not in said and alike < ALIKE):
            continue
        used |= {word, by}
        out = re.sub(rf"(?<![\w-]){re.escape(word)}(?![\w-])", by.replace("\\", "\\\\"), out, flags=re.IGNORECASE)
    return out if out != reply else ""


def task_request(question: str) -> str:
    """The task's first sentence without a leading instruction: what was asked, for a reply that names it."""
    body = _INSTRUCTION.sub("", question.strip(), count=1)
    return re.split(r"(?<=[.!?])\s+", body)[0].strip() if body else ""


def task_phrase(question: str, n: int = 2) -> str:
    """The first `n` words of the task that name its subject ("Triage: the password reset email arrives ..." ->
    "password reset"): a leading instruction ("Triage:") and words that say nothing are skipped."""
    body = _INSTRUCTION.sub("", question, count=1)
    words = [w.strip("'-") for w in _WORD.findall(body)]
    keep = [w for w in words if len(w) > 2 and w.lower() not in _STOP and not w.lower().endswith("'s")]
    return " ".join(keep[:n])


def subject_words(text: str) -> set[str]:
    """The words of `text` that can name a subject (lower case; short and empty words left out)."""
    return {w.lower().strip("'-") for w in _WORD.findall(text) if len(w) > 2 and w.lower() not in _STOP}


def _pieces(sequence: str) -> list[str | list[str]]:
    """A sequence's pieces: a literal text, "some text" (as ""), or the alternatives of a "one of" (a list)."""
    out: list[str | list[str]] = []
    for part in re.split(r" then (?=" + _PIECE + ")", sequence):
        if part == "some text":
            out.append("")
        elif part.startswith("one of "):
            out.append([_text(m) for m in _QUOTED.finditer(part)])
        else:
            m = _QUOTED.fullmatch(part)
            out.append(_text(m) if m else part)
    return out


def _choose(alts: list[str], said: str, key: str) -> str:
    """The alternative the reply or task names (a word of its own), else one fixed by the task (so that examples
    of different tasks do not all show the first alternative)."""
    low = said.lower()
    named = [a for a in alts if re.search(rf"(?<![a-z]){re.escape(a.lower())}(?![a-z])", low)]
    return named[0] if named else alts[zlib.crc32(key.encode()) % len(alts)]


def _compose(sequence: str, fill: str, said: str, key: str) -> str:
    out = ""
    for p in _pieces(sequence):
        text = p if isinstance(p, str) and p else (_choose(p, said, key) if isinstance(p, list) else fill)
        out += (" " if out.endswith((":", ",")) and not text.startswith(" ") else "") + text
    return out


def composed_forms(feedback: str, reply: str, question: str, also: str = "") -> list[str]:
    """The required sequences of the feedback composed into one text each and joined (", "), between the text it
    must start with and the text it must end with: `{"severity": "high", "component": "password reset"}` from
    the pieces of four checks. "some text" is a short phrase of the task (2, then 4 words), or the reply's first
    sentence; an alternative is the one the reply, `also` (another reply to the task) or the task names. [] when
    the feedback quotes no sequence."""
    seqs = [m.group(0) for m in _SEQUENCE.finditer(feedback)]
    if not seqs:
        return []
    labels = quoted_texts(feedback)
    start = next((q for q in labels if re.search(rf"starts with {_quote_rx(q)}", feedback)), "")
    end = next((q for q in labels if re.search(rf"ends with {_quote_rx(q)}", feedback)), "")
    first = re.split(r"(?<=[.!?])\s+", next((x.strip() for x in reply.splitlines() if x.strip()), ""))[0][:160]
    fills = [f for f in dict.fromkeys([task_phrase(question), task_phrase(question, 4), first]) if f]
    said = f"{reply}\n{also}\n{question}"
    out = []
    for fill in fills:
        fill = fill.replace('"', "'")  # it goes inside quotes of the form
        body = ", ".join(_compose(s, fill, said, question) for s in seqs)
        out.append(f"{start}{body}{end}")
    return list(dict.fromkeys(out))


def _quote_rx(text: str) -> str:
    return rf"(?:'{re.escape(text)}'|\"{re.escape(text)}\")"

