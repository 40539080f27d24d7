"""Tolerant structured-output parsing: replies -> pydantic models, or StructuredOutputError(raw=...).

Native constraints (grammar, json_schema) make most replies valid; this handles the rest:
```json fences, prose around the object, trailing commas. Validation is always pydantic's.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from skillgrad.errors import StructuredOutputError

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def _balanced_objects(text: str) -> list[str]:
    """Every top-level balanced {...} span, scanning strings correctly."""
    spans: list[str] = []
    depth = 0
    start = -1
    in_str = False
    escape = False
    for i, ch in enumerate(text):
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"' and depth > 0:
            in_str = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    return spans


def _candidates(text: str) -> list[str]:
    whole = text.strip()
    out = [whole] if whole.startswith(("{", "[")) else []
    out += [m.strip() for m in _FENCE.findall(text)]
    out += _balanced_objects(text)
    return [c for c in out if c]


def _loads(candidate: str) -> Any:
    try:
        return json.loads(candidate)
    except json.JSONDecodeError:
        return json.loads(_TRAILING_COMMA.sub(r"\1", candidate))


def _why(error: Any) -> str:
    """Pydantic's message; for an over-long text or list, the sizes and the rule (long bounds are not in
    the local grammar, so this is where they are enforced)."""
    kind, ctx, value = error.get("type"), error.get("ctx") or {}, error.get("input")
    if kind in ("string_too_long", "too_long") and isinstance(value, (str, list)):
        unit = "characters" if isinstance(value, str) else "items"
        return f"{len(value)} {unit}, over the limit of {ctx.get('max_length')} (rejected, not truncated)"
    return str(error.get("msg"))


def parse_structured(text: str, schema: type[T]) -> T:
    """Parse `text` into `schema`; raise StructuredOutputError (keeping the raw text) when impossible."""
    last_error = "no JSON object found"
    for candidate in _candidates(text):
        try:
            data = _loads(candidate)
        except json.JSONDecodeError as e:
            last_error = f"invalid JSON: {e.msg}"
            continue
        try:
            return schema.model_validate(data)
        except ValidationError as e:
            first = e.errors()[0]
            loc = ".".join(str(p) for p in first.get("loc", ())) or "<root>"
            last_error = f"schema mismatch at {loc}: {_why(first)}"
    raise StructuredOutputError(f"reply does not match {schema.__name__}: {last_error}", raw=text)


def schema_instructions(schema: type[BaseModel]) -> str:
    """Prompt text asking for JSON of `schema` (for providers without native structured output)."""
    return (
        "Reply with a single JSON object and nothing else, matching this JSON schema:\n"
        + json.dumps(schema.model_json_schema(), ensure_ascii=False)
    )
