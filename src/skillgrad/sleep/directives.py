"""A directive sentence, by its grammar alone: what the user tells the agent to do, with any verb.

Five form rounds (statement_forms.py, constraint_forms.py, request_forms.py) each took the list they were read from
to ~90 % recall but moved a list never read by 1-3 labels: new users bring new verbs. This module recognises a
directive by its shape, not its vocabulary, from closed-class English words only (pronouns, determiners,
prepositions, conjunctions, auxiliaries, question words); no content verb of any labelled list is named:

- an imperative: a sentence that opens (after discourse words: "ok,", "also", "please", "can you", "let's", a
  bullet) with a word that can be a base verb (no closed-class word, no -ing / -ed / -ly / plural -s form, no name
  of a thing) followed by something that is not a verb of its own ("update X so that ...", "color code them");
- a norm: a subject and should / must / needs to / has to / is supposed to, or a negated modal ("X should be
  purely ...", "the script needs to ...");
- a wish or dislike: "I want / I'd like / I wanna / I need / I prefer / I don't like / I don't want / I don't care";
- a replacement: "instead of X", "rather than X", "X, not Y"; a ban: "no more X"; a restriction: "only X" opening
  a clause.

Questions (a "?" or a question word first, but "can / could / would you <verb>"), pasted code or logs and text in
another's voice (a heading, a stack frame, markup) are no directives. `statements.py` turns a directive into a
statement and its check. Pure functions, linear-time patterns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from skillgrad.sleep.preferences import code_like
from skillgrad.sleep.statement_forms import PASTED

Mood = Literal["imperative", "norm", "wish", "replace", "ban", "only"]

# Discourse words before the directive proper ("ok, but update ...", "Moreover, color code them", "great! put ...",
# "so maybe", "- use as few ...", "1. add ..."); a bullet or number opens a list item.
_LEAD = re.compile(r"(?i)^(?:\s*(?:[-*•>]+|\d{1,2}[.)])\s+|\s*(?:ok(?:ay)?|k|alright|all\s+right|right|now|also|then|so|"
                   r"and|but|or|just|please|pls|plz|kindly|moreover|additionally|furthermore|finally|lastly|secondly|"
                   r"besides|anyway|anyways|well|yes|yeah|yep|yup|sure|hey|hi|hello|oh|ah|hmm+|great|good|nice|cool|"
                   r"perfect|awesome|thanks|thank\s+you|maybe|perhaps|first(?:ly)?|next|again|instead|otherwise|"
                   r"actually|basically|honestly|at\s+least|for\s+now|this\s+time|from\s+now\s+on|in\s+addition)"
                   r"(?![\w'’-])[\s,.!:;-]*)+")
# A polite request ("can you please provide ...", "could you make ...") or a suggestion of a shared action
# ("let's use ...", "let us ..."): what follows is the verb.
_POLITE = re.compile(r"(?i)^(?:(?:is|would)\s+it\s+(?:be\s+)?possible\s+(?:for\s+you\s+)?to\s+|(?:would|do)\s+you\s+mind\s+|"
                     r"(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+|pls\s+|kindly\s+|maybe\s+|"
                     r"also\s+|just\s+|now\s+)*|let'?s\s+|let\s+us\s+|lets\s+)")
_QUESTION_WORD = frozenset(
    "what why how where when which who whom whose is are was were am do does did have has had isn't aren't wasn't "
    "weren't doesn't don't didn't haven't hasn't shall should would could can will won't wouldn't couldn't "
    "shouldn't can't may might any anything".split())
# Closed-class words (and the few sentence openers that are never a verb: interjections, evaluations): a sentence
# opening with one of these is no imperative.
_CLOSED = frozenset(
    # pronouns and determiners
    "i me my mine myself you your yours yourself we us our ours he him his she her it its itself they them their "
    "theirs this that these those there here the a an some any all both each every either neither no none nothing "
    "something everything anything someone everyone anyone somebody everybody nobody one another other others such "
    "same own which what who whom whose whatever whichever whoever "
    # prepositions and conjunctions
    "about above across after against along among around as at before behind below beneath beside between beyond by "
    "despite down during except for from in inside into like near of off on onto out outside over past since "
    "through throughout till to toward towards under underneath unlike until up upon via with within without and "
    "but or nor yet so because although though while whereas if unless whether than once "
    # auxiliaries, modals, copulas, negation
    "be is are was were been being am do does did done doing have has had having will would shall should can could "
    "may might must ought not never don't doesn't didn't isn't aren't wasn't weren't won't wouldn't can't cannot "
    "couldn't shouldn't haven't hasn't hadn't i'm i've i'd i'll you're you've you'd you'll we're we've we'd we'll "
    "it's that's there's here's what's let's he's she's they're they've "
    # adverbs, interjections, evaluations, numbers
    "also still just only even already really very too quite rather almost again always sometimes often usually "
    "simply maybe perhaps probably not now then anyway however therefore thus hence meanwhile otherwise instead yes no "
    "yeah nope nah ok okay oh ah wow hmm hm well great good nice cool perfect awesome excellent fine sorry thanks "
    "thank please wait hey hi hello same ugh oops lol why how where when while "
    "one two three four five six seven eight nine ten first second third last next new old most many much more "
    "less few several "
    # common irregular past forms that are no base form ("got merge conflicts from parent")
    "got went saw made found took gave came said told ran wrote broke left kept thought knew felt built sent lost "
    "forgot bought brought caught taught meant heard held stood understood began became chose drove fell grew "
    "spoke threw woke won paid sold spent led".split())
# An imperative that says how, not only what: a purpose or condition, a comparison, a restriction, a negation, a
# parenthesis or quote. "commit and push", "go ahead", "Create a PR", "fix it up" say only what
# (the labelled lists count plain requests as no preference); "color code them (borders, not text)", "Use stdout
# if ... is not specified", "console log the generated .md text so that i see ..." say how.
_HOW = re.compile(r"(?i)\b(?:so\s+(?:that|it|they|we|i)|such\s+that|if|unless|when(?:ever)?|instead|rather|not|"
                  r"only|just|each|every|always|never|same|similar|without|using|exactly|first|before|after|until|"
                  r"for\s+now|anymore|any\s+more|as\s+(?:a|an|the)|as\s+\w+\s+as)\b|n't\b|[(\"`“]|#[0-9A-Fa-f]{3,6}\b")
# The second word of a sentence that opens with a subject (a noun, not a verb): an auxiliary, a copula, a modal or
# a negation ("page is grey", "tests don't pass", "output looks wrong").
_AFTER_SUBJECT = re.compile(r"(?i)^(?:is|are|was|were|isn'?t|aren'?t|wasn'?t|weren'?t|has|have|had|hasn'?t|"
                            r"haven'?t|will|would|should|shall|can|could|may|might|must|does|do|did|doesn'?t|"
                            r"don'?t|didn'?t|won'?t|can'?t|cannot|seems?|looks?|appears?|works?|worked|still|"
                            r"now|also|just|never|always|not)\b|^'s\b")
_PRONOUN = frozenset("i you we they it he she this that these those there which who what".split())
_COPULA = re.compile(r"is|are|was|were|isn'?t|aren'?t|wasn'?t|weren'?t|'s")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")
_NORM = re.compile(r"(?i)^(?P<subject>(?:[^\s?]+\s+){1,8}?)(?P<modal>should(?:n'?t|\s+not)?|shoudl|shall|"
                   r"must(?:n'?t|\s+not)?|needs?\s+to|has\s+to|have\s+to|ought\s+to|(?:is|are)\s+supposed\s+to|"
                   r"(?:can'?t|cannot|can\s+not|is\s+not\s+allowed\s+to|are\s+not\s+allowed\s+to))\s+"
                   r"(?P<rest>\S.*)")
# A norm on someone else ("I have to go", "it should work now", "it can't find the module"): a report, not a rule.
_NOT_A_NORM = re.compile(r"(?i)^(?:i|it|this|that|which|there|he|she)\s+(?:have|has|should|need|needs|can'?t|cannot|"
                         r"can\s+not|may|must)\b(?!\s+(?:not\s+)?(?:be|use|have|only|always|never|include|contain))|"
                         r"^(?:it|this|that)\s+should\s+(?:be\s+)?(?:work|working|fine|ok|okay|good|done|fixed)\b")
_WISH = re.compile(r"(?i)\b(?:i|we)\s+(?:really\s+|just\s+|also\s+|only\s+|still\s+|actually\s+)*"
                   r"(?P<verb>want(?!\s+to\s+(?:know|understand|ask|check\s+if|see\s+(?:if|whether|why|what|how)))|"
                   r"wanna(?!\s+(?:know|understand|ask))|need(?!\s+to\s+(?:know|understand|ask|go))|prefer|"
                   r"(?:'d|’d|\s+would)\s+(?:like|prefer|rather|love)|"
                   r"(?:don'?t|dont|do\s+not|don’t)\s+(?:want|like|need|care)|hate|dislike|expect)\b")
# What "instead of" rules out runs to a comma (within 8 words), else 5 words ("instead of directly checking for
# 'OPEB' it checks it against a constant defined in @constants.py": the rest is what the user wants).
_REPLACE = re.compile(r"(?i)\b(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+"
                      r"(?P<x>[^\s,;]+(?:\s+[^\s,;]+){0,7}(?=\s*[,;])|[^\s,;]+(?:\s+[^\s,;]+){0,4})")
# "(borders, not text)", "X, but not Y": the second is the unwanted one
_X_NOT_Y = re.compile(r"(?i)(?P<x>[\w.#@`\"'/\-]+),\s*(?:but\s+)?not\s+(?:the\s+|a\s+|an\s+)?(?P<y>[\w.#@`\"'/\-]+)\s*"
                      r"(?=$|[),.;:!])")
_BAN = re.compile(r"(?i)\bno\s+more\s+(?P<x>\S+(?:\s+\S+){0,4})")
_ONLY = re.compile(r"(?i)(?:^|[,;:(]\s*|\b(?:and|but)\s+)only\s+(?P<x>[a-z]\w*\s+\S.*)")
_NEGATED_IMPERATIVE = re.compile(r"(?i)^(?:don'?t|dont|don’t|do\s+not|never|stop|avoid|quit)\b\s*")
# Pasted code, logs and markup: a stack frame, a prompt, a file:line, an assignment or call with brackets, markup.
_PASTED = re.compile(r"(?:^|\s)(?:at\s+\S+\s+\(|File\s+\"|Traceback|\$\s+\w|>>>\s)|=>|::|\)\s*[;{]|"
                     r"^\s*[{}\[\]<]|</?[a-z][\w-]*[\s>]|\b\w+\(\)\s*[{;]|\b[A-Za-z_]\w*\s*=\s*\S|"
                     r"^\s*(?:import|from|def|class|const|let|var|export|function|return|public|private|SELECT|INSERT|"
                     r"UPDATE|DELETE)\s+[\w{*]")
# A command line ("curl -fsSL https://... | bash", "api git:(main) ✗ fly deploy") or a schema line ("content TEXT")
_COMMAND = re.compile(r"^[a-z][\w.\-]*\s+(?:[a-z][\w.\-@]*\s+)?-{1,2}[a-zA-Z]|\|\s*[a-z]|\bgit:\(|^[a-z_]\w*\s+[A-Z]{3,}\b")
_SYMBOLS = re.compile(r"[{}\[\]<>=;|\\$]")


@dataclass(frozen=True)
class Directive:
    """A directive and where its check lies: `wanted` the words naming what the user wants (the object after the
    verb), `unwanted` what they want gone (after a negation, "instead of", "no more", the Y of "X, not Y")."""

    mood: Mood
    wanted: str = ""
    unwanted: str = ""


def _lead_stripped(s: str) -> tuple[str, bool]:
    """The sentence without its discourse lead, and whether it opened as a polite request."""
    m = _LEAD.match(s)
    s = s[m.end():] if m else s
    polite = _POLITE.match(s)
    if polite:
        s = s[polite.end():]
        m = _LEAD.match(s)  # "can you please ..."
        s = s[m.end():] if m else s
    return s.strip(), bool(polite)


def pasted(s: str) -> bool:
    """Code, a log line or markup rather than the user's own sentence."""
    return bool(_PASTED.search(s) or PASTED.search(s) or _COMMAND.search(s)) or len(_SYMBOLS.findall(s)) > max(3, len(s) // 25)


def _verb_like(word: str) -> bool:
    """A sentence's first word that can be a base verb: a plain lower-case-able English word, not closed-class, not
    a participle, adverb or plural/third-person form, not the name of a thing (a file, an identifier)."""
    w = word.lower().replace("’", "'")
    if not w.isalpha() or len(w) < 2 or w in _CLOSED or code_like(word):
        return False
    if word.isupper() and len(word) > 1:
        return False  # an acronym or shouting ("TODO", "NO")
    if w.endswith("ing") or (w.endswith("ly") and len(w) > 4 and not w.endswith("ply")) or \
            (w.endswith("ed") and not w.endswith("eed") and len(w) > 4):  # "apply", "reply" are verbs
        return False
    return not (w.endswith("s") and not w.endswith(("ss", "us")))


def _imperative(s: str) -> Directive | None:
    words = s.split()
    if len(words) < 2:
        return None
    first = _WORD.match(words[0])
    if first is None or first.group(0) != words[0].rstrip(",") or not _verb_like(first.group(0)):
        return None
    for w in words[1:6]:  # "non tier prices are working just fine", "separate section for priceslists is fine"
        w = w.lower().strip(",.;:!")
        if w in _PRONOUN:
            break  # "make sure it is ...": the copula is a clause's of its own
        if _COPULA.fullmatch(w):
            return None
    if re.match(r"(?i)let\s+me\b", s):
        return None  # the agent's own line pasted back ("Now let me check the test data ...")
    if words[1].lower() == "me" or words[0].endswith(","):
        return None  # a request for help or output ("help me fix ...", "give me ..."), or a lead ("welp, ...")
    if words[0].endswith(":") or (words[1].endswith(":") and words[0][:1].isupper()) or _AFTER_SUBJECT.match(" ".join(words[1:])):
        return None  # a heading ("Guidelines:", "Bug Report: ...", never "keep the background-color: #ffcb09") or a
        # subject and its verb ("page is grey")
    if not _HOW.search(s):
        return None  # a plain request ("commit and push", "go ahead") says what, not how
    return Directive("imperative", wanted=" ".join(words[1:]))


def directive(sentence: str) -> Directive | None:
    """The directive a user's sentence states, or None for a question, a report, pasted text or a fragment."""
    s = " ".join(sentence.split()).replace("’", "'")
    if not s or pasted(s):
        return None
    body, polite = _lead_stripped(s)
    if len(body.split()) < 2:
        return None
    if m := _REPLACE.search(s):
        # asked as a question too ("how can i use #702082 instead of rgba(255, 57, 57, 10)", "can we change this so
        # that instead of ..."): a replacement names what the user wants, whatever the mood
        return Directive("replace", wanted=f"{s[:m.start()]} {s[m.end():]}", unwanted=m.group("x"))
    first = body.split()[0].lower().strip(",.:;!")
    if not polite and (first in _QUESTION_WORD and not _NEGATED_IMPERATIVE.match(body)):
        return None  # a question ("is the migration pointing to local now?") or a clause with no directive
    if s.rstrip().endswith("?") and not polite:
        return None
    if (neg := _NEGATED_IMPERATIVE.match(body)) and len(body[neg.end():].split()) >= 1:
        return Directive("imperative", unwanted=body[neg.end():])
    if (m := _X_NOT_Y.search(s)) and (_verb_like(body.split()[0]) or "(" in s[:m.start()] and ")" in s[m.end():]):
        # "Make auth feel contextual, not separate", "color code them (borders, not text)"; never a report ("i see the
        # raw text of the markdown, not a table")
        return Directive("replace", wanted=m.group("x"), unwanted=m.group("y"))
    if m := _BAN.search(s):
        return Directive("ban", unwanted=m.group("x"))
    if m := _WISH.search(s):
        rest = s[m.end():]
        if re.match(r"(?i)\s+(?:(?:you\s+to\s+|u\s+to\s+)?help\b|(?:a|an|some|another|more)\s)", rest):
            return None  # a request for help or for a new thing ("I also want you to help create similar stuff", "we
            # also need a feature to uninstall the app"), not how the work goes
        negative = bool(re.match(r"(?i)(?:don'?t|do\s+not)|hate|dislike", m.group("verb")))
        return Directive("wish", wanted="" if negative else rest, unwanted=rest if negative else "")
    if (m := _NORM.match(body)) and not _NOT_A_NORM.match(body) and \
            m.group("subject").split()[0].lower() not in (*_QUESTION_WORD, "i", "i'm", "i've") and \
            not _NOT_A_NORM.match(f"{m.group('subject').split()[-1]} {m.group('modal')} {m.group('rest')}"):
        negative = bool(re.search(r"(?i)n'?t|not|can", m.group("modal")))
        rest = m.group("rest")
        return Directive("norm", wanted="" if negative else f"{m.group('subject')} {rest}",
                         unwanted=rest if negative else "")
    if (m := _ONLY.search(body)) and _verb_like(m.group("x").split()[0]):
        return Directive("only", wanted=m.group("x"))  # "only use chmod options when needed", never "only on create"
    return _imperative(body)


_CLAUSE = re.compile(r",\s+(?=\S)")
_ASKED = re.compile(r"(?i)^\s*(?:[^\s?]+\s+){1,4}?(?=(?:can|could|would)\s+(?:you|u)\b|(?:is|would)\s+it\s+(?:be\s+)?possible\b)")


def directive_in(sentence: str) -> tuple[int, Directive] | None:
    """The directive of a sentence, or of its first clause after a comma that is one ("ok you know what , i change my
    mind , find another (simpler) mermaid graph ...", "If not found, then name the file ..."), with where it starts."""
    if re.search(r"\S[ \t]{4,}\S", sentence.strip()):
        return None  # column-aligned output ("nvim_plugins done          Error detected while processing ...")
    if d := directive(sentence):
        return 0, d
    if pasted(" ".join(sentence.split())):
        return None
    if (ask := _ASKED.match(sentence)) and (d := directive(sentence[ask.end():])):
        return ask.end(), d  # "for this header can you apply a similar gradient effect ..."
    for m in _CLAUSE.finditer(sentence):
        if d := directive(sentence[m.end():]):
            return m.end(), d
    return None
