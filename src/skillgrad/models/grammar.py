"""JSON schema (as pydantic writes it) -> a flat GBNF grammar for llama.cpp.

llama-cpp-python's own converter spells `maxLength: N` as N nested optional groups; past about 1,000
llama.cpp refuses the grammar and the process dies (a NULL sampler, then SIGSEGV). Here a bound is one
flat repetition `x{0,N}` (llama.cpp chains it in tail position: constant stack), and only while
N <= `MAX_GRAMMAR_REPEAT`; a longer bound, and a string pattern other than plain alternatives, is left out
of the grammar (`x*`) and enforced after parsing, where pydantic rejects a reply over the schema's limit
(a recorded malformed-output rejection, never a truncated text). `check_gbnf` re-verifies these rules,
and `verify_grammar` has llama.cpp parse the result, before a grammar is used.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from skillgrad.errors import SkillgradError

# Largest bound written into a grammar. llama.cpp expands `x{0,N}` into N chained rules and refuses
# (repeated symbols x N) > 2000; 1000 keeps every repetition here well inside that, and covers the
# edit-sized fields (max_edit_chars up to 1000) so short fields stay exactly bounded while decoding.
MAX_GRAMMAR_REPEAT = 1000
# A whole grammar larger than this is refused before llama.cpp sees it (ours are about 2 KB).
MAX_GRAMMAR_CHARS = 64_000

_PRIMITIVES = {
    "space": '" "?',
    "char": r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})',
    "boolean": '("true" | "false") space',
    "null": '"null" space',
    "number": '"-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})? space',
}


class GrammarError(SkillgradError):
    """The schema uses something this converter does not express, or the grammar fails `check_gbnf`."""


def _literal(value: Any) -> str:
    """A GBNF string literal matching the JSON encoding of `value`."""
    return json.dumps(json.dumps(value, ensure_ascii=False), ensure_ascii=False)


_PLAIN_WORDS = re.compile(r"\^(?:\(\?:)?\(?([\w .-]+(?:\|[\w .-]+)*)\)?\$")


def _literal_pattern(pattern: str) -> list[str]:
    """`^add$` or `^(a|b)$`: the alternatives, when the pattern is nothing but plain words; else []."""
    m = _PLAIN_WORDS.fullmatch(pattern)
    return m.group(1).split("|") if m else []


def _repeat(item: str, lo: int, hi: int | None) -> str:
    """`item` lo..hi times as one flat repetition; an unbounded or over-large `hi` becomes `*`."""
    if hi is not None and hi <= MAX_GRAMMAR_REPEAT:
        if hi == 0:
            return ""
        return f"{item}{{{lo},{hi}}}" if lo != hi else f"{item}{{{lo}}}"
    lo = min(lo, MAX_GRAMMAR_REPEAT)
    return f"{item}{{{lo},}}" if lo > 1 else (f"{item}+" if lo == 1 else f"{item}*")


@dataclass
class _Builder:
    defs: dict[str, Any]
    rules: dict[str, str] = field(default_factory=dict)
    unbounded: list[str] = field(default_factory=list)  # paths whose bound is enforced after parsing

    def add(self, name: str, body: str) -> str:
        name = re.sub(r"[^a-zA-Z0-9-]+", "-", name).strip("-") or "r"
        base, i = name, 1
        while name in self.rules and self.rules[name] != body:
            i += 1
            name = f"{base}-{i}"
        self.rules[name] = body
        return name

    def visit(self, schema: dict[str, Any], name: str, path: str) -> str:
        if "$ref" in schema:
            ref = schema["$ref"]
            key = ref.rsplit("/", 1)[-1]
            if not ref.startswith("#/$defs/") or key not in self.defs:
                raise GrammarError(f"{path}: unsupported $ref {ref!r}")
            rule = "def-" + re.sub(r"[^a-zA-Z0-9-]+", "-", key)
            if rule not in self.rules:
                self.rules[rule] = ""  # reserve the name (recursive models)
                self.rules[rule] = self.body(self.defs[key], rule, path)
            return rule
        return self.add(name, self.body(schema, name, path))

    def body(self, schema: dict[str, Any], name: str, path: str) -> str:
        if "$ref" in schema:
            return self.visit(schema, name, path)
        if "const" in schema:
            return f"{_literal(schema['const'])} space"
        if "enum" in schema:
            return "(" + " | ".join(_literal(v) for v in schema["enum"]) + ") space"
        for key in ("anyOf", "oneOf"):
            if key in schema:
                alts = [self.visit(s, f"{name}-{i}", f"{path}|{i}") for i, s in enumerate(schema[key])]
                return " | ".join(alts)
        kind = schema.get("type")
        if kind == "object":
            return self.object(schema, name, path)
        if kind == "array":
            item = self.visit(schema.get("items", {}), f"{name}-item", f"{path}[]")
            lo, most = int(schema.get("minItems", 0)), schema.get("maxItems")
            if most is not None and most > MAX_GRAMMAR_REPEAT:
                self.unbounded.append(f"{path} (maxItems {most})")
            if most == 0:
                return '"[" space "]" space'
            rest = _repeat(f'("," space {item})', max(lo - 1, 0), None if most is None else int(most) - 1)
            inner = f"{item} {rest}".strip()
            return f'"[" space {inner} "]" space' if lo > 0 else f'"[" space ({inner})? "]" space'
        if kind == "string":
            if "pattern" in schema or "format" in schema:
                words = _literal_pattern(schema.get("pattern", ""))
                if words and "format" not in schema:
                    return "(" + " | ".join(_literal(w) for w in words) + ") space"
                self.unbounded.append(f"{path} (pattern/format)")
                return '"\\"" char* "\\"" space'
            lo, most = int(schema.get("minLength", 0)), schema.get("maxLength")
            if most is not None and most > MAX_GRAMMAR_REPEAT:
                self.unbounded.append(f"{path} (maxLength {most})")
            return f'"\\"" {_repeat("char", lo, None if most is None else int(most))} "\\"" space'
        if kind == "integer":
            least, top = schema.get("minimum"), schema.get("maximum")
            digits = len(str(int(max(abs(least or 0), abs(top))))) if top is not None else 15
            sign = "" if least is not None and least >= 0 else '"-"? '
            tail = f" [0-9]{{0,{digits - 1}}}" if digits > 1 else ""
            return f'{sign}("0" | [1-9]{tail}) space'
        if kind in ("number", "boolean", "null"):
            return kind
        raise GrammarError(f"{path}: unsupported JSON schema {json.dumps(schema)[:120]}")

    def object(self, schema: dict[str, Any], name: str, path: str) -> str:
        props: dict[str, Any] = schema.get("properties", {})
        if isinstance(schema.get("additionalProperties"), dict) or "patternProperties" in schema:
            raise GrammarError(f"{path}: objects with free-form keys are not supported")
        required = set(schema.get("required", []))
        kvs = []
        for key, sub in props.items():
            value = self.visit(sub, f"{name}-{key}", f"{path}.{key}")
            kvs.append((key in required, self.add(f"{name}-{key}-kv", f"{_literal(key)} space \":\" space {value}")))
        req = [kv for is_req, kv in kvs if is_req]
        opt = [kv for is_req, kv in kvs if not is_req]
        if req:
            inner = ' "," space '.join(req) + "".join(f' ("," space {kv})?' for kv in opt)
        elif opt:
            # no required key: any non-empty in-order subset, or nothing
            alts = [" ".join([opt[i], *(f'("," space {kv})?' for kv in opt[i + 1:])]) for i in range(len(opt))]
            inner = "(" + " | ".join(alts) + ")?"
        else:
            inner = ""
        return f'"{{" space {inner} "}}" space'.replace("space  ", "space ")


@dataclass(frozen=True)
class Grammar:
    gbnf: str
    unbounded: tuple[str, ...]  # schema paths whose length bound is checked after parsing, not while decoding


def schema_to_gbnf(schema: dict[str, Any]) -> Grammar:
    """A GBNF grammar (root rule `root`) accepting JSON that matches `schema`, up to the bounds above."""
    builder = _Builder(defs=dict(schema.get("$defs", {})))
    root_body = builder.body({k: v for k, v in schema.items() if k != "$defs"}, "root", "<root>")
    builder.rules["root"] = root_body
    lines = [f"root ::= {root_body}"]
    lines += [f"{n} ::= {b}" for n, b in builder.rules.items() if n != "root"]
    used = " ".join(lines)
    lines += [f"{n} ::= {b}" for n, b in _PRIMITIVES.items() if re.search(rf"(?<![\w-]){n}(?![\w-])", used)
              or n in ("space", "char")]
    gbnf = "\n".join(lines) + "\n"
    check_gbnf(gbnf)
    return Grammar(gbnf=gbnf, unbounded=tuple(builder.unbounded))


_BOUND = re.compile(r"\{(\d+)(?:,(\d*))?\}")


def check_gbnf(gbnf: str) -> None:
    """Refuse a grammar llama.cpp could choke on: too large, a repetition over the cap, or deep nesting."""
    if len(gbnf) > MAX_GRAMMAR_CHARS:
        raise GrammarError(f"grammar of {len(gbnf)} characters exceeds {MAX_GRAMMAR_CHARS}")
    for m in _BOUND.finditer(gbnf):
        bounds = [int(x) for x in m.groups() if x]
        if max(bounds) > MAX_GRAMMAR_REPEAT:
            raise GrammarError(f"grammar repetition {m.group(0)} exceeds {MAX_GRAMMAR_REPEAT}")
    for line in gbnf.splitlines():
        depth = deepest = 0
        in_str = in_class = escape = False
        for ch in line:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif in_str:
                in_str = ch != '"'
            elif in_class:
                in_class = ch != "]"
            elif ch == '"':
                in_str = True
            elif ch == "[":
                in_class = True
            elif ch == "(":
                depth += 1
                deepest = max(deepest, depth)
            elif ch == ")":
                depth -= 1
        if deepest > 8:
            raise GrammarError(f"grammar rule nests {deepest} groups deep: {line[:80]}")


def verify_grammar(llama: Any, gbnf: str) -> None:
    """Have llama.cpp parse `gbnf` into a throw-away sampler: GrammarError instead of the NULL sampler
    that llama-cpp-python would dereference (SIGSEGV) when it refuses a grammar."""
    import llama_cpp  # heavy, only with a local model

    check_gbnf(gbnf)
    vocab = getattr(getattr(llama, "_model", None), "vocab", None)
    if vocab is None:  # another llama-cpp-python layout: the structural check above is all we can do
        return
    sampler = llama_cpp.llama_sampler_init_grammar(vocab, gbnf.encode("utf-8"), b"root")
    if not sampler:
        raise GrammarError("llama.cpp refused the grammar (see its stderr)")
    llama_cpp.llama_sampler_free(sampler)


def server_safe_schema(schema: Any, limit: int = MAX_GRAMMAR_REPEAT) -> Any:
    """A copy of a JSON schema without length/item bounds above `limit`, for servers that build grammars.

    llama-cpp-python's server (and other llama.cpp-based servers) turns `maxLength: N` into N nested
    groups and dies with SIGSEGV past about 1,000; parsing enforces the dropped bounds on our side.
    """
    if isinstance(schema, list):
        return [server_safe_schema(v, limit) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for k, v in schema.items():
        if k in ("maxLength", "minLength", "maxItems", "minItems") and isinstance(v, int) and v > limit:
            continue
        out[k] = server_safe_schema(v, limit)
    return out
