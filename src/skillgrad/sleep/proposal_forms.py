"""How users state a change they want as a wish, a proposal, a contrast or a fact about the product, and what a
reply must name or leave out.

Read from the development list real_preferences_fresh5.json (Cursor, Codex CLI, Copilot and Claude Code users, the
fourth round): a wish with an adverb ("I also want the input and output fields under each other"), a contrast that
corrects ("you edited the main workspace file, not the session one", "we rely on task-master, not in a file"), a
property asked for ("can we change every model discover to be dynamic"), a tool or a form ("Can we do it in
CustomTkinter?", "in markdown, more detail"), a thing that is gone or comes back ("the drag and drop feature is not
there any more", "bring that back"), an order, a reference to follow ("follow @test-driven-bugfix.mdc", "have a
look how this is done e.g for the leagueTimetable"), a standing move ("Maybe we permanently move to ..."), what the
product already does ("bun test supports mocking", "command + shift + b is used for the bookmarks"). Patterns only;
statements.py decides what each checks. Linear-time patterns.
"""

from __future__ import annotations

import re

_PROPOSED = (
    # a wish with an adverb between ("I also want", "I just want"), never a request for help ("I also want you to
    # help create ...": real_preferences_fresh4.json), a question ("I also want to know ...") nor a feature asked
    # ("we also need a feature to ...")
    r"\bi\s+(?:also|just|still|only)\s+want\b(?!\s+(?:(?:you|u)\s+to|to\s+(?:say|know|ask|understand|thank|check))\b)",
    # a contrast that corrects: "..., not the session one", "Not really the blue from the theme"
    # ("..., not a table" describes what the user sees: real_preferences_fresh2.json)
    r",\s*not\s+(?:really\s+)?(?:the\s|in\s+(?:a|the)\s)|\bnot\s+really\s+the\b",
    r"\bi\s+(?:don'?t|dont|do\s+not)\s+agree\b|\bi\s+disagree\b|\bbe\s+more\s+careful\b",
    # a property asked for
    r"\b(?:make|change)\s+(?:(?:the|every|all|each|it|this|that)\s+)?(?:[\w\-]+\s+){0,3}?(?:to\s+be\s+|be\s+)?"
    r"(?:configurable|dynamic|optional|customi[sz]able|editable|adjustable|persistent)\b",
    r"\b(?:weird|odd|strange)\b[^.;!?]{0,10}?,\s*(?:remove|drop|delete|change|fix)\b",  # "a bit weird, remove it"
    r"\bto\s+(?:just|only|simply)\s+(?:say|show|read|display)\b",  # "simplify the labels ... to just say URL"
    # a tool asked for by name, the question's end ("Can we do it in CustomTkinter?"), never a place ("do it in
    # Frequenzen and OE Link table": real_preferences_fresh2.json)
    r"\b(?:do|build|write|implement|make)\s+(?:it|this|that|them)\s+(?:in|with)\s+(?-i:[A-Z])[\w.\-]*\s*[?!.]*$",
    r"\b(?:in|as)\s+markdown\b|\bmore\s+detail\b",  # never "Let me get more detailed PR information" (pasted)
    # gone, or to come back
    r"\bnot\s+there\s+any\s*more\b|\bno\s+longer\s+there\b|\bbring\s+(?:it|that|this|them|those)\s+back\b",
    r"\b(?:change|swap|reverse|switch)\s+the\s+order\b|\bin\s+(?:the|this)\s+order\s*(?:of\b|:)",
    # a reference to follow: a rule file, how another part does it
    r"\bfollow\s+(?:the\s+)?@[\w.\-/]+|\b(?:look|see)\s+(?:at\s+)?how\s+(?:this|it|that)\s+is\s+done\b",
    r"\bsee\s+@?[\w\-]+/[\w.\-/]+",  # "see components/tables.html"
    r"\bpermanently\b|\bwe\s+rely\s+on\b",
    # what the product already does
    r"\b(?:is|are)\s+(?:already\s+)?(?:used|reserved|taken)\s+(?:for|by)\b",
    r"^\s*(?:[\w.\-]+\s+){1,2}(?:already\s+)?supports\s+\w+\s*[.!]*$",  # never a spec's "Sync plugin Handles ..."
    # a condition after a lead ("so, when entering the league stats: when nothing is selected, select ...")
    r"^\s*(?:so|and|also|then)[\s,]+(?:[^,:]{3,60}:\s*)?(?:when|if)\s+[^,]{3,60},\s*\w+",
)
PROPOSED = re.compile("(?i)" + "|".join(_PROPOSED))

# What the user keeps seeing and wants gone, quoted ("I am still getting the `Here is the rewritten email:` start");
# never a failure reported ("I'm still seeing errors when running @test-agent.yml": real_preferences_fresh3.json).
STILL_SEEN = re.compile(r"(?i)\b(?:still|keep)\s+(?:getting|seeing)\s+(?:the\s+|this\s+|that\s+)?[`\"“]")
# A name the user does not want ("i don't want it to be called beyonce though").
NOT_CALLED = re.compile(r"(?i)\b(?:called|named)\s+(?P<x>`[^`\n]{1,40}`|[\"“][^\"”\n]{1,40}[\"”]|[\w.\-]+)")
# What a request removes from where: the things named before "from" ("remove OpenAI and Anthropic from the labels").
# Only those are banned, never the place ("remove the debug print from main.py" keeps main.py).
REMOVE_FROM = re.compile(r"(?i)^\s*(?:(?:can|could|would)\s+(?:you|we)\s+)?(?:(?:please|also|and|then|just)\s+)*(?:remove|delete|drop|get\s+rid\s+of)\s+"
                         r"(?!it\b|this\b|that\b|them\b|these\b|those\b)(?P<x>(?:[^.;!?]|\.(?=\w)){1,60}?)\s+from\s+\S")
# The kind of file a thing is to be, by its extension ("each rule should be a distinct mdc file in that rules dir").
FILE_KIND = re.compile(r"(?i)\b(?:an?|one|its\s+own)\s+(?:(?:distinct|separate|single|new|own)\s+)?\.?"
                       r"(?P<x>mdc|md|json|jsonl|ya?ml|toml|csv|txt|ini|xml|html|env)\s+files?\b")
