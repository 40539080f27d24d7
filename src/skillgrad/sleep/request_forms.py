"""Plain requests that state a standing choice: the forms newer users (Cursor, Copilot and SpecStory exports, long
planning prompts) use when a request says how the work should be done from now on, not only what to do now.

Read from the development lists real_preferences_fresh2.json, real_preferences_fresh3.json and
real_preferences_fresh4.json: a decision marked as one ("definitely create new table booking_invoices"), a scope
("Spell it out where used"), a complaint that recurs ("I am getting this error very often when you implement
something"), a reason for later ("We may need it in the near future"), a pattern to follow ("get inspiration from
current solution in booking form"), an approval ("/pos sounds good"), a taste ("I am fine with more A4 pages"), a
way of working ("do simple and small edits and check compilation regularly"), and where a thing goes or what it
becomes ("move @scripts/ to be in @assets/", "rewrite api2 completely in typescript", "create the plan in
docs/Claude"). Patterns only; statements.py decides what each checks. Linear-time patterns.
"""

from __future__ import annotations

import re

_MARKERS = (
    r"\b(?:definitely|absolutely)\b",  # a decision marked as one ("yes, keep ... for sure" is a plain yes)
    r"\b(?:everywhere|wherever|where\s+used|throughout\s+the)\b",  # a scope: the rule holds beyond this request
    # a complaint that recurs: what the agent keeps doing wrong is a standing correction
    r"\b(?:every\s+time|each\s+time|whenever|(?:very\s+)?often\s+when|again\s+and\s+again)\s+(?:you|u)\b",
    r"\b(?:write|note|put)\s+(?:it|this|that)\s+(?:down|somewhere)\b|\bkeep\s+(?:it|this|that)\s+in\s+mind\b",
    r"\bin\s+the\s+(?:near\s+|long\s+|distant\s+)?(?:future|term)\b|\bdown\s+the\s+(?:road|line)\b",
    # a stated priority ("yes, mobile access is important": real_preferences_fresh4.json)
    r"\b(?:is|are|it'?s)\s+(?:(?:very|really|super|extremely|also)\s+)?(?:important|crucial|essential)\b",
    # a pattern to follow: the project's own code or a past artefact
    r"\b(?:similar|consistent|in\s+line)\s+(?:to|with)\b|\bin(?:sp|ps)iration\s+from\b|\binspired\s+by\b",
    r"\bthe\s+way\s+(?:it'?s|it\s+is|it\s+was)\s+done\b|\bto\s+be\s+with\s+(?:the\s+)?other\b",
    r"\b(?:last|previous|existing|current)\s+(?:[\w’'-]+\s+){0,2}(?:template|convention|pattern|style)s?\b",
    # an approval of a thing the agent proposed, named ("/pos sounds good"); a bare "sounds good" approves nothing
    r"(?:^|(?<=\s))(?!(?:that|this|it|all|everything|which)\s)[^\s,.;!?]+\s+sounds?\s+(?:good|great|fine|perfect|"
    r"right|better)\b",
    r"\bi(?:'m|\s+am)\s+(?:(?:most|very|more|totally|perfectly)\s+)?(?:fine|ok|okay|happy|comfortable)\s+"
    r"(?:with|in)\b",
    # a way of working: small steps, checked as it goes
    r"\b(?:regularly|step\s+by\s+step|incrementally|one\s+(?:thing\s+|step\s+)?at\s+a\s+time)\b|"
    r"\bsmall\s+(?:and\s+\w+\s+)?(?:edits|changes|steps|commits)\b",
    r"\bnot\s+the\s+(?:actual|real|right|correct|same)\b",  # "this a builder not the actual blackbsd"
    r"\bcan'?t\s+afford\b|\bcannot\s+afford\b",  # "a signal we can't afford to send"
    r"\b(?:set\s+(?:it|this|things)\s+up|make\s+it)\s+so\s+that\b",  # "set it up so that Projects is what ..."
    r"\b(?:remove|drop|delete|get\s+rid\s+of)\b[^.;!?]{0,60}?\b(?:entirely|altogether|completely)\b",
    # an option picked by its letter or number ("ok so continue with  B: Rescue + dd"), never "continue with it"
    r"^\s*(?:(?:ok(?:ay)?|yes|yeah|so|then|good|great|perfect|fine|alright|cool)[\s,]+)*(?:continue|proceed|go)\s+with\s+(?:option\s+)?(?:(?-i:[A-Z])|\d+)\b"
    r"(?![\w'])",
)
STANDING = re.compile("(?i)" + "|".join(_MARKERS))

# What a removal "entirely" bans ("let's just remove the fallback entirely"): one word, never a phrase's head
# ("remove the possibility to add custom amount altogether" bans nothing by name).
GONE_ENTIRELY = re.compile(r"(?i)\b(?:remove|drop|delete|get\s+rid\s+of)\s+(?:the\s+|this\s+|that\s+|all\s+)?"
                           r"(?P<x>[\w.\-]+)\s+(?:entirely|altogether|completely)\b")
# Where a thing goes: its destination is what a reply must name ("i want to move @scripts/  to be in @assets/",
# "move `src/undo.layers.test.js` to `test/`", "Move dietary restrictions from guests to bookings").
MOVE_TO = re.compile(r"(?i)\bmove\s+(?!on\b|forward\b|ahead\b|back\b)(?:`[^`\n]{1,60}`\s+|[^\s,.;!?`]+\s+){1,7}?"
                     r"(?:from\s+(?:the\s+)?[^\s,.;!?]+\s+)?(?:to|into|under)\s+(?:be\s+(?:in|with|under)\s+)?"
                     r"(?:(?:the|a|an|its|their|our|my|your)\s+(?:own\s+)?)?"
                     r"(?!(?:right|left|top|bottom|front|end|side|back|start)\b)"  # "move the 4/4 to the right" is a way
                     r"(?P<x>`[^`\n]{1,40}`|@?[\w.\-/]*\w/?)")
# What a thing is rewritten in ("rewrite api2 completely in typescript").
REWRITE_IN = re.compile(r"(?i)\b(?:rewrite|re-write|port(?!\s+\d)|translate)\s+(?:[^\s,.;!?]+\s+){0,3}?"
                        r"(?:completely\s+|entirely\s+|fully\s+)?(?:in|to|into)\s+(?:the\s+)?(?P<x>[A-Za-z][\w+#.\-]*)"
                        r"(?=\s*(?:$|[,;:!?)]|\.(?!\w)|\b(?:and|with|for|using|instead)\b))")  # never "into plain ASCII text"
# Where a thing is made or kept, by its path ("create the plan in docs/Claude").
PLACED_IN = re.compile(r"(?i)(?:^\s*|\b(?:please|and|then|also|just|to|let'?s|you)\s+)(?:create|write|put|save|store|place|"
                       r"keep)\s[^.;!?\n]{0,50}?\b(?:in|into|under|inside)\s+"
                       r"(?:the\s+)?(?P<x>(?:~/)?@?[\w.\-]*[A-Za-z][\w.\-]*/[\w.\-/]*)")  # "can you put all of them under ~/Developer/..."
# Where a setting lives ("put the API endpoint into an environment variable").
SETTING_IN = re.compile(r"(?i)\b(?:in|into|from|as|via)\s+(?:an?\s+|the\s+)?(?P<x>environment\s+variables?|"
                        r"env\s+vars?|config(?:uration)?\s+files?)\b")

# Words before the statement that only react to the agent: "ehh, in this _specific_ gemini case, can we not ..."
# (real_preferences_fresh.json), "You're right load the env variable via ..." (real_preferences_heldout.json).
REACTION_LEAD = re.compile(r"(?i)^\s*(?:e+h+|u+m+|meh|you'?re\s+(?:right|correct))\b[\s,.!:;-]*(?=\S)")

# A mark of approval or refusal before an item ("✅ Keep SPDA for Unity/Harmony-facing classes", "❌ Don’t prefix every
# internal class": a TL;DR the user writes in real_preferences_fresh5.json): the item is read as the sentence after
# it. A plain "- " bullet is not: long prompts list specs and steps that way ("- Use multiple search strategies
# (glob patterns, grep, AST search)" in real_preferences_fresh2.json is no rule of the user's).
MARKED = re.compile(r"^\s*[✓✔✅☑❌✗✘✖⛔🚫👉][\s\ufe0f]*(?=\S)")
# A negation typed with a typographic apostrophe ("Don’t prefix ..."), read as "Don't" at the start of a sentence
# only: "some older players don’t recognize the .m3u8 extension" (fresh5) is a report, which the straight form also
# misreads as a ban.
CURLY_LEAD = re.compile(r"^(\w+)’(?=t\b)")

# Output pasted into a request, not the user's words: a fenced block, an error with the clause that introduces it
# ("When testing it, there is this error: QRCode Hook - ..."), and lines
# of a log or a stack (a `file.ex:590:` frame, "(node:42249) ExperimentalWarning", "** (Ecto.Query.CompileError)",
# a "> NODE_OPTIONS=..." prompt, a timestamped CI log line, an indented block): real_preferences_fresh3.json and real_preferences_fresh4.json,
# where "must"/"should"/"in the future" inside such output read as the user's rules.
FENCED = re.compile(r"```.*?(?:```|\Z)", re.S)
ERROR_TAIL = re.compile(r"(?im)[^.!?\n]*\b(?:error|errors|exception|warning)\s*:.*$")
PASTED_LINE = re.compile(r"(?m)^(?:[ \t]{4,}\S|[ \t]*(?:>|\*\*\s*\(|\(\w+:\d|(?:FAIL|PASS)\s|npm\s+(?:err|warn)|\d{4}-\d\d-\d\dT\d\d:)|.*\b[\w\-]+\.\w{1,4}:\d+\b).*$")
