"""Checks read off what the user said: a preference in a request, or a correction of the agent's reply.

"use pnpm, not npm" -> the reply contains `pnpm` and never the word `npm`; "start every reply with DONE:" ->
the reply starts with `DONE:`; "reply in JSON" -> the reply is a JSON object or array; "don't use `var`" ->
the reply never contains `var`. Only the user's own words make a check (never the headings of one past
answer), so a task mined from them checks something the user asked for. English phrasings; each check keeps
the words it came from as evidence. Pure functions, linear-time patterns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skillgrad.envs.tasks.checks import Check

# A term: `backticked`, "quoted" / 'quoted' (a quote that opens after a letter is an apostrophe: don't), or a
# tool-like word (pnpm, ruff, snake_case, pytest-xdist, @scope/pkg, .tsx).
_TERM = r"""(?:`(?P<{n}b>[^`\n]{{1,40}})`|(?<![A-Za-z])["“'](?P<{n}q>[^"”'\n]{{1,40}})["”'](?![A-Za-z])|(?P<{n}w>[@.\w][\w.@/+\-]{{0,38}}[\w+]|\w))"""


def _term(name: str) -> str:
    return _TERM.format(n=name)


_NOT_WORDS = {"the", "a", "an", "it", "this", "that", "them", "those", "these", "one", "any", "to", "and", "or",
              "me", "you", "i", "we", "so", "just", "yet", "only", "always", "never", "again"}
_USE_X_NOT_Y = re.compile(r"(?i)\b(?:use|using|with|prefer|choose|run|call)\s+" + _term("x")
                          + r"\s*(?:,|;|-|\()?\s*(?:and\s+)?(?:not|never|instead\s+of|rather\s+than|over)\s+"
                          + _term("y"))
_X_INSTEAD_OF_Y = re.compile(r"(?i)" + _term("x") + r"\s+(?:instead\s+of|rather\s+than)\s+" + _term("y"))
# Two words chosen over another ("I love using list comprehension instead of loops": real_preferences_fresh2.json);
# the one-word form above would keep only `comprehension`.
_USING_XX_INSTEAD_OF_Y = re.compile(r"(?i)\b(?:use|using|prefer|with)\s+(?P<xw>[a-z][\w\-]*\s+[a-z][\w\-]*)\s+"
                                    r"(?:instead\s+of|rather\s+than)\s+" + _term("y"))
_DONT_Y = re.compile(r"(?i)\b(?:don'?t|do\s+not|never|stop|avoid|no\s+more)\s+(?P<verb>use|using|add|adding|write|"
                     r"writing|call(?:ing)?(?:\s+it)?|say(?:ing)?|mention(?:ing)?|include|including|suggest(?:ing)?|"
                     r"run(?:ning)?)\s+" + _term("y"))
# After these verbs a bare English word is a thing the user does not want made ("don't add notes": no notes file),
# not a word the reply must avoid; only a quoted or code-like term ("don't add `console.log`") is checked as text.
_ARTIFACT_VERBS = ("add", "write", "include", "mention", "suggest")
_START_WITH = re.compile(r"(?i)\b(?:start|begin|prefix|open)(?:s|ing)?\s+(?:each\s+|every\s+|the\s+|your\s+|all\s+)?"
                         r"(?:reply|replies|answer|answers|response|responses|message|messages|it|them)?\s*with\s+"
                         r"(?:`(?P<xb>[^`\n]{1,40})`|[\"“'](?P<xq>[^\"”'\n]{1,40})[\"”']|(?P<xw>[^\s`\"“']{1,40}))")
_END_WITH = re.compile(r"(?i)\b(?:end|finish|close|sign\s+off)(?:s|ing)?\s+(?:each\s+|every\s+|the\s+|your\s+)?"
                       r"(?:reply|replies|answer|answers|response|responses|message|messages|it)?\s*with\s+"
                       + _term("x"))
_FORMAT = re.compile(r"(?i)\b(?:reply|answer|respond|return|give\s+(?:me\s+)?(?:the\s+)?(?:answer|result)|output|"
                     r"format\s+(?:it|the\s+\w+))\s+(?:only\s+)?(?:in|as)\s+(?:a\s+|an\s+|plain\s+)?"
                     r"(json|yaml|a?\s*markdown\s+table|table|bullet(?:ed)?\s+(?:points|list)|bullets|numbered\s+list)")
_FORMAT_CHECKS = {"json": r"^\s*[\[{]", "yaml": r"^\s*[\w\-]+:\s", "table": r"^\s*\|.*\|\s*$",
                  "bullet": r"^\s*[-*•]\s", "numbered": r"^\s*\d+[.)]\s"}


@dataclass(frozen=True)
class Preference:
    check: Check
    words: str  # the user's words it was read from
    every_reply: bool = False  # holds for any reply (a required opening or ending, a banned word), not one topic


def _pick(m: re.Match[str], name: str) -> str:
    for kind in ("b", "q", "w"):
        v = m.group(name + kind)
        if v:
            return v.strip()
    return ""


def _ok(term: str) -> bool:
    return bool(term) and term.lower() not in _NOT_WORDS and len(term) <= 40


def code_like(term: str) -> bool:
    """A file, identifier, constant or versioned command (journal.py, task_id, CODEX_HOME, python3), not a word."""
    return bool(_CODE_LIKE.fullmatch(term))


# a.py, back-links.json, task_id, ~/x, src/a.ts, CODEX_HOME, TODO, python3, bottomLinks, UserPromptSubmit, 3.5.0; never
# "path/folder", "e.g." or a capitalised word ("GitHub" counts: a product named in camel case is a name to test)
_CODE_LIKE = re.compile(r"@?[\w\-]*[A-Za-z][\w\-]*[._][\w.\-]*\w|[~.]?/[\w.\-/]+|[\w\-]+/[\w.\-/]*\.\w+|"
                        r"[A-Z][A-Z0-9]*_[A-Z0-9_]+|[A-Z]{3,}[0-9]*|[A-Za-z]+\d+[\w.]*|[a-z]{2,}(?:-[a-z]+)+|"
                        r"[a-z]+(?:[A-Z][a-z0-9]*)+[A-Z]*|[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+[A-Z]*|v?\d+(?:\.\d+)+")


# (real_preferences_fresh3.json)
_VERSION = re.compile(r"v?\d+(?:\.\d+)+")
_NAMED_VERSION = re.compile(r"([@\w][\w.@/\-]*)\s+\Z")


def _absent(term: str) -> Check:
    """The reply never contains `term` as a word (`npm` is absent from "pnpm install")."""
    return Check(op="regex", arg=r"(?is)\A(?!.*(?<![\w\-])" + re.escape(term) + r"(?![\w\-]))")


_ABSENT_ARG = re.compile(r"\(\?is\)\\A\(\?!\.\*\(\?<!\[\\w\\-\]\)(?P<t>.+)\(\?!\[\\w\\-\]\)\)")


def absent_term(check: Check) -> str | None:
    """The term an `_absent` check bans (None for any other check): read back beside the code that writes it."""
    m = _ABSENT_ARG.fullmatch(check.arg) if check.op == "regex" else None
    return re.sub(r"\\(.)", r"\1", m.group("t")) if m else None


def preference_checks(text: str) -> list[Preference]:
    """Checks a good reply must pass, read from one user message (a request or a correction)."""
    out: list[Preference] = []
    seen: set[str] = set()

    def add(check: Check, m: re.Match[str], every_reply: bool = True) -> None:
        key = f"{check.op}:{check.arg}"
        if key not in seen:
            seen.add(key)
            out.append(Preference(check, m.group(0).strip()[:200], every_reply))

    for rx in (_USING_XX_INSTEAD_OF_Y, _USE_X_NOT_Y, _X_INSTEAD_OF_Y):
        for m in rx.finditer(text):
            x, y = (m.group("xw") if rx is _USING_XX_INSTEAD_OF_Y else _pick(m, "x")), _pick(m, "y")
            if _VERSION.fullmatch(x) and (named := _NAMED_VERSION.search(text[:m.start()])):
                x = named.group(1)  # "better-sqlite3 12.2.0 instead of sqlite3": the package, not its version
            if rx is _USING_XX_INSTEAD_OF_Y and any(w.lower() in _NOT_WORDS for w in x.split()):
                continue  # "use it instead of ...": one of the words is no name
            if _ok(x) and _ok(y) and x.lower() != y.lower():
                add(Check(op="contains", arg=x), m, every_reply=False)  # only where the topic comes up
                add(_absent(y), m)
    for m in _DONT_Y.finditer(text):
        y = _pick(m, "y")
        bare = bool(m.group("yw")) and not code_like(y)
        if _ok(y) and not (bare and m.group("verb").lower().startswith(_ARTIFACT_VERBS)):
            add(_absent(y), m)
    for m in _START_WITH.finditer(text):
        x = _pick(m, "x").rstrip(".,;!?")
        if _ok(x):
            add(Check(op="regex", arg=r"^\s*" + re.escape(x)), m)
    for m in _END_WITH.finditer(text):
        x = _pick(m, "x")
        if _ok(x):
            add(Check(op="regex", arg=re.escape(x) + r"\W*\s*\Z"), m)
    for m in _FORMAT.finditer(text):
        kind = m.group(1).lower()
        key = next(k for k in _FORMAT_CHECKS if k in kind) if any(k in kind for k in _FORMAT_CHECKS) else ""
        if key:
            add(Check(op="regex", arg=_FORMAT_CHECKS[key]), m, every_reply=False)  # a format asked for one answer
    return out
