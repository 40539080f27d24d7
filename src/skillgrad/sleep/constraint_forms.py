"""How users state a constraint on the work as a thing left out, a contrast, a setting or a way of working, and what a
reply must name or leave out.

Read from the development list real_preferences_fresh6.json (Claude Code, Cursor, Copilot CLI and Codex CLI users,
the fifth round) and the misses of the earlier lists: a thing left out with "no" ("deployed on GitHub Pages, using
Supabase for auth via the JS CDN (no npm)", "i need to have no php", "let us just select the latest seasons, no
league"), a character banned by itself ("never write those ugly-ass dashes ... —"), a value the user set
("safety_gate = 0.7"), a parameter the user defines ("by SCALE_UP_FACTOR (which is an args from user cli)"), who is
to do the work ("tell sonnet to do it"), where a thing comes from ("download the pieces from here: https://..."),
a replacement ("Let's replace PR review with the PR review toolkit"), text to be removed ("the text "current game"
and "board" is removed"), a contrast ("a per user update and not a server wide update"), fewer of something ("a new
proposal with less files"), an order asked for ("invert order 1,3,2", "Order the blocks by timestamp ascending"),
and a way of working ("Stop and wait for my review.", "so that you don't make this mistake again"). Patterns only;
statements.py decides what each checks. Linear-time patterns.
"""

from __future__ import annotations

import re

# A thing left out, after "no": in parentheses, after a comma, or after have / with / but / and / just ("(no npm)",
# "have no php", "but no email", ", no league", "with no directing to other pages yet"). Never an idiom ("no need",
# "no idea", "no longer") nor a pronoun or a number.
LEFT_OUT = re.compile(r"(?i)(?:\(\s*|,\s*|\b(?:have|having|with|but|and|just|so)\s+|^\s*)no\s+"
                      r"(?!(?:need|needs|idea|problem|problems|worries|matter|longer|way|one|doubt|wonder|clue|"
                      r"reason|sense|thanks|it|this|that|the|a|an|i|you|we|more)\b)"
                      r"(?:new\s+|other\s+|extra\s+)?(?P<x>[@.\w][\w.\-/+#]*)")
# A name written without a vowel (npm, php, pnpm, nvm, css): an abbreviation, never an English word.
ABBREVIATION = re.compile(r"(?i)[b-df-hj-np-tv-xz]{2,6}")
# A character named by itself beside a negation ("never write those ugly-ass dashes ... —"): the character is the ban.
SYMBOL = re.compile(r"(?<!\S)(?P<x>[—–…•→←⇒✨🚀]|--)(?=[\s.,;:!?)]|$)")
# A value the user sets ("safety_gate = 0.7, = 1.0 will likely operate at bound and i dont like it"): the first value
# given to a name is the one chosen.
SETTING = re.compile(r"(?P<x>[A-Za-z_][\w.]*[_.A-Z][\w.]*|[a-z]+[A-Z]\w*)\s*(?:=|:=)\s*(?P<v>-?\d+(?:\.\d+)?)(?![\w.])")
# A parameter the user defines ("by SCALE_UP_FACTOR (which is an args from user cli)").
# Never a pasted error ("Error parsing option cache-default (option not found)"): the parenthesis says what it is.
PARAMETER = re.compile(r"(?i)(?P<x>[\w.\-]+)\s*\(\s*(?:(?:which|that)\s+is\s+|it'?s\s+)(?:an?\s+|the\s+)?"
                       r"(?:args?|argument|option|flag|param(?:eter)?|setting|env(?:ironment)?\s+var(?:iable)?)\b")
# Who is to do the work ("You can tell how to do it, to sonnet and tell sonnet to do it with a prompt").
DELEGATE = re.compile(r"(?i)\b(?:tell|ask|have|let|get)\s+(?!(?:me|him|her|them|us|it|you|someone|somebody|the|"
                      r"this|that|everyone|how|what|why|where|when|which)\b)(?P<x>[A-Za-z][\w.\-]*)\s+(?:to\s+)?(?:do|handle|implement|write)\s+"
                      r"(?:it|this|that|them)\b")
# Where a thing comes from: a link the user gives ("download the pieces from here: https://github.com/.../cburnett").
SOURCE = re.compile(r"(?i)\b(?:download|fetch|take|grab|copy)\b[^.;!?\n]{0,50}?\bfrom\s+(?:here\s*:?\s*)?"
                    r"(?P<x>https?://[^\s)>\]\"'`]+)")
# A replacement ("Let's replace PR review with the PR review toolkit"): what it becomes, up to four words.
REPLACE_WITH = re.compile(r"(?i)^\s*(?:(?:let'?s|please|just|also|we\s+(?:should|will|can))\s+)*replace\s+(?:[^\s,.;!?]+\s+){1,5}?with\s+(?:the\s+|a\s+|an\s+)?"
                          r"(?P<x>[\w.\-]+(?:\s+(?!and\b|so\b|to\b|for\b|in\b|instead\b)[\w.\-]+){0,3})\s*(?:[,.;!?]|$)")
# Text the user wants gone, said in the passive ("And the text "current game" and "board" is removed").
# Said as what the result is to be, never as what happens ("the colors ... get dropped" reports a bug: fresh5).
REMOVED = re.compile(r"(?i)[\"“`](?P<x>[^\"”`\n]{1,40})[\"”`][^.;!?]{0,40}?\b(?:is|are|be)\s+"
                     r"(?:removed|deleted|hidden)\b")

# An option of a command the user wants gone ("Also remove the -o option and always write to prompt_history.md.").
OPTION_GONE = re.compile(r"(?i)\b(?:remove|drop|delete|get\s+rid\s+of)\s+(?:the\s+)?[`\"“]?(?P<x>-{1,2}[A-Za-z][\w\-]*)[`\"”]?\s+"
                         r"(?:option|flag|argument|switch|parameter)\b")
# A question that is a request ("is there a way to make the pagination within the embed a per user update and not a
# server wide update?").
ASKED_WAY = re.compile(r"(?i)^\s*is\s+there\s+(?:a|any)\s+way\s+(?:to|that)\b")

_CONSTRAINTS = (
    # a contrast inside a request ("a per user update and not a server wide update", "more like a personal tool we
    # instll localy and it help you, not a hosted solution")
    r"\band\s+not\s+(?:an?|the)\s+\w+",
    r"\bmore\s+like\s+an?\b[^.;!?]{0,80}?,\s*not\s+an?\b",
    # fewer of something ("Make a new proposal with less files and a flatter folder structure")
    r"\bwith\s+(?:even\s+|much\s+|far\s+)?(?:less|fewer)\s+\w+",
    # an order asked for ("invert order 1,3,2 for tiers", "Order the blocks by timestamp ascending.")
    r"\binvert\s+(?:the\s+)?order\b|^\s*(?:order|sort)\s+(?:the\s+)?[\w\-]+(?:\s+[\w\-]+){0,3}\s+by\s+\w+",
    # a way of working: wait for the user, confirm first, a mistake not to repeat, a note for later
    r"\b(?:wait|stop)\s+(?:and\s+wait\s+)?for\s+(?:my|the\s+user'?s?)\s+(?:review|approval|confirmation|go-?ahead|ok)\b",
    r"\bconfirm(?:ed)?\s+with\s+(?:the\s+)?(?:user|me)\b",
    r"\b(?:this|that|the\s+same)\s+mistake\s+again\b|\bupdate\s+your\s+(?:instructions|rules|memory)\b",
    r"\bnote\s+(?:it\s+|this\s+|that\s+)?down\b|\bfor\s+(?:the\s+)?future\b|\b(?:each|every)\s+time\s*[.!]*$",
    r"\bbetween\s+(?:each|every)\s+\w+",  # "Make a big separator line between each block (prompt or commit)"
    # a wish that names what is wanted ("I would like to use the same structure for my app", "I'd like for a human
    # to review a complete solution proposal"), never a request for help or to know
    r"\bi(?:'d|\s+would)\s+(?:(?:really|also|ideally|just)\s+)*like\s+(?:for\s+(?!(?:you|u|me)\b)|"
    r"to\s+(?:(?:ideally|just|also)\s+)*(?:use|keep|avoid|stick))",
    r"\b(?:use|follow|keep|match)\s+the\s+same\s+(?:structure|pattern|style|layout|approach|format|design)\b",
    # removal decided ("Let's remove the red highlight for taking"), a rule with its condition ("Let's have a red
    # highlight when a king is in check")
    r"^\s*let'?s\s+(?:remove|drop|delete|get\s+rid\s+of)\b",
    r"^\s*let'?s\s+(?:have|show|add|use|keep)\b[^.;!?]{0,60}\b(?:when|whenever|if)\b",
    # what the user hoped for or means ("I was hoping it to trigger a permission request even in ...", "i dont mean
    # by "mathcing position", it just matching path"), what the agent said that is wrong ("the object state keep
    # changing you say ??, but it does not change at all")
    r"\bi\s+was\s+hoping\b",
    # a rule stated as a definition or its consequence ("For pawns, yes double step is considered a valid move",
    # "Being in check has no other effect than the overlay", "This means that you can premove onto your own pieces")
    r"\b(?:is|are)\s+considered\s+(?:an?\s+)?(?:valid|invalid|legal|illegal|allowed|part|correct)\b",
    r"\bno\s+other\s+\w+\s+than\b|^\s*this\s+means\s+(?:that\s+)?(?:you|we|it)\b",
    r"^\s*(?:yes|yeah|yep)[,\s]+(?!(?:it|that|this|i|you|we|they|please|do|go|continue|proceed|sure)\b)"
    r"[a-z]\w+\s+(?:can|should|must|is|are)\s+(?:be\s+)?(?:an?\s+)?\w+",
    r"^\s*(?:(?:and|so|also|but)\s+)?we\s+keep\s+(?!\w+ing\b)",  # "And we keep supervisor get hub review separate."
    # a scope: the change holds for every such thing ("Can you also add this check for any agent-os/sbe/* path?")
    r"\bfor\s+(?:any|every|all)\s+(?:\S+\s+){0,2}?(?:paths?|files?|folders?|directories|pages?|endpoints?|routes?)\b",
    # a preference marked as one ("I would like to ideally just have a question asked to me")
    r"\bideally\b",
)
CONSTRAINT = re.compile("(?i)" + "|".join(_CONSTRAINTS))
# What the user did not mean, or what the agent said that is wrong ("i dont mean by "mathcing position", it just matching
# path", "the object state keep changing you say ??, but it does not change at all"): the words the user quotes are the
# misreading, so the statement is judged against the user's words, never checked on them.
MISREAD = re.compile(r"(?i)\bi\s+(?:don'?t|dont|do\s+not|didn'?t|did\s+not)\s+mean\b|"
                     r"\byou\s+(?:say|said|claim(?:ed)?)\b[^.;!]{0,20}?\bbut\b")
