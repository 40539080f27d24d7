"""Why a JSON value breaks a request's JSON schema, for the handoff server: an API model with structured outputs
never returns a reply outside its schema, and a client that refuses one loses the call's work (an analyst's edits
over a 240-character limit), so the server asks the agent again with the reason instead.

The subset pydantic and the peers' clients write: `$ref` into `$defs`/`definitions`, `anyOf`/`oneOf`/`allOf`,
`type`, `enum`/`const`, object `properties`/`required`/`additionalProperties: false`, array `items`/`minItems`/
`maxItems`, string `minLength`/`maxLength`, number `minimum`/`maximum`. Other keywords are not checked.
"""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {"object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
                                       "integer": (int,), "number": (int, float), "null": (type(None),)}


def schema_problem(value: Any, schema: dict[str, Any]) -> str:
    """The first place `value` breaks `schema`, said as "at <path>: <what>" ('' when it fits)."""
    return _check(value, schema, schema, "$")


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    seen = 0
    while isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/") and seen < 32:
        node: Any = root
        for part in schema["$ref"][2:].split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        schema, seen = ({**node, **{k: v for k, v in schema.items() if k != "$ref"}} if isinstance(node, dict)
                        else {}), seen + 1
    return schema


def _is(value: Any, kind: str) -> bool:
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(kind, (object,)))


# (keyword, is an upper bound, the kind of value it bounds, what is measured, the unit said)
_BOUNDS: tuple[tuple[str, bool, Any, Any, str], ...] = (("maxLength", True, str, len, "characters"), ("minLength", False, str, len, "characters"),
           ("maxItems", True, list, len, "items"), ("minItems", False, list, len, "items"),
           ("maximum", True, (int, float), float, ""), ("minimum", False, (int, float), float, ""))


def _bounds(value: Any, schema: dict[str, Any], at: str) -> str:
    for key, upper, kind, measure, unit in _BOUNDS:
        if key not in schema or not isinstance(value, kind) or isinstance(value, bool):
            continue
        n, limit = measure(value), schema[key]
        if (n > limit) if upper else (n < limit):
            said = f"{len(value)} {unit}" if unit else f"{value}"
            return f"at {at}: {said}, {'at most' if upper else 'at least'} {limit} {'allowed' if upper else 'needed'}"
    return ""


def _check(value: Any, schema: Any, root: dict[str, Any], at: str) -> str:
    if not isinstance(schema, dict):
        return ""
    schema = _resolve(schema, root)
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            problems = [_check(value, s, root, at) for s in schema[key]]
            if all(problems):
                return problems[0]
    for s in schema.get("allOf") or []:
        if p := _check(value, s, root, at):
            return p
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else []
    if kinds and not any(_is(value, k) for k in kinds):
        return f"at {at}: expected {' or '.join(kinds)}, got {type(value).__name__}"
    if "enum" in schema and value not in schema["enum"]:
        return f"at {at}: {value!r} is not one of {schema['enum']}"
    if "const" in schema and value != schema["const"]:
        return f"at {at}: must be {schema['const']!r}"
    if p := _bounds(value, schema, at):
        return p
    if isinstance(value, list):
        for i, item in enumerate(value):
            if p := _check(item, schema.get("items"), root, f"{at}[{i}]"):
                return p
    if isinstance(value, dict):
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        for name in schema.get("required") or []:
            if name not in value:
                return f"at {at}: the field {name!r} is missing"
        if schema.get("additionalProperties") is False and (extra := sorted(set(value) - set(props))):
            return f"at {at}: unexpected field {extra[0]!r}"
        for name, sub in props.items():
            if name in value and (p := _check(value[name], sub, root, f"{at}.{name}")):
                return p
    return ""
