"""Small-student repairs: the task's required form put on a reply someone wrote (small-student strategy only).

A 135M student, and a small teacher, often know the answer long before they write the required form. A repair
takes their words and adds only what the environment's contract (envs/base.py `ReplyContract`) states: the text a
reply opens or ends with, the labels that lead its lines, a form to fill in, a required text it lacks, a banned word
swapped for the alike required one. Nothing else is written: no request restated, no alternative picked for the
reply, no words of the task put in its mouth (issue 30). The environment's scorer decides which repair, if any,
passes; a labelled reply also needs the task's content (filters.content_ok).

Entry point: `candidates(reply, contract, question)`, the repairs of one reply, best placed first.
"""

from __future__ import annotations

import json
import re
from difflib import SequenceMatcher

from skillgrad.engine.proposers.text import alpha_words, sentences, subject_words
from skillgrad.envs.base import ReplyContract

ALIKE = 0.6  # SequenceMatcher ratio for a banned / required word pair: `pnpm` / `npm` 0.86, `yarn` / `npm` 0.29
_JOINS = re.compile(r"(?:but|and|or|so|yet|nor|while|whereas|because)\b", re.IGNORECASE)  # a sentence's 2nd half
_CONNECTIVE = re.compile(r"^(?:however|but|so|also|still|instead|unfortunately|therefore|additionally),?\s+",
                         re.IGNORECASE)
_WORDLIKE = re.compile(r"[\w@][\w.@/+-]*")


def _label(text: str, body: str) -> str:
    """`text` in front of `body`: "TL;DR: x", "1. x", "Summary: x" (a bare word becomes a label)."""
    text = text.rstrip()
    sep = ": " if text[-1:].isalnum() and body else " "
    return f"{text}{sep}{body}".rstrip()


def _sentence(piece: str) -> bool:
    """A piece of a reply a label may lead: not the second half of a sentence ("but ...") nor a piece of code.
    Review-sections kept `Risks: but also an optimization ...` and 4 of 10 held-out replies copied it."""
    p = piece.strip()
    return bool(alpha_words(p)) and not _JOINS.match(p) and not p.endswith(":") and "`" not in p \
        and not re.search(r"[{}()=<>\[\]]", p)


def _fill(form: str, reply: str) -> str:
    """A form with a `...` placeholder (`{"title": "..."}`) filled with the reply's first sentence (JSON-escaped
    inside quotes)."""
    line = next((x.strip() for x in reply.splitlines() if x.strip()), "")
    line = re.split(r"(?<=[.!?])\s+", line)[0][:160]
    if '"..."' in form:
        return form.replace('"..."', json.dumps(line), 1)
    return form.replace("...", line, 1) if "..." in form else ""


def says_something(text: str, fixed: tuple[str, ...]) -> bool:
    """Two or more words besides the contract's fixed texts: `1. 1.` passes a list check and says nothing."""
    for q in fixed:
        text = text.replace(q, " ")
    return len(alpha_words(text)) >= 2


def label_repairs(reply: str, c: ReplyContract) -> list[str]:
    """The contract's form on `reply`: each form filled with it; its sentences led by the labels in turn (only when
    every label gets a sentence of its own); then the opening text in front and the ending after; then the
    required texts it lacks on a line at the end."""
    reply = reply.strip()
    if not reply:
        return []
    start, end = c.starts_with, c.ends_with
    out = [filled for f in c.forms if (filled := _fill(f, reply))]
    labels = [x for x in (start, *c.labels) if x] if c.labels else []
    parts = [p for p in re.split(r"(?<=[.!?])\s+|\n+", reply) if p.strip()]
    if labels and len(parts) >= len(labels) and all(_sentence(p) for p in parts[:len(labels)]):
        spread = [_label(q, parts[i]) for i, q in enumerate(labels)]
        tail = [end] if end else []
        out += ["\n".join(spread + tail), "\n".join(spread + parts[len(labels):] + tail)]
    lead = labels[0] if labels else start  # the opening text, or the first label, in front of the whole reply
    body = reply if not lead or reply.startswith(lead) else _label(lead, reply)
    if end and not body.rstrip().endswith(end):
        body = f"{body}\n{end}"
    out.append(body)
    missing = [r for r in c.required if r.casefold() not in body.casefold()]
    if missing:
        out.append("\n".join([body, *missing]))
    return list(dict.fromkeys(x for x in out if x != reply and says_something(x, c.fixed_texts())))


def swap_banned(reply: str, c: ReplyContract) -> str:
    """The reply with a banned word it uses replaced by an alike word the task requires ("use pnpm, not npm":
    `npm start` -> `pnpm start`), or '' when there is no such pair. Words pair one to one, the most alike first."""
    banned = [x for x in c.forbidden if _WORDLIKE.fullmatch(x)]
    need = [x for x in c.required if _WORDLIKE.fullmatch(x)]
    pairs = sorted(((SequenceMatcher(None, r.lower(), b.lower()).ratio(), b, r) for b in banned for r in need),
                   reverse=True)
    out, used = reply, set()
    for alike, word, by in pairs:
        if word in used or by in used or alike < ALIKE:
            continue
        used |= {word, by}
        out = re.sub(rf"(?<![\w-]){re.escape(word)}(?![\w-])", by.replace("\\", "\\\\"), out, flags=re.IGNORECASE)
    return out if out != reply else ""


def shortened(reply: str) -> list[str]:
    """The reply cut to its first line, first sentence and first two sentences (a reply past a length limit may
    pass once cut); only cuts shorter than the reply that keep 3+ words."""
    reply = reply.strip()
    said = sentences(reply)
    cuts = [reply.splitlines()[0] if reply else "", " ".join(said[:1]), " ".join(said[:2])]
    return [x.strip() for x in dict.fromkeys(cuts) if x.strip() and len(x.strip()) < len(reply)
            and len(alpha_words(x)) >= 3]


def focused(reply: str, question: str) -> list[str]:
    """The reply cut to its sentence that shares the most subject words with the task, when that is not its first:
    the student opened with "I'm sorry for any confusion." and named the task later (refusal-policy)."""
    said, task = sentences(reply), subject_words(question)
    if len(said) < 2 or not task:
        return []
    shared = [len(subject_words(x) & task) for x in said]
    best = max(range(len(said)), key=lambda i: (shared[i], -i))
    if shared[best] <= shared[0]:
        return []
    cut = _CONNECTIVE.sub("", said[best])  # "However, I can't ..." out of its context reads "I can't ..."
    return [cut[:1].upper() + cut[1:]]


def _forms(reply: str, c: ReplyContract) -> list[str]:
    """The banned word swapped (with the form put on, then alone), then the form on the reply as it is."""
    swapped = swap_banned(reply, c)
    return [*([*label_repairs(swapped, c), swapped] if swapped else []), *label_repairs(reply, c)]


def candidates(reply: str, c: ReplyContract, question: str = "") -> list[str]:
    """The repairs of one reply: the banned word swapped (labelled, then alone), the form on the whole reply, then
    on its cuts (a required text added to a shorter reply fits a reply cap the whole one runs past), then the cuts
    alone; the cut to the sentence about the task first among the cuts."""
    reply = reply.strip()
    if not reply:
        return []
    whole = _forms(reply, c)
    cuts = [*focused(reply, question), *reversed(shortened(reply))]
    cut = [r for x in cuts for r in _forms(x, c)[:3]]
    return list(dict.fromkeys(x for x in [*whole[:4], *cut, *whole[4:], *cuts] if x and x != reply))
