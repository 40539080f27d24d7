"""How real users state what they want besides "use X not Y": proposals asked as questions, blame, design choices,
judgements and facts, and what is pasted rather than said.

Read from the public sessions of tests/fixtures/sessions/real_preferences_fresh.json (21 Claude Code users) and
real_preferences_heldout.json: "I think bottomLinks is better", "xterm.js is fine", "projects should have the
biggest size nodes", "the squash in GitHub keeps trailers", "Can we make the gradient an ellipse rather than a
circle?", "just answer this", "why was that PR created with a `fix` prefix?". Patterns only; statements.py
decides what each statement checks. Linear-time patterns.
"""

from __future__ import annotations

import re

# A question that proposes ("Can't we handle this in one place ...?", "can we not get the sessionId off the hook
# payload?", "does we realy need these four packages?", "Why don't you add it yourself?": real_preferences_fresh4.json).
SUGGEST = re.compile(r"(?i)^\s*(?:(?:can'?t|cannot|couldn'?t|shouldn'?t|wouldn'?t|isn'?t|doesn'?t|don'?t)\s+"
                     r"(?:we|you|it|this|that|they|all|the|there)\b|(?:can|could|should)\s+(?:we|you)\s+not\b|"
                     r"why\s+not\b|why\s+(?:don'?t|dont|do\s+not)\s+(?:you|we)\b|(?:do|does)\s+(?:we|it|this|that)\s+(?:really|realy|even|actually)\s+need\b|"
                     r"does\s+[\w\-]+\s+have\s+to\s+be\b)")
# Blame: "why was that PR created with a `fix` prefix?", "I don't know why you went with Node.js", "i told you".
BLAME = re.compile(r"(?i)^\s*why\s+(?:tf\s+)?(?:did|would|were|r|are)\s+(?:you|u)\b|^\s*why\s+(?:was|were|is)\s+"
                   r"(?:that|this|it|the)\b[^?]{0,60}?\b(?:created|named|called|added|changed|set|removed|made|moved|"
                   r"renamed|deleted|used)\b|\b(?:i\s+don'?t\s+(?:know|get|understand)|idk)\s+why\s+(?:you|u|tf)\b|"
                   r"\bwhat\s+have\s+you\s+done\b|\bi\s+told\s+you\b|\byou\s+went\s+and\b|"
                   r"\byou\s+(?:just\s+)?did\s+it\s+again\b|"
                   r"^\s*how\s+come\s+(?:you|u)\b")  # "How come you forgot removing ...?" (fresh6)  # "You just did it again." (real_preferences_fresh3.json)
# A polite request ("Can we make X an ellipse rather than ...?") is read for what it states, unlike a question.
POLITE = re.compile(r"(?i)^\s*(?:can|could|would|will)\s+(?:you|we|u)\b")

_JUDGED = (r"fine|better|best|worse|wrong|correct|incorrect|enough|redundant|unnecessary|overkill|overcomplicated|"
           r"too\s+\w+|to\s+(?:much|many|big|long|large|verbose)|confusing|cleaner|simpler|pointless|useless|ugly|"
           r"legit|bad|not\s+needed|not\s+necessary|not\s+connected|janky|hacky|clunky|messy")
_STATED_FORMS = (
    # a judgement: "xterm.js is fine", "I think by file is to much", "the stripping PII was not making sense"
    r"\b(?:is|are|was|were|'s|seems?|looks?|feels?)\s+(?:(?:a\s+bit|way|much|far|really|just|also|still|probably|"
    r"not|n't|super|so|very|pretty|quite)\s+)*(?:" + _JUDGED + r")\b",  # "That feels super janky." (fresh3)
    r"\b(?:make|makes|making)\s+(?:no\s+)?sense\b",
    r"\b(?:redundant|unnecessary|overkill|overcomplicat\w*|over-?engineer\w*)\b",
    r"\bnot\s+(?:really\s+)?(?:feasible|possible|ideal|worth|what\s+i)\b",
    # "that;s not scalable a solution.", "this is adding some bloat", "this still defeats all the purpose" (fresh6)
    r"\bnot\s+(?:an?\s+)?(?:scalable|secure|maintainable|robust)\b|\bbloat(?:ed)?\b|"
    r"\bdefeats?\s+(?:all\s+)?(?:the\s+)?(?:whole\s+)?purpose\b",
    r"\b(?:is|are|was|were)\s+just\s+\w+ing\b",  # "those tests are just testing that ..."
    r"\b(?:it'?d|it\s+would)\s+be\s+(?:great|nice|better|good|best|ideal)\b",
    r"\bensur(?:e|ing)\b",
    r"\b(?:doesn'?t|does\s+not|isn'?t|aren'?t)\s+(?:contain|have|include|show|mention)\b",
    # a norm with any subject: "projects should have the biggest size nodes", "the bericht shall be stored locally"
    r"\b(?:should|shoudl|shall|ought\s+to|has\s+to|have\s+to)\b",
    # the user's own taste: "I love using list comprehension", "I'd expect to get a list", "I meant ..."
    r"\bi(?:'d|\s+would)?\s+(?:(?:really|do|also|still|just|much)\s+)*(?:love|prefer|hate|care\s+(?:for|about)|"
    r"expect|rather|don'?t\s+like|dont\s+like|meant)\b",
    r"^\s*you\s+(?:can|could|may)\s+(?:just\s+|also\s+|simply\s+)?\w+",  # "you can build it through the X scheme"
    r"\b(?:i'?m|i\s+am|i\s+was)\s+talking\s+about\b",
    r"\binstead\b|\brather\s+than\b",
    r"\b(?:concise(?:ly)?|brief(?:ly)?|compact|verbose)\b(?!-)",
    # a fact that corrects: "technically the third argument here is the transcriptPath", "this is inside the CI
    # container", "anthropic is also opus 4.6", "latest versiopn is 3.5.0", "the idea was that ..."
    r"\b(?:actually|technically|already)\b",
    r"\bwe(?:'re\s+using|\s+(?:have|had|use|used|were\s+using|are\s+using))\s+(?!an?\s)",
    r"^\s*(?:this|that|it|its|it'?s)(?:'s|\s+is|\s+was)?\s+(?:a|an|not|inside|for|about|under|only|just|also)\s",
    r"^\s*(?:the\s+)?[\w.\-/@]+\s+(?:is|are|was|were)\s+(?:also|only|not|actually|just|already|for|about)\b",
    r"^\s*(?:the\s+)?(?:latest|current|correct|right|newest|real)\s+\w+\s+(?:is|are|was)\b",
    r"\bthe\s+(?:idea|point|goal|requirement|reuqirement|assumption|plan|intent)\b[^.]{0,40}?\b(?:is|was|isn'?t)\b",
    # keeping and undoing: "leave as is", "revert any changes under X", "remove this again"
    r"^\s*(?:(?:yes|ok(?:ay)?|alright|please|just|and|also|so)[\s,]+)*(?:keep|leave|revert|undo|get\s+rid\s+of|"
    r"restore|reintroduce|put\s+(?:it\s+)?back|bring\s+back|rename|roll\s+back)\b",  # "roll back the unhelpful changes" (fresh5)
    r"\b(?:remove|delete|drop)\b[^.]{0,60}\bagain\b",
    r"^\s*let'?s\s+(?:keep|leave)\b",  # "Let's keep the singular folder name" (real_preferences_fresh3.json)
    # who does it and what the work is (real_preferences_fresh3.json): "I'll run the app myself whenever needed",
    # "i'll test manually", "remember this is a solid prototype", "nothing complicated", "I'm not saying build a
    # whole nextjs app", "Node 18 is no longer supported"
    r"\bi'?ll\s+(?:\w+\s+){0,4}?(?:myself|manually|on\s+my\s+own)\b",
    r"^\s*remember\b|\bnothing\s+(?:complicated|fancy|big)\b|\bi'?m\s+not\s+saying\s+(?!it|that|this)|"
    r"\bno\s+longer\s+(?:supported|maintained)\b",
    # how it should look: "make it like a normal border color", "make the background much lighter"
    r"\bmake\s+(?:it|them|this|that|the\s+[\w'\- ]{1,40}?)\s+(?:(?:a\s+(?:bit|little)|much|slightly|way|even)\s+)?"
    r"(?:more|less|like|bold|consistent|smaller|bigger|larger|lighter|darker|shorter|longer|simpler|"
    r"an?\s+\w+\s+rather|visually\s+\w+|separated?|visible|hidden|an?\s+(?:clean|simple|minimal|single))\b",
    # ("make them visually separated": fresh2; "Make it a clean API with versioned routes": fresh3)
    r"\b(?:in|as)\s+an?\s+(?:[\w\-]+\s+){0,2}code\s*block\b",  # "repeat that answer in a markdown-formatted code block"
    r"\bnot\s+(?:clear|obvious|intuitive|readable)\s*(?:[.,;!?]|$)",  # never "may not clear out session files"  # "ADIF, PNG not clear" (real_preferences_fresh2.json)
    # how to answer: "just answer this", "answer concisely"
    r"^\s*(?:just|jsut|only)\s+(?:answer|tell|show|use|give|say|assume|keep|reply|explain)\b",
    r"\banswer\s+(?:this|concisely|briefly|directly|only|quickly)\b",
)
STATED = re.compile("(?i)" + "|".join(_STATED_FORMS))

# "xterm.js is fine", "site.config.example.ts is for one language configuration": a named thing, then what it is.
NAMED_SUBJECT = re.compile(r"^\s*(?:the\s+)?(?P<t>`[^`\n]{1,40}`|[@\w][\w.\-/@]*)\s+(?:is|are|was|were|has|have|"
                           r"keeps|does|doesn'?t|isn'?t|should|needs)\b")
# What the user wants gone: its term is checked absent, never required.
GONE = re.compile(r"(?i)\b(?:remove|get\s+rid\s+of|drop|delete|stop|no\s+more|don'?t\s+like|dont\s+like|hate)\b")
# A judgement against something ("the stripping PII was not making sense", "too verbose"): what to do instead is
# the user's to say, so it is judged against their words, not checked on the thing they named.
AGAINST = re.compile(r"(?i)\b(?:wrong|incorrect|redundant|unnecessary|overkill|overcomplicat\w*|over-?engineer\w*|"
                     r"too\s+\w+|to\s+(?:much|many|big|long|large|verbose)|not\s+needed|not\s+necessary|no\s+sense|"
                     r"not\s+making\s+sense|pointless|useless|ugly|confusing|worse|not\s+(?:really\s+)?feasible|bad|bloat(?:ed)?|"
                     r"not\s+(?:an?\s+)?(?:scalable|secure|maintainable|robust)|defeats?\s+(?:all\s+)?(?:the\s+)?purpose)\b")
# After a negation, a verb of removal or change: the thing named is kept, not banned from the reply ("do not delete
# RTI folder yet").
KEEPS = re.compile(r"(?i)^\s*(?:\w+\s+)?(?:delete|remove|drop|touch|change|modify|rename|move|revert|commit|push|"
                   r"stash|break|lose|overwrite|be)\b")
NOT_BEFORE = re.compile(r"(?i)\b(?:not|never|don'?t|dont|no)\b")  # "it should not be set to in_progress"
STOP = re.compile(r"(?i)^\s*stop\s+(?!it\b|that\b|this\b)\w")  # "STOP WITH THE WRAPPER SAUCE: X": X is unwanted

# Words the user did not write: Claude Code's accepted plan ("Implement the following plan:" and the agent's plan),
# a quote of the agent's reply the user then answers, and pasted output (an error line, a shell prompt, a stack
# frame, markup).
PLAN = re.compile(r"(?i)^\s*implement\s+the\s+following\s+plan:")
QUOTED_LEAD = re.compile(r"\s*[\"“][^\"”]{20,}[\"”]\s*\n(?=\s*\S)")
PASTED = re.compile(r"(?i)^\s*(?:error|warning|exception|traceback|fatal|npm\s+(?:err|warn))\b|"
                    r"[❯$%#]\s+\S+.*\s-{1,2}\w|❯|^\s*at\s+\S+\s+\(|</?[a-z]+>")

# Context before the statement ("in the user prompt event rows, keep the timestamp on the same row", "For analytics,
# we will use ... PostHog": real_preferences_fresh2.json): the statement is read after the comma.
CONTEXT_LEAD = re.compile(r"(?i)^\s*(?:in|on|for|at|within|across|inside|under)\s+(?!(?:all|every|each|any)\b|"
                          r"\w+\s+(?:that|which|where)\b)"  # "For commands that add to git, ..." is a rule's condition
                          r"[^,.?!`'\"“”]{3,60},\s*(?=\w)")  # a lead naming a term ("for 'foldcolumn', ...") stays
# Facts and requirements stated without a verb of wanting ("We previously moved all of the package-lock.json files
# to the root level", "name is required for metadata": real_preferences_fresh2.json).
FACT = re.compile(r"(?i)\bwe\s+(?:previously|already|recently)\b|\b(?:is|are)\s+(?:required|mandatory|optional)\b")
# A choice the user makes (not a habit: "we install from npm"), the thing chosen named next, a plain word included ("I would go with Golang", "we will use
# an open source version of PostHog", "we should install entire automatically", "Let's use
# https://github.com/strapi/strapi as our CMS", "make sure we are going with Postgres version 18":
# real_preferences_fresh2.json).
# "I want to set up Posthog for analytics instead", "I thought we were setting up supabase for this?", "you should
# try playwright to debug" (real_preferences_fresh3.json) too, and "Let's incorporate SQLite3 into the app", "we are
# going to go with Golang" (real_preferences_fresh4.json, real_preferences_fresh2.json).
CHOICE = re.compile(r"(?i)(?:\b(?:let'?s|lets|we(?:'ll|\s+will|\s+should|\s+would)|i(?:'d|'ll|\s+would|\s+will|"
                    r"\s+want\s+to)|you\s+should)"
                    r"\s+(?:(?:just|also|probably|rather)\s+)?(?:go\s+with|use|install|stick\s+with|switch\s+to|"
                    r"migrate\s+to|set\s+up|try(?!\s+to\b)|incorporate|integrate|adopt)|"
                    r"\b(?:are|were|be)\s+going\s+(?:to\s+(?:go\s+with|use)|with)|"
                    r"\bi\s+thought\s+we\s+(?:were|are|would\s+be)\s+(?:using|setting\s+up|going\s+with))"
                    r"\s+(?P<rest>[^,;:.!?]{1,80})")
# Words between a verb of choice and the thing chosen ("an open source version of PostHog").
CHOICE_FILLER = frozenset("the a an our my your this that its open source open-source version of latest newest "
                          "same new good proper real official self-hosted hosted most more best least very something else "
                          "anything called named".split())  # "use something called OpenObservability" (fresh2)
# Naming: "we can refer to it as "Policy"", "other_code and slot should have been other_code_slot"
# (real_preferences_fresh2.json).
NAMING = re.compile(r"(?i)\b(?:call|name|rename|refer\s+to|title)\s+(?:it|this|that|them|(?:the|this|that)\s+"
                    r"[\w\-]+)\s+(?:as\s+|to\s+)?(?P<x>`[^`\n]{1,40}`|[\"“][^\"”\n]{1,40}[\"”]|[\w.\-]+)|"
                    r"\bshould(?:\s+have|'ve)\s+been\s+(?P<y>`[^`\n]{1,40}`|[\w.\-]+)")
# A replacement ("switch unwraps to expect": real_preferences_fresh2.json): what it becomes is checked.
SWITCH = re.compile(r"(?i)^\s*(?:(?:please|just|also|and)\s+)?(?:switch|change|convert|turn|migrate)\s+(?:all\s+)?"
                    r"(?:the\s+)?[\w.\-]+\s+(?:to|into)\s+(?P<x>`[^`\n]{1,40}`|[\w.\-]+)")
# One word picked among options ("lets do makefile": real_preferences_fresh2.json).
PICK = re.compile(r"(?i)^\s*(?:(?:ok(?:ay)?|yes|yeah|so)[\s,]+)*let'?s\s+(?:do|go\s+for|pick)\s+(?P<x>[A-Za-z][\w.\-]{2,})\s*[.!]*\s*$")
# ("Lets do 1", "let's do B": an option's number or letter names nothing a reply can be checked for)
# Back to a thing ("don't switch models. go back to gpt-5-nano": real_preferences_fresh3.json), or kept when the
# user forbids changing away from it ("don't change the model from gpt-5-nano").
BACK_TO = re.compile(r"(?i)\b(?:go|switch|change|revert)\s+back\s+to\s+(?:the\s+|using\s+)?(?P<x>[\w.\-]*[A-Za-z][\w.\-]*)|"  # never "go back to 889" (a PR)
                     r"\b(?:change|switch|move)\b[^.;!?]{0,30}?\bfrom\s+(?P<y>[\w.\-]*[\d_.\-][\w.\-]*)")
# A thing the user says is not there ("there is no apps/web": real_preferences_fresh3.json): never to be named.
NO_SUCH = re.compile(r"(?i)\bthere\s+(?:is|are)\s+no\s+(?P<x>`[^`\n]{1,40}`|[\w.\-]*[/._][\w.\-/]*)")
# A colour asked for ("instead of black let's make the icon a green color": real_preferences_fresh2.json).
COLOUR = re.compile(r"(?i)\b(?:make|makes|making|turn|change|paint)\b[^.;!?]{0,40}?\b(?P<x>red|green|"
                    r"blue|yellow|orange|purple|violet|pink|black|white|gr[ae]y|teal|cyan|magenta|brown|gold)\b")
# A port or a version the user names ("We were using port 19006 before", "Postgres version 18":
# real_preferences_fresh2.json): the number is what a reply must say.
NUMBERED = re.compile(r"(?i)\b(?:port|version)\s+(?P<x>\d+(?:\.\d+)*)\b|"
                      r"\b(?:time\s*out|timeout|delay|interval)\b[^.;!?]{0,20}?\b"
                      r"(?P<y>\d+\s*(?:minutes?|mins?|seconds?|secs?|ms|hours?))\b")  # "make the time out 5 minutes"
# A thing banned by a passive rule ("watson should never be used": real_preferences_fresh2.json).
NEVER_USED = re.compile(r"(?i)(?P<x>`[^`\n]{1,40}`|[\w.\-/@]+)\s+(?:should|must|shall|can)\s*(?:never|not|n'?t)\s+"
                        r"be\s+used\b")
# A proposal questioned by its subject ("does vscode have to be the name i dont like it") or its complement
# ("shouldn't all new methods/functions in the base lock provider be final?": real_preferences_fresh2.json).
HAS_TO_BE = re.compile(r"(?i)^\s*does\s+(?P<x>[\w.\-]+)\s+have\s+to\s+be\b")
BE_WHAT = re.compile(r"(?i)\bbe\s+(?P<x>[A-Za-z][\w\-]*)\s*\?+\s*$")
# A git command the user forbids by its verb ("do not stash.. there is a parallel session running":
# real_preferences_fresh2.json): the reply must not run it, so the check bans `git <verb>`.
GIT_VERB = re.compile(r"(?i)^\s*(?P<x>stash|commit|push|force[- ]push|rebase|amend|reset|merge|cherry-pick)\b")
URL = re.compile(r"https?://[^\s)>\]\"'`]+")
