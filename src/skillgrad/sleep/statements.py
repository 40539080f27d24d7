"""What a user states in a message: preferences and corrections in the forms real sessions use.

Read from public session exports (tests/fixtures/sessions/real_preferences.json), people state what they want as
imperatives with any verb ("Don't run it through cat.", "NO only make changes to fix_url"), as rules ("you should
never take a task_id", "TODO is not acceptable", "always skip back-links.json", "make sure you dont use
CODEX_HOME"), as an order ("design solution first", "Start by looking at the whole file") or as a correction of
substance that opens with "No"/"Stop" ("No call it without python just changes"); other users (Claude Code
sessions, real_preferences_fresh.json) state design choices, judgements and facts ("I think bottomLinks is better",
"xterm.js is fine", statement_forms.py). A reversal later in the session is what counts (mine.py). Each statement
keeps the user's words; a check is made only where the words name something a reply can be tested for (a file, an
identifier, a command after "via"/"without", a code block the user did not want), never of a thing the user negated
or judged; otherwise the statement is judged by a reviewer against the user's own words. Pure functions,
linear-time patterns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from skillgrad.envs.tasks.checks import Check
from skillgrad.sleep import statement_forms as forms
from skillgrad.sleep.preferences import code_like, preference_checks

Kind = Literal["avoid", "require", "order", "correction"]

# A message that opens like this corrects the reply before it ("No, ...", "Stop that.", "NO only ...", "What? No
# install normally", "nop nop!", "that's wrong, it can only ...", "Still not right").
_CORRECTION_LEAD = re.compile(r"(?i)^\s*(?:(?:what|huh|wtf)\s*[?!]+\s*)?(?:no+|nope?|nah|stop|wrong|not\s+that|"
                              r"not\s+quite|not\s+right|actually|grr+|ugh|hmm+|hymn|oops|sorry|i\s+mean|"
                              r"that'?s\s+(?:wrong|not\s+(?:right|it|what))|still\s+not(?:\s+(?:right|working|it))?|"
                              r"revert|undo)\b[\s,.!:;-]*"
                              r"(?:(?:i\s+mean|nop)\b[\s,.!]*)*")
_SENTENCE = re.compile(r"[^\n.!?;]+(?:[.!?](?=\S)[^\n.!?;]*)*[.!?;]*")  # "journal.py" stays in its sentence
_NEGATED = re.compile(r"(?i)(?P<lead>\b[\w']+\s+)?\b(?P<neg>don'?t|dont|do\s+not|never|avoid|shouldn'?t|should\s+not|"
                      r"must\s+not|mustn'?t|no\s+need\s+to|without|nott?\s+via|not\s+to|instead\s+of)\b")
# "I don't know", "if you don't have it", "we don't lose the title": a statement about someone, not a directive.
_SUBJECT = frozenset("i we they it that this which who he she there files file things you'll".split())
_NOT_OK = re.compile(r"(?i)\b(?:is|are|isn'?t)\s+(?:not\s+)?(?:acceptable|allowed|ok|okay)\b|\bunacceptable\b")
_RULE = re.compile(r"(?i)\b(?:always|must|make\s+sure|be\s+sure|ensure|important\s+to|needs?\s+to|you\s+should|"
                   r"only|prefer|as\s+\w+\s+as\s+possible|i\s+(?:really\s+)?(?:want|need|prefer))\b")
_DONT_WANT = re.compile(r"(?i)\bi\s+(?:don'?t|dont|do\s+not)\s+(?:want|need|like)\b")
_ORDER = re.compile(r"(?i)\b(?:first|before|until|(?:start|begin)\s+(?:by|with))\b")
_USE = re.compile(r"(?i)(?:^|\b(?:and|just|please|also|then)\s+)(?:use|prefer|stick\s+to|keep\s+using)\s+"
                  r"(?:the\s+|a\s+|an\s+|only\s+)?(?P<x>[@\w][\w.\-/]*)")
_VIA = re.compile(r"(?i)\b(?:via|through|using|with|without|runnable\s+with)\s+(?:the\s+)?(?P<x>[@\w][\w.\-/]*)")
_RUN_FIRST = re.compile(r"(?i)\b(?:start|begin)\s+(?:by\s+)?running\s+(?P<x>[\w.\-/]+(?:\s+[\w.\-/]+)?)")
_QUESTION = re.compile(r"(?i)^\s*(?:why|what|how|where|which|who|when|can|could|should|would|will|do|does|did|is|are|"
                       r"have|has)\b")
_COMPLAINT = re.compile(r"(?i)^\s*why\s+did\s+(?:you|it)\s+(?:remove|delete|drop|change|rename|break|add|undo|revert)\b")
_CONDITION = re.compile(r"(?i)^\s*(?:if|when|whenever|for\s+(?:all|every|each))\b[^,]{3,80},\s*\w+")
_VIA_IMPERATIVE = re.compile(r"(?i)^\s*(?:\w+\s+){0,5}(?:via|through)\b")
_CODE = re.compile(r"(?i)\b(?:don'?t|dont|do\s+not|never|no\s+need\s+to)\s+(?:produce|write|generate|give\s+me|show|"
                   r"output)\s+(?:any\s+)?code\b")
_TERM_IN = re.compile(r"`([^`\n]{1,40})`|(?<![A-Za-z])[\"'“]([^\"'”\n]{1,40})[\"'”](?![A-Za-z])|(@?[\w./\-]+)")
_WEAK = frozenset("the a an it this that them me you us i we so just yet only again here there now then and or to "
                  "of in on for by be is are all any some shell command commands file files code way one ones".split())
_NO_FENCE = r"(?s)\A(?!.*```)"


@dataclass(frozen=True)
class Statement:
    kind: Kind
    words: str                # the user's words it was read from (one sentence, trimmed)
    check: Check | None       # a check of what the user meant, when the words name something testable
    every_reply: bool = False  # holds for any reply (a banned word, a required opening), not one request


def is_correction(text: str) -> bool:
    """The message opens by rejecting the reply before it ("No, ...", "Stop that.", "NO only ...")."""
    if re.match(r"(?i)^\s*(?:instead\s+of|rather\s+than)\b", text):
        return True  # "Instead of a task_id take a task object": what the user wanted in place of the reply
    return bool(_CORRECTION_LEAD.match(text)) and not re.match(r"(?i)^\s*no\s+(?:need|problem|worries)\b", text)


def _absent(term: str) -> Check:
    return Check(op="regex", arg=r"(?is)\A(?!.*(?<![\w\-])" + re.escape(term) + r"(?![\w\-]))")


def _shouted(text: str) -> set[str]:
    """Words in capitals next to another one ("STOP WITH THE FUCKING WRAPPER SAUCE: ..."): shouting, no constants
    (`TODO`, `CODEX_HOME` stand alone)."""
    words = re.findall(r"[A-Za-z_\d]+", text)
    caps = [w.isalpha() and w.isupper() and len(w) > 1 for w in words]
    return {w for i, w in enumerate(words) if caps[i] and ((i > 0 and caps[i - 1]) or (i + 1 < len(caps) and caps[i + 1]))}


def _terms(text: str) -> list[str]:
    """Quoted or code-like terms (journal.py, fix_url, CODEX_HOME, `npm`, bottomLinks), in order; in a shouted
    sentence a word in capitals is no term."""
    out = []
    shouted = _shouted(text)
    for m in _TERM_IN.finditer(text):
        t = (m.group(1) or m.group(2) or "").strip() or m.group(3).rstrip(".,-").lstrip("@")
        if t in shouted and not (m.group(1) or m.group(2)):
            continue
        if (m.group(1) or m.group(2) or code_like(t)) and t.lower() not in _WEAK and t not in out:
            out.append(t.lstrip("@"))
    return out


def _word(x: str) -> str:
    x = x.strip(".,;:!?)(").lstrip("@")
    return "" if not x or x.lower() in _WEAK or len(x) > 40 else x


def _directive_negation(sentence: str) -> re.Match[str] | None:
    for m in _NEGATED.finditer(sentence):
        lead = (m.group("lead") or "").strip().lower()
        if m.group("neg").lower() in ("without", "instead of"):
            return m
        if lead in _SUBJECT and not re.search(r"(?i)\b(?:make|be)\s+sure\s+(?:that\s+)?you\s+$",
                                              sentence[:m.start("neg")]):
            continue
        if lead == "you" and not re.search(r"(?i)\b(?:make|be)\s+sure\s+(?:that\s+)?you\s+$", sentence[:m.start("neg")]):
            continue
        return m
    return None


def _one(sentence: str, correction: bool) -> Statement | None:
    s = " ".join(sentence.split())
    words = s[:200]
    if len(s.split()) < 2:
        return None  # "Stop." / "that." : the lead of a correction, not what it asks for
    if _COMPLAINT.match(s) or forms.BLAME.search(s):
        return Statement("avoid", words, None)  # "Why did you remove ..." : the user wanted it kept
    if forms.SUGGEST.match(s):
        terms = _terms(s)
        return Statement("require", words, Check(op="contains", arg=terms[0]) if terms else None)
    polite = forms.POLITE.match(s) and forms.STATED.search(s)
    if _QUESTION.match(s) and s.endswith("?") and not correction and not polite:
        return None  # a question asks; it states nothing
    if _CODE.search(s):
        return Statement("avoid", words, Check(op="regex", arg=_NO_FENCE))
    if _DONT_WANT.search(s):
        terms = _terms(s[_DONT_WANT.search(s).end():])  # type: ignore[union-attr]
        return Statement("avoid", words, _absent(terms[0]) if terms else None)
    neg = _directive_negation(s)
    not_ok = _NOT_OK.search(s)
    if neg or not_ok:
        tail = s[neg.end():] if neg else ""
        via = _VIA.search(s[neg.start():]) if neg else None
        if neg and neg.group("neg").lower() in ("without", "instead of") or (neg and "via" in neg.group("neg").lower()):
            term = next((w for w in map(_word, tail.split()[:3]) if w), "")
            term = "" if term.lower().endswith("ing") else term  # "without asking": no word to ban
        else:
            # the banned thing follows the negation closely ("don't use CODEX_HOME"), never a removal or a thing kept
            # ("do not delete RTI folder yet", "should not be selectable in the CLI", "dont half ass it , compare the
            # @cli/seq-eco.mjs": real_preferences_fresh.json)
            near = "" if forms.KEEPS.match(tail) else " ".join(tail.split()[:4])
            terms = _terms(near) if neg else _terms(s[:not_ok.start()]) if not_ok else []
            term = terms[0] if terms else _word(via.group("x")) if via and not forms.KEEPS.match(tail) else ""
        if neg and not term:
            return Statement("order" if _ORDER.search(s) else "avoid", words, None)
        return Statement("avoid", words, _absent(term) if term else None,
                         every_reply=bool(neg and neg.group("neg").lower() == "never"))
    if _ORDER.search(s) and (correction or re.match(r"(?i)^\s*(?:\w+\s+){0,6}", s)):
        m = _RUN_FIRST.search(s)
        if m or _ORDER.search(s):
            term = " ".join(w for w in (m.group("x").split() if m else []) if w.lower() not in _WEAK)
            return Statement("order", words, Check(op="contains", arg=term) if term else None)
    rule = _RULE.search(s)
    use = _USE.search(s)
    via = _VIA.search(s)
    imperative = bool(_VIA_IMPERATIVE.match(s) or _CONDITION.match(s))
    if rule or use or correction or imperative:
        terms = _terms(s[rule.end():] if rule else s)
        term = terms[0] if terms else _word(via.group("x")) if via else _word(use.group("x")) if use else ""
        if term in _shouted(s) or (term and forms.NOT_BEFORE.search(s[:s.find(term)])):
            term = ""  # shouting, or a thing the user negated ("it should not be set to in_progress")
        kind: Kind = "correction" if correction and not (rule or use) else "require"
        if correction and term and forms.GONE.search(s[:s.find(term)]) and not rule:
            return Statement("avoid", words, _absent(term))  # "Stop with the wrapper: parseRecordIdString"
        return Statement(kind, words, Check(op="contains", arg=term) if term else None)
    return _stated(s, words)


def _stated(s: str, words: str) -> Statement | None:
    """A design choice, judgement or fact the user states (not a request): its first named thing is checked,
    absent when the user wants it gone; otherwise it is judged against the user's words."""
    if forms.PASTED.search(s):
        return None
    named = forms.NAMED_SUBJECT.match(s) if len(s.split()) >= 4 else None  # "HTML is :" says nothing
    subject = named.group("t").strip("`") if named else ""
    if not (forms.STATED.search(s) or (named and (code_like(subject) or named.group("t").startswith("`")))):
        return None
    terms = _terms(s)
    term = terms[0] if terms else ""
    if term and forms.GONE.search(s[:s.find(term)]):
        return Statement("avoid", words, _absent(term))
    if forms.AGAINST.search(s) or (term and forms.NOT_BEFORE.search(s[:s.find(term)])):
        return Statement("avoid", words, None)
    return Statement("require", words, Check(op="contains", arg=term) if term else None)


def stated_preferences(text: str, *, correction: bool | None = None) -> list[Statement]:
    """Every preference or correction stated in one user message, each with its words and, where the words name
    something testable, a check of it. `correction`: the message corrects the reply before it (by default: it
    opens with "No", "Stop", ...); then an imperative with any verb is what the user wanted instead."""
    # a message that opens with the agent's words in quotes, then reacts ("\"I need to add a task status update to
    # in_progress ...\"\n\nno, it should not be set to in_progress"): the quote is the agent's, the rest the user's
    quoted = forms.QUOTED_LEAD.match(text)
    text = text[quoted.end():] if quoted else text
    if forms.PLAN.match(text):
        return []  # Claude Code's "Implement the following plan:" carries the plan the agent wrote, not the user's words
    correction = is_correction(text) if correction is None else correction
    # "STOP WITH THE WRAPPER: parseRecordIdString": a "stop" lead says what the user wants gone, so it stays
    body = _CORRECTION_LEAD.sub("", text, count=1) if correction and not forms.STOP.match(text) else text
    out: list[Statement] = []
    seen: set[str] = set()
    for p in preference_checks(text):  # the phrasings with exact checks: "use X not Y", "start every reply with"
        out.append(Statement("require" if p.check.op == "contains" else "avoid", p.words, p.check, p.every_reply))
        seen.add(p.check.arg)
    covered = " ".join(p.words for p in out).lower()
    for m in _SENTENCE.finditer(body):
        st = _one(m.group(0), correction)
        if st is None or (st.check is not None and st.check.arg in seen):
            continue
        if st.words.lower() in covered or (st.check is None and any(st.words.lower() in o.words.lower() for o in out)):
            continue
        if st.check is not None:
            seen.add(st.check.arg)
        out.append(st)
    if correction and not out and body.strip():
        out.append(Statement("correction", " ".join(body.split())[:200], None))
    return out
