"""Rule checks on a reply, scored locally: hard = every check passes, soft = the fraction that pass.

A check is `{"op": ..., "arg": ...}` (`section_contains` also takes `value`; `tool_called` takes an optional
`key` and `value`: the call must carry argument `key`, non-empty, mentioning `value`, so that a call with
empty arguments does not pass a task that asks for a ticket about something). Checks are validated when
the task file is read, so a bad regex or an unknown op is a one-line error naming the task.

A section is a line that names it in any of the forms people write: `## 3. Key Risks`, `### KEY RISKS:`,
`**Key risks:**`, `**Key risks**: text`, `Key Risks: text` (case, numbering, bold and a trailing colon are
ignored). A tool call is a tool-use block in an agent harness trace, or, for a plain chat student, a
`<tool_call>{"name": ..., "arguments": {...}}</tool_call>` block in the reply (the Hermes / Qwen form).
"""

from __future__ import annotations

import json
import re
import re._constants as _C  # the regex parser's opcodes: a regex said in words
import re._parser as _sre
from collections.abc import Sequence
from itertools import groupby
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from skillgrad.envs.tasks import content

FormOp = Literal["contains", "not_contains", "regex", "no_refusal", "tool_called", "section_present",
                 "section_contains", "min_chars", "max_chars"]
# Gold values a task holds of its own (envs/tasks/content.py); a session a miner reads has none (sleep/mine.py).
ContentOp = Literal["equals", "one_of", "fact"]
CheckOp = Literal[FormOp, ContentOp]
CHECK_OPS: tuple[str, ...] = FormOp.__args__  # type: ignore[attr-defined]  # the form of a reply
CONTENT_OPS: tuple[str, ...] = ContentOp.__args__  # type: ignore[attr-defined]
_KEYED = ("tool_called", *CONTENT_OPS)

# Phrases that open a refusal; matched case-insensitively anywhere in the first 200 characters.
_REFUSALS = ("i can't", "i cannot", "i can not", "i'm unable", "i am unable", "i won't", "i will not",
             "i'm sorry, but", "i am sorry, but", "as an ai", "i'm not able", "i am not able")
# A markdown heading; a bold label (`**X**`, `**X:** text`, `**X**: text`); a `Label: text` line.
_MD = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_BOLD = re.compile(r"^\s*(?:\d+[.)]\s+)?(?:\*\*|__)([^*_]+?)(:?)(?:\*\*|__)\s*(:?)\s*(.*)$")
_LABEL = re.compile(r"^\s*(?:\d+[.)]\s+)?([A-Z][\w /&-]{1,40}):\s*(.*)$")
_NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*|[ivxlc]+)[.)]?\s+")
_TOOL_CALL = re.compile(r"<tool_call>\s*")


class Check(BaseModel):
    model_config = ConfigDict(extra="forbid")

    op: CheckOp
    arg: str = ""
    value: str = Field("", description="section_contains: the text the section must contain; tool_called: the "
                                       "text an argument of the call must contain.")
    key: str = Field("", description="tool_called: the argument that must be present and non-empty; equals, "
                                     "one_of, fact: the field of the reply's JSON object to read (else the reply).")
    values: list[str] = Field(default_factory=list, description="one_of: the accepted gold values.")
    wrong: list[str] = Field(default_factory=list, description="fact: values that contradict the fact; a reply "
                                                               "holding one fails.")

    @model_validator(mode="after")
    def _valid(self) -> Check:
        if self.op in ("min_chars", "max_chars"):
            if not self.arg.strip().isdigit():
                raise ValueError(f"{self.op} needs a whole number as arg, not {self.arg!r}")
        elif self.op == "regex":
            try:
                re.compile(self.arg)
            except re.error as e:
                raise ValueError(f"regex {self.arg!r} does not compile: {e}") from None
        elif self.op == "one_of":
            if self.arg or not self.values or not all(v.strip() for v in self.values):
                raise ValueError("one_of needs `values`, a list of non-empty gold values (and no arg)")
        elif self.op != "no_refusal" and not self.arg.strip():
            raise ValueError(f"{self.op} needs a non-empty arg")
        if self.op == "section_contains" and not self.value.strip():
            raise ValueError("section_contains needs a non-empty value")
        if self.key and self.op not in _KEYED:
            raise ValueError(f"key is for {', '.join(_KEYED)} checks, not {self.op}")
        if self.values and self.op != "one_of":
            raise ValueError(f"values is for one_of checks, not {self.op}")
        if self.wrong and self.op != "fact":
            raise ValueError(f"wrong is for fact checks, not {self.op}")
        if self.op == "fact" and any(content.same_value(w, self.arg) for w in self.wrong):
            raise ValueError(f"fact {self.arg!r}: the fact is among its own wrong values")
        return self

    def describe(self) -> str:
        """What a passing reply does, in plain words for the teacher: never the regex itself (a small teacher
        pastes whatever checker text it is shown into the skill; see engine/goodhart.py)."""
        if self.op == "regex":
            return regex_in_words(self.arg)
        if self.op in CONTENT_OPS:
            return self._content_words()
        return {"contains": f"contains {self.arg!r}", "not_contains": f"does not contain {self.arg!r}",
                "no_refusal": "does not refuse",
                "tool_called": f"calls the tool {self.arg!r}{self._arg_words()} (a chat reply writes the call as "
                               f"'{tool_call_text(self.arg, self.key)}')",
                "section_present": f"has a section named {self.arg!r}",
                "section_contains": f"has a section named {self.arg!r} that mentions {self.value!r}",
                "min_chars": f"is at least {self.arg} characters long",
                "max_chars": f"is at most {self.arg} characters long"}[self.op]


    def _content_words(self) -> str:
        where = f"has a JSON object whose {self.key!r} is" if self.key else "is"
        if self.op == "equals":
            return f"{where} {self.arg!r}"
        if self.op == "one_of":
            return f"{where} one of " + ", ".join(repr(v) for v in self.values)
        where = f"has a JSON object whose {self.key!r} states" if self.key else "states"
        wrong = f" (never {', '.join(repr(w) for w in self.wrong)})" if self.wrong else ""
        return f"{where} {self.arg!r}{wrong}"

    def required_text(self) -> list[str]:
        """Literal text every passing reply holds (a required prefix, phrase, label or tool-call scaffold): what
        the Goodhart guard discounts before it compares replies (a fixed form is the contract, not a copy)."""
        if self.op in ("contains", "section_present"):
            return [self.arg]
        if self.op == "section_contains":
            return [self.arg, self.value]
        if self.op == "tool_called":
            return [p for p in tool_call_text(self.arg, self.key).split("...") if p.strip()]
        if self.op == "regex":
            return regex_literals(self.arg)
        return []

    def _arg_words(self) -> str:
        if not (self.key or self.value):
            return ""
        name = f"a {self.key!r} argument" if self.key else "an argument"
        return f" with {name}" + (f" that mentions {self.value!r}" if self.value else " that is not empty")


def _pieces(parsed: Any) -> list[str] | None:
    """The text a parsed regex stands for, piece by piece in words; None when it is not plain enough to say."""
    out: list[str] = []
    run = ""
    for op, av in parsed:
        if op is _C.LITERAL:
            run += chr(av)
            continue
        if op is _C.IN and av and all(o is _C.LITERAL for o, _ in av) and len({chr(v).lower() for _, v in av}) == 1:
            run += chr(av[0][1])  # [Rr]: one letter in either case
            continue
        if run:
            out.append(repr(run))
            run = ""
        if op is _C.SUBPATTERN:
            inner = _pieces(av[-1])
            if inner is None:
                return None
            out += inner
        elif op is _C.BRANCH:
            alts = [_pieces(b) for b in av[1]]
            if any(a is None or len(a) != 1 for a in alts):
                return None
            out.append("one of " + ", ".join(a[0] for a in alts if a))
        elif op is _C.IN and av and all(o is _C.LITERAL for o, _ in av):
            out.append("one of " + ", ".join(repr(chr(v)) for _, v in av))
        elif op in (_C.MAX_REPEAT, _C.MIN_REPEAT) and av[0] >= 1:
            inner = _pieces(av[2])
            if inner is None:
                return None
            # `[^"]+`, `.+`, `\d+`: required text the words must not drop (`"x": ""` fails `"x": "[^"]+"`)
            out += inner or ([] if _spacing(av[2]) else [_run_in_words(av[2])])
        elif op in (_C.MAX_REPEAT, _C.MIN_REPEAT, _C.IN, _C.ANY, _C.AT, _C.CATEGORY, _C.NOT_LITERAL):
            continue  # spacing, wildcards and inner anchors: the words around them say enough
        else:
            return None
    if run:
        out.append(repr(run))
    return out


def _run_in_words(parsed: Any) -> str:
    r"""A repeated class in words: `\d+` "a number", `\w+` "one word", anything else "some text". "Some text" for
    `\d+` would tell the teacher that any words may stand there, and then refuse a reply with words the description
    allowed."""
    if len(parsed) == 1 and parsed[0][0] is _C.IN and len(parsed[0][1]) == 1:
        op, av = parsed[0][1][0]
        if (op is _C.CATEGORY and av is _C.CATEGORY_DIGIT) or (op is _C.RANGE and av == (ord("0"), ord("9"))):
            return "a number"
        if op is _C.CATEGORY and av is _C.CATEGORY_WORD:
            return "one word"
    return "some text"


def _spacing(parsed: Any) -> bool:
    r"""A regex piece that only matches white space (`\s`, ` `): said as nothing, like the space between words."""
    return all((op is _C.IN and all(o is _C.CATEGORY and a is _C.CATEGORY_SPACE for o, a in av))
               or (op is _C.LITERAL and chr(av).isspace()) for op, av in parsed)


def regex_literals(pattern: str) -> list[str]:
    r"""The runs of literal text every match of a regex holds (`\ATL;DR: \S` -> ['TL;DR: ']); none from a branch
    or an optional part, since a match need not hold those."""
    try:
        return _literal_runs(_sre.parse(pattern))
    except (re.error, RecursionError, OverflowError):
        return []


def _literal_runs(parsed: Any) -> list[str]:
    out: list[str] = []
    for literal, group in groupby(parsed, key=lambda piece: piece[0] is _C.LITERAL):
        pieces = list(group)
        if literal:
            out.append("".join(chr(av) for _, av in pieces))
        else:  # a group's literals are required too; a branch's or a repeat's are not
            out += [t for op, av in pieces if op is _C.SUBPATTERN for t in _literal_runs(av[-1])]
    return out


def regex_in_words(pattern: str) -> str:
    r"""A regex as a requirement: `\ATL;DR:` -> "starts with 'TL;DR:'", `X\s*\Z` -> "ends with 'X'"."""
    try:
        parsed = list(_sre.parse(pattern))
    except (re.error, RecursionError, OverflowError):
        parsed = []
    absent = _absence_in_words(parsed)
    if absent:
        return absent
    pieces = _pieces(parsed) if parsed else None
    if not pieces:
        return "has the form the task asks for"
    said = " then ".join(pieces)
    first, last = parsed[0], parsed[-1]
    begin = first[0] is _C.AT and first[1] in (_C.AT_BEGINNING, _C.AT_BEGINNING_STRING)
    end = last[0] is _C.AT and last[1] in (_C.AT_END, _C.AT_END_STRING)
    if begin and end:
        return f"is exactly {said}"
    if begin:
        return ("starts with " if first[1] is _C.AT_BEGINNING_STRING else "has a line that starts with ") + said
    if end:
        return f"ends with {said}"
    return f"contains {said}"


def _word_edge(piece: Any) -> bool:
    r"""A zero-width test that the text next to it is no word character: `\b`, `(?<![\w-])`, `(?![\w-])`."""
    op, av = piece
    if op is _C.AT:
        return av is _C.AT_BOUNDARY
    return op is _C.ASSERT_NOT and len(av[1]) == 1 and av[1][0][0] is _C.IN \
        and any(o is _C.CATEGORY and a is _C.CATEGORY_WORD for o, a in av[1][0][1])


_COMPLEMENTS = ({_C.CATEGORY_SPACE, _C.CATEGORY_NOT_SPACE}, {_C.CATEGORY_WORD, _C.CATEGORY_NOT_WORD},
                {_C.CATEGORY_DIGIT, _C.CATEGORY_NOT_DIGIT})


def _any_char(repeated: list[Any]) -> bool:
    r"""`.` or a class that holds every character (`[\s\S]`, `[\w\W]`, `[\d\D]`: people write these so that the
    lookahead also reads past the first line)."""
    if repeated == [(_C.ANY, None)]:
        return True
    if len(repeated) != 1 or repeated[0][0] is not _C.IN:
        return False
    cats = {a for o, a in repeated[0][1] if o is _C.CATEGORY}
    return any(pair <= cats for pair in _COMPLEMENTS)


def _absence_in_words(parsed: list[Any]) -> str:
    r"""A regex that forbids a text, as a requirement: `\A(?!.*(?<![\w-])npm(?![\w-]))` -> "does not use the word
    'npm'", `\A(?!.*TODO)` -> "does not contain 'TODO'", `\A(?!Sure)` -> "does not start with 'Sure'"; '' for
    any other regex. Said as "the form the task asks for", neither a teacher nor a repair knew the word was banned."""
    rest = parsed[1:] if parsed and parsed[0] == (_C.AT, _C.AT_BEGINNING_STRING) else []
    if len(rest) != 1 or rest[0][0] is not _C.ASSERT_NOT or rest[0][1][0] != 1:  # one negative lookahead at \A
        return ""
    body = list(rest[0][1][1])
    anywhere = bool(body) and body[0][0] in (_C.MAX_REPEAT, _C.MIN_REPEAT) and body[0][1][0] == 0 \
        and _any_char(list(body[0][1][2]))  # `.*` or `[\s\S]*` first: anywhere in the reply
    body = body[1:] if anywhere else body
    word = len(body) > 2 and _word_edge(body[0]) and _word_edge(body[-1])
    body = body[1:-1] if word else body
    pieces = _pieces(body) if body else None
    if not pieces or any(p == "some text" for p in pieces):
        return ""
    said = " then ".join(pieces)
    if not anywhere:
        return f"does not start with {said}"
    return f"does not use the word {said}" if word and len(pieces) == 1 else f"does not contain {said}"


def heading_key(text: str) -> str:
    """How a section name compares: lower case, without markdown emphasis, numbering or a trailing colon."""
    t = text.strip().strip("*_").strip().rstrip(":").strip().strip("*_").strip().lower()
    return _NUMBERING.sub("", t).strip()


def _heading(line: str) -> tuple[str, str] | None:
    """(section name, text after it on the same line) when the line opens a section."""
    m = _MD.match(line)
    if m:
        return m.group(1), ""
    m = _BOLD.match(line)
    if m and (m.group(2) or m.group(3) or not m.group(4)):
        return m.group(1), m.group(4)
    m = _LABEL.match(line)
    if m:
        return m.group(1), m.group(2)
    return None


def sections(reply: str) -> dict[str, str]:
    """Section name (heading_key) -> the text under it, for markdown headings, bold labels and `Label:` lines."""
    out: dict[str, str] = {}
    current: str | None = None
    for line in reply.splitlines():
        h = _heading(line)
        if h:
            current = heading_key(h[0])
            out.setdefault(current, "")
            out[current] += h[1] + "\n"
        elif current is not None:
            out[current] += line + "\n"
    return out


def _section(reply: str, name: str) -> str | None:
    want = heading_key(name)
    for heading, text in sections(reply).items():
        if heading == want or heading.startswith(want + " ") or heading.startswith(want + ":"):
            return text
    return None


def tool_call_text(name: str, key: str = "") -> str:
    """A call of tool `name` in the form a chat reply writes it (what `tool_called` accepts from a reply); with
    `key`, the argument shown as `"key": "..."` (to be filled in, never a passing call by itself)."""
    args = f"{{{json.dumps(key)}: \"...\"}}" if key else "{}"
    return f'<tool_call>{{"name": {json.dumps(name)}, "arguments": {args}}}</tool_call>'


ToolCall = tuple[str, dict[str, Any]]  # a tool's name and its arguments


def _args(raw: Any) -> dict[str, Any]:
    """Call arguments as a dict: an object, or the JSON text of one (OpenAI / Codex function calls)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            return {}
    return raw if isinstance(raw, dict) else {}


def text_tool_calls(reply: str) -> list[ToolCall]:
    """(name, arguments) of the `<tool_call>{"name": ...}</tool_call>` blocks in a reply (an object or a list)."""
    calls: list[ToolCall] = []
    decoder = json.JSONDecoder()
    for m in _TOOL_CALL.finditer(reply):
        try:
            value, _ = decoder.raw_decode(reply, m.end())
        except json.JSONDecodeError:
            continue
        for call in value if isinstance(value, list) else [value]:
            if isinstance(call, dict) and isinstance(call.get("name"), str):
                calls.append((call["name"], _args(call.get("arguments", call.get("parameters")))))
    return calls


def _call_passes(check: Check, call: ToolCall | str) -> bool:
    name, args = (call, {}) if isinstance(call, str) else call  # a bare name: a call whose arguments are unknown
    if name.lower() != check.arg.lower():
        return False
    if not (check.key or check.value):
        return True
    values = [args.get(check.key)] if check.key else list(args.values())
    texts = [v if isinstance(v, str) else json.dumps(v) for v in values if v not in (None, "", [], {})]
    return any(t.strip() and check.value.lower() in t.lower() for t in texts)


def run_check(check: Check, reply: str, tools: Sequence[ToolCall | str]) -> bool:
    op, arg, low = check.op, check.arg, reply.lower()
    if op == "contains":
        return arg.lower() in low
    if op == "not_contains":
        return arg.lower() not in low
    if op == "regex":
        return re.search(arg, reply, re.MULTILINE) is not None
    if op == "no_refusal":
        return bool(reply.strip()) and not any(p in low[:200] for p in _REFUSALS)
    if op == "tool_called":
        return any(_call_passes(check, c) for c in [*tools, *text_tool_calls(reply)])
    if op == "section_present":
        return _section(reply, arg) is not None
    if op == "section_contains":
        text = _section(reply, arg)
        return text is not None and check.value.lower() in text.lower()
    if op in CONTENT_OPS:
        return content.passes(op, reply, arg=arg, key=check.key, values=check.values, wrong=check.wrong)
    if op == "min_chars":
        return len(reply.strip()) >= int(arg)
    return len(reply.strip()) <= int(arg)  # max_chars


def required_text(checks: Sequence[Check]) -> list[str]:
    """The literal text every reply that passes all `checks` holds (kept with each trajectory for the Goodhart
    guard: replies alike only in this text are the contract, not a copy)."""
    return list(dict.fromkeys(t for c in checks for t in c.required_text() if t.strip()))


SMALL_REPLY_TOKENS = 64  # a student with a 4096-token window (the embedded 135M): longer replies loop or wander
MAX_REPLY_TOKENS = 1024  # the most a task gives a student that states no limit of its own


def stated_reply_tokens(student: object) -> int:
    """The reply room a student states: its role's `max_tokens` when set, else 1/64 of its context window, between
    64 (the embedded 135M's 4096-token window) and 1024 (a 64k+ window: room for a summary with details below).
    A task's checks may ask for more (`reply_cap`); every cap and example limit starts here, not at one constant."""
    stated = int(getattr(getattr(student, "role_cfg", None), "max_tokens", 0) or 0)
    if stated > 0:
        return stated
    window = int(getattr(student, "context_window", 0) or 0)
    return min(MAX_REPLY_TOKENS, max(SMALL_REPLY_TOKENS, window // 64))


def reply_cap(checks: list[Check], base: int = SMALL_REPLY_TOKENS) -> int:
    """The student's token cap for a task, sized from its checks (`env.max_tokens: 0`) above the student's own
    room `base` (`stated_reply_tokens`): room to go a third past a `max_chars` limit (so a too-long reply fails
    visibly instead of being cut to fit), to reach a `min_chars` band, and 48 tokens per required section.
    About 4 characters make a token."""
    cap = base
    sections = sum(c.op in ("section_present", "section_contains") for c in checks)
    for c in checks:
        if c.op in ("min_chars", "max_chars"):
            cap = max(cap, int(c.arg) // 3 + 16)
    return max(cap, 48 * sections + 16)


def score_checks(checks: list[Check], reply: str, tools: Sequence[ToolCall | str] | None = None,
                 ) -> tuple[float, float, str]:
    """(hard, soft, fail_reason) for a reply."""
    if not checks:
        return 0.0, 0.0, "judge: the task has no checks"
    failed = [c for c in checks if not run_check(c, reply, tools or [])]
    soft = 1.0 - len(failed) / len(checks)
    reason = "; ".join(f"check failed: the reply must be one that {c.describe()}" for c in failed)
    return float(not failed), soft, reason


def trace_tools(trace: Any) -> list[ToolCall]:
    """(name, arguments) of the tool calls in an agent harness trace (Claude Code `tool_use` blocks with their
    `input`, Codex function calls with their `arguments` JSON text, shell commands as `shell`)."""
    names: list[ToolCall] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            kind = str(x.get("type", ""))
            if kind in ("tool_use", "function_call", "custom_tool_call") and isinstance(x.get("name"), str):
                names.append((x["name"], _args(x.get("input", x.get("arguments")))))
            elif kind in ("command_execution", "local_shell_call"):
                names.append(("shell", _args({"command": x.get("command") or x.get("action")})))
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(trace)
    return names
