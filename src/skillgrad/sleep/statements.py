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
from dataclasses import dataclass, replace
from typing import Literal

from skillgrad.envs.tasks.checks import Check
from skillgrad.sleep import constraint_forms as cons
from skillgrad.sleep import proposal_forms as props
from skillgrad.sleep import request_forms as asks
from skillgrad.sleep import slips
from skillgrad.sleep import statement_forms as forms
from skillgrad.sleep.directives import directive_in
from skillgrad.sleep.preferences import code_like, preference_checks

Kind = Literal["avoid", "require", "order", "correction"]

# A message that opens like this corrects the reply before it ("No, ...", "Stop that.", "NO only ...", "What? No
# install normally", "nop nop!", "that's wrong, it can only ...", "Still not right", "Oh come on. Start to focus a
# little bit more.": real_preferences_fresh4.json).
_CORRECTION_LEAD = re.compile(r"(?i)^\s*(?:(?:what|huh|wtf)\s*[?!]+\s*)?(?:no+|nope?|nah|stop|wrong|not\s+that|"
                              r"not\s+quite|not\s+right|actually|grr+|ugh|hmm+|hymn|oops|sorry|i\s+mean|(?:oh\s+)?come\s+on|"
                              r"that'?s\s+(?:wrong|not\s+(?:right|it|what))|still\s+not(?:\s+(?:right|working|it))?|"
                              r"revert|undo)\b[\s,.!:;-]*"
                              r"(?:(?:i\s+mean|nop)\b[\s,.!]*)*")
_SENTENCE = re.compile(r"[^\n.!?;]+(?:[.!?](?=\S)[^\n.!?;]*)*[.!?;]*")  # "journal.py" stays in its sentence
_NEGATED = re.compile(r"(?i)(?P<lead>\b[\w']+\s+)?\b(?P<neg>don'?t|dont|do\s+not|never|avoid|shouldn'?t|should\s+not|"
                      r"must\s+not|mustn'?t|no\s+need\s+to|without|nott?\s+via|not\s+to|instead\s+of|let'?s\s+not)\b")
# "I don't know", "if you don't have it", "we don't lose the title": a statement about someone, not a directive.
_SUBJECT = frozenset("i we they it that this which who he she there files file things you'll".split())
_NOT_OK = re.compile(r"(?i)\b(?:is|are|isn'?t)\s+(?:not\s+)?(?:acceptable|allowed|ok|okay)\b|\bunacceptable\b")
_RULE = re.compile(r"(?i)\b(?:always|must|make\s+sure|be\s+sure|ensure|important\s+to|needs?\s+to|you\s+should|"
                   r"only|prefer|as\s+\w+\s+as\s+possible|(?:i|we)\s+(?:really\s+)?(?:want|need|prefer))\b")
# "We do NOT want a full dashboard yet." (real_preferences_fresh2.json) is as much a rule as "I don't want ...".
_DONT_WANT = re.compile(r"(?i)\b(?:i|we)\s+(?:don'?t|dont|do\s+not)\s+(?:always\s+|really\s+|even\s+)?"
                        r"(?:want|need|like)\b")  # "I don't always need ... a "Why this works" section" (fresh3)
_ORDER = re.compile(r"(?i)\b(?:first|before|until|(?:start|begin)\s+(?:by|with))\b")
# "Check it properly and try to use daisy UI components" (real_preferences_fresh4.json)
_USE = re.compile(r"(?i)(?:^|\b(?:and|just|please|also|then)\s+)(?:try\s+to\s+)?(?:use|prefer|stick\s+to|keep\s+using)\s+"
                  r"(?:the\s+|a\s+|an\s+|only\s+)?(?P<x>[@\w][\w.\-/]*)")
_VIA = re.compile(r"(?i)\b(?:via|through|using|with|without|runnable\s+with)\s+(?:the\s+)?(?P<x>[@\w][\w.\-/]*)")
_RUN_FIRST = re.compile(r"(?i)\b(?:start|begin)\s+(?:by\s+)?running\s+(?P<x>[\w.\-/]+(?:\s+[\w.\-/]+)?)")
_QUESTION = re.compile(r"(?i)^\s*(?:why|what|how|where|which|who|when|can|could|should|would|will|do|does|did|is|are|"
                       r"have|has)\b")
_COMPLAINT = re.compile(r"(?i)^\s*why\s+did\s+(?:you|it)\s+(?:remove|delete|drop|change|rename|break|add|undo|revert)\b")
# "For commands that add to git, do a quick tail" (real_preferences_heldout.json): a rule for a kind of thing
_CONDITION = re.compile(r"(?i)^\s*(?:if|when|whenever|for\s+(?:all|every|each)|for\s+\w+\s+(?:that|which|where))\b"
                        r"[^,]{3,80},\s*\w+")
_AS = re.compile(r"(?i)\bas\s+(?:the\s+)?(?P<x>[\w\-]+)")  # "dont do things as root" (real_preferences_fresh2.json)
# "Generate with "tuist generate --no-open"" (real_preferences_fresh.json): how to do it, a quoted command
_VIA_IMPERATIVE = re.compile(r"(?i)^\s*(?:\w+\s+){0,5}(?:(?:via|through)\b|with\s+(?=[`\"“]))")
_CODE = re.compile(r"(?i)\b(?:don'?t|dont|do\s+not|never|no\s+need\s+to)\s+(?:produce|write|generate|give\s+me|show|"
                   r"output)\s+(?:any\s+)?code\b|"
                   r"(?:^\s*|[,(]\s*|\b(?:so|maybe|just|and|but)\s+)no\s+(?:new\s+|more\s+)?code\b(?!\s*(?:block|fence|review))")
# ("no new code. just redo the above report", "so maybe no code yet, double check here.": real_preferences_fresh6.json)
_TERM_IN = re.compile(r"`([^`\n]{1,40})`|(?<![A-Za-z])[\"'“]([^\"'”\n]{1,40})[\"'”](?![A-Za-z])|"
                      r"(?<![\w&])(#[0-9A-Fa-f]{6}|#[0-9A-Fa-f]{3})\b|(@?[\w./\-]+)")
# (a hex colour is a term: "The header background should be #090D22": real_preferences_fresh3.json)
_WEAK = frozenset("the a an it this that them me you us i we so just yet only again here there now then and or to "
                  "of in on for by be is are all any some shell command commands file files code way one ones e.g i.e etc".split())
# a polite question that states a rule ("Can we make sure that category name and its items are never separated by page
# break?": real_preferences_fresh4.json) is read for what it states
_RULE_WORD = re.compile(r"(?i)\b(?:never|always)\b")  # "Can we ... make sure this is working" only asks
_WORDISH = re.compile(r"[a-z]+(?:-[a-z]+)+|[A-Z]{2,}\d*")  # an English compound or an acronym, no name of a thing
_WHEN = re.compile(r"(?i)\b(?:until|unless|before|yet|if|till)\b")
_LITERALS = frozenset("None null undefined nil NaN nullptr".split())
_NO_FENCE = r"(?s)\A(?!.*```)"
# Sentences of one message read as directives (directives.py), as many as a task of the agent miner quotes
# (mine.QUOTES): a pasted plan's imperatives are not each a preference. On the development lists one turn held more
# (a pasted phase plan: 7 directives, 1 label); a cap of 3 cost 2 labels of fresh7's 5-label spec turn.
MAX_DIRECTIVES = 6
_TERMINAL = re.compile(r"➜|❯|\bgit:\(|^\s*(?:\(\w+\)\s+)?[\w@.\-~/:\\]*[$%#>]\s+\w")  # a shell prompt opens a paste


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
    text = forms.URL.sub(lambda u: _url_name(u.group(0)), text)
    shouted = _shouted(text)
    for m in _TERM_IN.finditer(text):
        t = (m.group(1) or m.group(2) or m.group(3) or "").strip() or m.group(4).rstrip(".,-").lstrip("@")
        if t in shouted and not (m.group(1) or m.group(2) or m.group(3)):
            continue
        # "No the @justfile version" (real_preferences_heldout.json): an @-mention names a file, a plain word too
        mention = bool(m.group(4) and m.group(4).startswith("@") and len(t) > 2)
        # "the base provider should also accept None" (real_preferences_fresh2.json): a language's literal
        literal = t in _LITERALS and not text[m.end():].lstrip().lower().startswith("of")
        if (m.group(1) or m.group(2) or m.group(3) or mention or literal or code_like(t)) and t.lower() not in _WEAK and t not in out:
            out.append(t.lstrip("@"))
    return out


def _url_name(url: str) -> str:
    """What a link names: its last path segment ("https://github.com/spider-gazelle/ssh2.cr" -> ssh2.cr), the name
    a reply uses, not the address."""
    tail = [p for p in url.rstrip("/.,").split("/")[3:] if p]
    return re.sub(r"\.git$", "", tail[-1]) if tail else url


def _chosen(s: str) -> str:
    """The thing a sentence chooses or names, a plain word included: a name given ("refer to it as "Policy""), a
    port or version, a colour, or what the user goes with, uses or installs ("I would go with Golang")."""
    for rx in (forms.NAMING, forms.BACK_TO, forms.SWITCH, forms.PICK, forms.NUMBERED, forms.COLOUR, asks.MOVE_TO,
               asks.REWRITE_IN, asks.PLACED_IN, asks.SETTING_IN, props.FILE_KIND, cons.DELEGATE, cons.PARAMETER,
               cons.REPLACE_WITH, cons.SOURCE):
        m = rx.search(s)
        x = (m.group("x") or m.groupdict().get("y") or "") if m else ""
        if rx is cons.SOURCE and x:
            x = _url_name(x)  # "download the pieces from here: https://github.com/.../cburnett": what it names
        elif len(x) > 40 and "/" in x.rstrip("/"):
            x = x.rstrip("/").rsplit("/", 1)[-1]  # "put all of them under ~/Developer/.../mission-control-dashboard/"
        if rx is forms.NAMING and x and not (x[0] in "`\"“" or code_like(x) or x[0].isupper()):
            continue  # "just call it don't need script dir": a name is quoted, code-like or capitalised
        if x:
            return _word(x.strip("`\"“”"))
    m = forms.CHOICE.search(forms.URL.sub(lambda u: _url_name(u.group(0)), s))
    quoted = re.search(r"[\"“`]([^\"”`\n]{1,40})[\"”`]", s[m.end("rest"):]) if m else None
    if quoted:  # "Let's go with your reccomendation, "ImageCollection"" (real_preferences_fresh3.json)
        return _word(quoted.group(1))
    said = [x for x in map(_word, m.group("rest").split() if m else []) if x and x.lower() not in forms.CHOICE_FILLER]
    if m and re.match(r"(?i)i\s+want", m.group(0)):  # a wish names a thing only by its name: "set up Posthog", never
        said = [x for x in said[:1] if code_like(x) or x[0].isupper()]  # "use custom folding" (heldout)
    elif m and re.search(r"(?i)incorporate|integrate|adopt", m.group(0)):  # what is built in is named somewhere in
        said = [x for x in said if code_like(x) or x[0].isupper()][:1]  # "incorporate being able to use ... Ollama"
    return said[0] if said else ""


def _left_out(s: str) -> Statement | None:
    """A thing the user leaves out with "no" ("(no npm)", "i need to have no php", ", no league": real_preferences_fresh6.json,
    _fresh4.json): a name (code-like, or an abbreviation written without a vowel) is banned from the reply; a plain
    word ("but no email") is judged against the user's words, as a reply may well name it."""
    m = cons.LEFT_OUT.search(s)
    if m is None:
        return None
    x = m.group("x").rstrip(".,-")
    # a name, and the thing itself ("(no npm)", "no php and"), never a name that qualifies a noun ("but no DOM work")
    # nor an English compound ("no self-rotate no stop": what to do instead is the user's to say)
    named = ((code_like(x) and not _WORDISH.fullmatch(x)) or bool(cons.ABBREVIATION.fullmatch(x))) \
        and x.lower() not in _WEAK and not x.isdigit() \
        and bool(re.match(r"(?i)\s*(?:$|[^\w\s]|(?:and|or|but|yet|anymore|please)\b)", s[m.end():]))
    # a plain word is left out only in a request that simplifies ("could it just have ... but no email", "let us just
    # select the latest seasons, no league"); elsewhere "no X" reports what the user sees ("No errors, just no change.",
    # "I've still got a shadow, no condensation commit": real_preferences_fresh3.json, _fresh.json)
    if not named and (re.match(r"(?i)\s*no\b", s) or not re.search(r"(?i)\bjust\b", s[:m.start()])):
        return None
    return Statement("avoid", " ".join(s.split())[:200], _absent(x) if named else None)


def _word(x: str) -> str:
    x = x.strip(".,;:!?)(").lstrip("@")
    return "" if not x or x.lower() in _WEAK or len(x) > 40 else x


def _directive_negation(sentence: str) -> re.Match[str] | None:
    for m in _NEGATED.finditer(sentence):
        lead = (m.group("lead") or "").strip().lower()
        if m.group("neg").lower() in ("without", "instead of"):
            return m
        if lead == "we" and re.match(r"(?i)shouldn'?t|should\s+not|must\s+not|mustn'?t|never", m.group("neg")):
            return m  # "We shouldn't use console.log." (real_preferences_fresh3.json): a norm, not a report
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
    s = asks.CURLY_LEAD.sub(r"\1'", asks.MARKED.sub("", s, count=1), count=1)
    s = asks.REACTION_LEAD.sub("", s, count=1)
    lead = forms.CONTEXT_LEAD.match(s)
    s = s[lead.end():] if lead else s
    if len(s.split()) < 2:
        return None  # "Stop." / "that." : the lead of a correction, not what it asks for
    if _COMPLAINT.match(s) or forms.BLAME.search(s):
        return Statement("avoid", words, None)  # "Why did you remove ..." : the user wanted it kept
    if forms.SUGGEST.match(s):
        if (has := forms.HAS_TO_BE.match(s)) and _word(has.group("x")):
            return Statement("avoid", words, _absent(has.group("x")))  # "does vscode have to be the name"
        be = forms.BE_WHAT.search(s)  # "shouldn't all new methods ... be final?"
        terms = _terms(s) or ([_word(be.group("x"))] if be and _word(be.group("x")) else [])
        return Statement("require", words, Check(op="contains", arg=terms[0]) if terms else None)
    polite = (forms.POLITE.match(s) or cons.ASKED_WAY.match(s)) and (forms.STATED.search(s) or asks.STANDING.search(s) or _RULE_WORD.search(s)
                                        or props.PROPOSED.search(s) or cons.CONSTRAINT.search(s)
                                        or props.REMOVE_FROM.match(s))
    if _QUESTION.match(s) and s.endswith("?") and not correction and not polite:
        return None  # a question asks; it states nothing
    if _CODE.search(s):
        return Statement("avoid", words, Check(op="regex", arg=_NO_FENCE))
    if _DONT_WANT.search(s):
        rest = s[_DONT_WANT.search(s).end():]  # type: ignore[union-attr]
        called = props.NOT_CALLED.search(rest)  # "i don't want it to be called beyonce" (fresh5)
        terms = _terms(rest) or ([_word(called.group("x").strip("`\"“”"))] if called else [])
        return Statement("avoid", words, _absent(terms[0]) if terms and terms[0] else None)
    neg = _directive_negation(s)
    not_ok = _NOT_OK.search(s)
    if neg and (sym := cons.SYMBOL.search(s[neg.end():])):
        # "never write those ugly-ass dashes commonly written by LLMS please —" (real_preferences_fresh6.json): the
        # character, wherever it stands ("a—b" too), not the words describing it
        return Statement("avoid", words, Check(op="not_contains", arg=sym.group("x")),
                         every_reply=neg.group("neg").lower() == "never")
    if neg or not_ok:
        tail = s[neg.end():] if neg else ""
        via = _VIA.search(s[neg.start():]) if neg else None
        if neg and neg.group("neg").lower() in ("without", "instead of") or (neg and "via" in neg.group("neg").lower()):
            term = next((w for w in map(_word, tail.split()[:3]) if w), "")
            term = "" if term.lower().endswith("ing") else term  # "without asking": no word to ban
        elif neg and (unused := forms.NEVER_USED.search(s)):
            term = _word(unused.group("x").strip("`\"'"))  # "watson should never be used"
        elif neg and (git := forms.GIT_VERB.match(tail)) and not _WHEN.search(tail):
            # "do not stash": the reply must not run `git stash`; "not to commit changes until final step" (the issue)
            # bans it only for a while, which no check of one reply can tell
            term = "git " + git.group("x").lower()
        else:
            # the banned thing follows the negation closely ("don't use CODEX_HOME"), never a removal or a thing kept
            # ("do not delete RTI folder yet", "should not be selectable in the CLI", "dont half ass it , compare the
            # @cli/seq-eco.mjs": real_preferences_fresh.json)
            near = "" if forms.KEEPS.match(tail) else " ".join(tail.split()[:4])
            terms = _terms(near) if neg else _terms(s[:not_ok.start()]) if not_ok else []
            term = terms[0] if terms else _word(via.group("x")) if via and not forms.KEEPS.match(tail) else ""
            if neg and not term and (as_ := _AS.search(" ".join(tail.split()[:6]))):
                term = _word(as_.group("x"))
        if neg and not term and (kept := forms.BACK_TO.search(s)) and _word(kept.group("y") or ""):
            # "don't change the model from gpt-5-nano" (real_preferences_fresh3.json): the reply keeps it
            return Statement("require", words, Check(op="contains", arg=_word(kept.group("y"))))
        if neg and not term:
            return Statement("order" if _ORDER.search(s) else "avoid", words, None)
        return Statement("avoid", words, _absent(term) if term else None,
                         every_reply=bool(neg and neg.group("neg").lower() == "never"))
    if left := _left_out(s):
        return left
    if (gone := cons.REMOVED.search(s)) and _word(gone.group("x")):
        return Statement("avoid", words, _absent(gone.group("x")))  # "the text "current game" ... is removed"
    if (gone := asks.GONE_ENTIRELY.search(s)) and _word(gone.group("x")):
        return Statement("avoid", words, _absent(_word(gone.group("x"))))  # "remove the fallback entirely"
    if (gone := forms.NO_SUCH.search(s)) and _word(gone.group("x").strip("`")):
        return Statement("avoid", words, _absent(_word(gone.group("x").strip("`"))))  # "there is no apps/web"
    if chosen := _chosen(s):
        return Statement("correction" if correction else "require", words, Check(op="contains", arg=chosen))
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
        # a rule word after what it rules ("it should import light-sdk-types witht the light-account feature always":
        # real_preferences_fresh2.json) rules the terms before it
        ends = rule is not None and not s[rule.end():].strip(" .!?")
        terms = (_terms(s[rule.end():]) or (_terms(s[:rule.start()]) if ends else [])) if rule else _terms(s)
        term = terms[0] if terms else _word(via.group("x")) if via else _word(use.group("x")) if use else ""
        if use and use.start() == 0 and _word(use.group("x")) and re.match(r"\s*(?:,|and\b)", s[use.end():]):
            term = _word(use.group("x"))  # "use typer, and uv just like in y.py": the first of the tools listed

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
    if cons.MISREAD.search(s):
        return Statement("correction", words, None)
    named = forms.NAMED_SUBJECT.match(s) if len(s.split()) >= 4 else None  # "HTML is :" says nothing
    subject = named.group("t").strip("`") if named else ""
    gone = props.REMOVE_FROM.match(s)
    if not (forms.STATED.search(s) or asks.STANDING.search(s) or forms.FACT.search(s) or props.PROPOSED.search(s)
            or cons.CONSTRAINT.search(s) or props.STILL_SEEN.search(s) or gone or (named and (code_like(subject) or named.group("t").startswith("`")))):
        return None
    terms = _terms(gone.group("x")) if gone else _terms(s)
    term = terms[0] if terms else ""
    if gone:  # a file removed from a place is named by the reply that removes it ("git rm config.yaml"): judged
        return Statement("avoid", words, _absent(term) if term and not re.search(r"[./]", term) else None)
    if term and (forms.GONE.search(s[:s.find(term)]) or props.STILL_SEEN.search(s[:s.find(term)])):
        return Statement("avoid", words, _absent(term))
    if forms.AGAINST.search(s) or (term and forms.NOT_BEFORE.search(s[:s.find(term)])):
        return Statement("avoid", words, None)
    return Statement("require", words, Check(op="contains", arg=term) if term else None)


def _also_chosen(sentence: str, st: Statement | None) -> Statement | None:
    """What a sentence that bans or blames one thing asks for in its place ("instead of black let's make the icon a
    green color": never `black`, and `green`; "I don't know why you went with ... Node.js ... we are going to go with
    Golang": real_preferences_fresh2.json)."""
    if st is None or st.kind != "avoid" or (st.check is None and not forms.BLAME.search(sentence)):
        return None
    chosen = _chosen(" ".join(sentence.split()))
    banned = st.check.arg.lower() if st.check is not None else ""
    return Statement("require", st.words, Check(op="contains", arg=chosen)) if chosen and chosen.lower() not in banned \
        else None


def _also_set(sentence: str, st: Statement | None) -> Statement | None:
    """The value a statement sets a name to ("(safety_gate = 0.7, = 1.0 will likely operate at bound and i dont like
    it)": real_preferences_fresh6.json): a reply that sets it writes the name with that value."""
    m = cons.SETTING.search(sentence) if st is not None else None
    if m is None or st is None or not code_like(m.group("x")):
        return None
    return Statement("require", st.words,
                     Check(op="regex", arg=re.escape(m.group("x")) + r"\s*[=:]\s*" + re.escape(m.group("v")) + r"(?!\.?\d)"))


def _also_gone(sentence: str, st: Statement | None) -> Statement | None:
    """An option a statement removes ("Also remove the -o option and always write to prompt_history.md.":
    real_preferences_fresh6.json): the reply never passes it."""
    m = cons.OPTION_GONE.search(sentence) if st is not None else None
    return Statement("avoid", st.words, _absent(m.group("x"))) if m and st is not None else None


def _listed(st: Statement, after: str) -> Statement:
    """A statement that introduces a list ("We're using the following colors:\n\nDeep Purple (#4A0E4E) for primary
    headings": real_preferences_fresh3.json) requires the first thing its list names."""
    items = re.split(r"\n\s*\n(?=\s*[^\s\-*\d])", after.lstrip("\n"), maxsplit=1)[0]
    terms = [t for t in _terms(items) if not _WORDISH.fullmatch(t)]  # never "a copy-pasteable prompt" (fresh3)
    return Statement(st.kind, st.words, Check(op="contains", arg=terms[0])) if terms else st


def _also_named(sentence: str, st: Statement | None) -> list[Statement]:
    """The other things a requirement names beside its first ("I'm most comfortable in JavaScript and TypeScript":
    real_preferences_fresh3.json; "import light-sdk-types witht the light-account feature": fresh2): each is required
    too, when the sentence negates nothing (a negated one is no requirement)."""
    if st is None or st.check is None or st.check.op != "contains" or st.kind == "order":
        return []
    s = " ".join(sentence.split())
    if forms.NOT_BEFORE.search(s) or forms.GONE.search(s):
        return []
    named = [t for t in _terms(s) if _a_name(t, st.check.arg) and t.lower() not in st.check.arg.lower()]
    return [Statement(st.kind, st.words, Check(op="contains", arg=t)) for t in named[:2]]


def _a_name(term: str, first: str) -> bool:
    """A term that names a thing beside the first one a requirement checks: a file, path, version or identifier
    (`light-sdk-types`, `TypeScript`), never an acronym ("MVP", "LLM") nor an English compound ("open-source",
    "one-by-one": real_preferences_fresh2.json, _fresh3.json) unless the first is a hyphenated name too."""
    if not code_like(term) or re.fullmatch(r"[A-Z]{2,}\d*", term):
        return False
    return not _WORDISH.fullmatch(term) or bool(re.search(r"[a-z]-[a-z]", first))


def _directed(sentence: str) -> list[Statement]:
    """A directive the form-based reading above left out (directives.py: an imperative with any verb, a norm, a
    wish, a replacement): checked on the concrete thing it names (a quoted string, a file, an identifier, a flag,
    a colour), present where the user wants it and absent where they want it gone; a directive naming no such
    thing is judged against the user's words."""
    found = directive_in(sentence)
    if found is None:
        return []
    at, d = found
    words = " ".join(sentence[at:].split())[:200]
    # a removal or change negated keeps the thing ("do not delete RTI folder yet"): nothing to ban; nor is an acronym
    # the user did not quote ("should not be selectable in the CLI")
    keeps = d.mood == "imperative" and forms.KEEPS.match(d.unwanted)
    bad = [t for t in _terms(d.unwanted) if not re.fullmatch(r"[A-Z]+\d*", t) or f"`{t}`" in sentence
           or f'"{t}"' in sentence][:1] if d.unwanted and not keeps else []
    # what the user wants is named before any negation ("make sure you dont use CODEX_HOME" wants no CODEX_HOME)
    wanted = re.split(r"(?i)\b(?:not|never|no|don'?t|dont|doesn'?t|without|instead\s+of|rather\s+than)\b|n't\b",
                      d.wanted, maxsplit=1)[0]
    # the outcome a purpose clause names comes first: "change the logic of expectedToc const, so that it's now
    # expectedMd const" wants expectedMd (real_preferences_fresh7.json)
    outcome = re.split(r"(?i)\b(?:so\s+that|so\s+it|such\s+that)\b", wanted, maxsplit=1)[1:]
    good = [t for t in [*_terms(" ".join(outcome)), *_terms(wanted)] if t not in bad and not _WORDISH.fullmatch(t)][:1]
    out = [Statement("avoid", words, _absent(t)) for t in bad] + \
        [Statement("require", words, Check(op="contains", arg=t)) for t in good]
    return out or [Statement("avoid" if d.unwanted and not d.wanted else "require", words, None)]


def stated_preferences(text: str, *, correction: bool | None = None, directives: bool = True) -> list[Statement]:
    """Every preference or correction stated in one user message, each with its words and, where the words name
    something testable, a check of it. `correction`: the message corrects the reply before it (by default: it
    opens with "No", "Stop", ...); then an imperative with any verb is what the user wanted instead. `directives`:
    also the directives the forms above miss (directives.py); the mining prompt's layout counts them too (round 7),
    so that a session of typed one-off corrections gets the parts and the tasks for what it states."""
    # a message that opens with the agent's words in quotes, then reacts ("\"I need to add a task status update to
    # in_progress ...\"\n\nno, it should not be set to in_progress"): the quote is the agent's, the rest the user's
    quoted = forms.QUOTED_LEAD.match(text)
    text = text[quoted.end():] if quoted else text
    typed = text
    text = slips.mend(text)  # "There shoud be a way ...": read as typed right, quoted as typed (slips.py)
    text = asks.PASTED_LINE.sub("", asks.ERROR_TAIL.sub("", asks.FENCED.sub("", text)))
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
    # a message that opens with pasted output ("(base) ➜  rtchess git:(main) node tests/premove.test.mjs") carries the
    # tools' advice ("To eliminate this warning, add ..."), not the user's directives
    first_line = next((x for x in body.splitlines() if x.strip()), "")
    left = 0 if _TERMINAL.search(first_line) or re.search(r"\S[ \t]{4,}\S", first_line.strip()) else MAX_DIRECTIVES
    for m in _SENTENCE.finditer(body):
        st = _one(m.group(0), correction)
        read = st is not None  # by the forms: a directive's other names are not each required ("change the logic of
        # expectedToc const, so that it's now expectedMd const": real_preferences_fresh7.json)
        directed = _directed(m.group(0)) if directives and left > 0 else []
        left -= bool(directed)
        if st is not None:  # what the forms read stands; a directive adds the concrete thing it names, if another
            directed = [x for x in directed if x.check is not None and x.check.op == "contains" and
                        (st.check is None or x.check.arg != st.check.arg)]
            directed = [st, *directed] if directed else []
        st = directed[0] if directed else st
        if st is not None and not directed and len(st.words.split()) <= 3 and (nxt := _SENTENCE.search(body, m.end())) and \
                "\n\n" not in body[m.end():nxt.start()] and _one(nxt.group(0), correction) is None:
            # a statement spread over two sentences ("no new code. just redo the above report for me now that i correct
            # you": real_preferences_fresh6.json; "do not stash.. there is a parallel session running": _fresh2.json):
            # a short clause is read with the sentence after it when that one states nothing by itself
            st = replace(st, words=f"{st.words} {' '.join(nxt.group(0).split())}"[:200])
        if st is not None and not directed and st.check is None and st.kind == "require" and \
                m.group(0).rstrip().endswith(":"):
            st = _listed(st, body[m.end():])
        for also in [*filter(None, [_also_chosen(m.group(0), st), _also_set(m.group(0), st),
                                    _also_gone(m.group(0), st)]),
                     *(_also_named(m.group(0), st) if read else []), *directed[1:]]:
            if also.check is not None and also.check.arg not in seen:
                seen.add(also.check.arg)
                out.append(also)
        if st is not None and not read and st.check is not None and st.check.arg in seen:
            st = replace(st, check=None)  # a directive naming a thing already checked is still the user's statement
        if st is None or (st.check is not None and st.check.arg in seen):
            continue
        if st.words.lower() in covered or (st.check is None and any(st.words.lower() in o.words.lower() for o in out)):
            continue
        if st.check is not None:
            seen.add(st.check.arg)
        out.append(st)
    if correction and not out and body.strip():
        # a correction of substance in a word or two ("Oops, I mean maverick": real_preferences_heldout.json): what the
        # user meant is what the reply names; the statement keeps the user's whole words
        meant = [w for w in map(_word, body.split()) if w]
        named = meant[-1] if 0 < len(body.split()) <= 2 and meant and not _WORDISH.fullmatch(meant[-1]) else ""
        out.append(Statement("correction", " ".join(text.split())[:200] if named else " ".join(body.split())[:200],
                             Check(op="contains", arg=named) if named else None))
    return [replace(st, words=slips.unmend(st.words, typed)) for st in out] if typed != text else out
