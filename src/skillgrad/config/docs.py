"""The config reference, generated from the pydantic schema so it cannot drift from the code.

`python -m skillgrad.config.docs` prints it; `--check docs/configuration.md` exits 1 when the docs page's copy
(between the config-reference markers) is stale; `--write docs/configuration.md` refreshes that copy.
"""

from __future__ import annotations

import argparse
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal

import annotated_types
from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from skillgrad.config import flat_keys
from skillgrad.config.schema import Config
from skillgrad.core.atomic import write_text

START_MARKER = "<!-- config-reference:start -->"
END_MARKER = "<!-- config-reference:end -->"

_INTRO = (
    "Generated from `skillgrad/config/schema.py` by `python -m skillgrad.config.docs`; do not edit by hand.\n"
    "Each key can be set in YAML (`section:` then `key: value`), or with `--cfg-options section.key=value`.\n"
    "The *SkillOpt* column gives the flat name SkillOpt also accepts (at the top level of a file, or as\n"
    "`--cfg-options name=value`); `env` also takes environment-specific options, validated by the environment."
)


def _type_name(ann: Any) -> str:
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if ann is Any:
        return "any"
    if ann is type(None):
        return "null"
    if ann is SecretStr:
        return "secret"
    if origin is Literal:
        return " | ".join(json.dumps(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(a) for a in args)
    if origin in (list, dict):
        return f"{origin.__name__}[{', '.join(_type_name(a) for a in args)}]"
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return "section"
    return getattr(ann, "__name__", str(ann))


def _bounds(info: FieldInfo) -> str:
    symbols = {annotated_types.Ge: ("≥", "ge"), annotated_types.Gt: (">", "gt"),
               annotated_types.Le: ("≤", "le"), annotated_types.Lt: ("<", "lt")}
    parts = []
    for meta in info.metadata:
        for cls, (sym, attr) in symbols.items():
            if isinstance(meta, cls):
                parts.append(f"{sym} {getattr(meta, attr)}")
    return f" ({', '.join(parts)})" if parts else ""


def _default(info: FieldInfo) -> str:
    if info.default_factory is not None:
        value = info.default_factory()  # type: ignore[call-arg]
    elif info.default is PydanticUndefined:
        return "required"
    else:
        value = info.default
    if isinstance(value, BaseModel):
        return "(see below)"
    if isinstance(value, SecretStr):
        value = "***"
    return f"`{json.dumps(value)}`"


def _cell(text: str) -> str:
    """One table cell: one line, pipes escaped, and `<x>` outside code spans kept from reading as HTML."""
    parts = " ".join(text.split()).replace("|", "\\|").split("`")
    for i in range(0, len(parts), 2):  # even parts lie outside backticks
        parts[i] = parts[i].replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts)


def _table(title: str, model_cls: type[BaseModel], section: str | None) -> list[str]:
    lines = [f"## `{title}`", ""]
    doc = (model_cls.__doc__ or "").strip().splitlines()
    if doc and model_cls.__doc__ != BaseModel.__doc__:
        lines += [doc[0], ""]
    with_flat = section in flat_keys.SKILLOPT_SECTIONS
    header = "| key | type | default | description |" + (" SkillOpt |" if with_flat else "")
    lines += [header, "|---|---|---|---|" + ("---|" if with_flat else "")]
    for key, info in model_cls.model_fields.items():
        row = f"| `{key}` | {_cell(_type_name(info.annotation))}{_bounds(info)} | {_cell(_default(info))} " \
              f"| {_cell(info.description or '')} |"
        if with_flat:
            flat = flat_keys.to_flat(f"{section}.{key}")
            row += f" {'`' + flat + '`' if flat else ''} |"
        lines.append(row)
    return lines + [""]


def config_reference_markdown() -> str:
    """Markdown: one table per section (key, type, default, description, SkillOpt flat name)."""
    lines = [_INTRO, ""]
    for section, info in Config.model_fields.items():
        section_cls: type[BaseModel] = info.annotation  # type: ignore[assignment]
        lines += _table(section, section_cls, section)
        # Nested blocks of one class (model.teacher, model.student) share one table.
        nested: dict[type[BaseModel], list[str]] = {}
        for key, sub in section_cls.model_fields.items():
            sub_cls = sub.annotation
            if isinstance(sub_cls, type) and issubclass(sub_cls, BaseModel):
                nested.setdefault(sub_cls, []).append(f"{section}.{key}")
        for sub_cls, names in nested.items():
            lines += _table("` / `".join(names), sub_cls, None)
    return "\n".join(lines).rstrip() + "\n"


def _embedded(readme_text: str) -> str | None:
    start = readme_text.find(START_MARKER)
    end = readme_text.find(END_MARKER)
    if start < 0 or end < start:
        return None
    return readme_text[start + len(START_MARKER):end]


def check_readme_reference(readme_text: str) -> bool:
    """True when the text embeds exactly the generated reference between the markers."""
    embedded = _embedded(readme_text)
    return embedded is not None and embedded.strip() == config_reference_markdown().strip()


def embed_reference(readme_text: str) -> str:
    """The text with the generated reference placed between the markers."""
    if _embedded(readme_text) is None:
        raise ValueError(f"the file lacks the markers {START_MARKER} ... {END_MARKER}")
    head, rest = readme_text.split(START_MARKER, 1)
    _, tail = rest.split(END_MARKER, 1)
    return f"{head}{START_MARKER}\n{config_reference_markdown()}{END_MARKER}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m skillgrad.config.docs", description=__doc__)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", metavar="FILE", help="exit 1 when the reference embedded in FILE (docs/configuration.md) is stale")
    group.add_argument("--write", metavar="FILE", help="refresh the reference embedded in FILE (docs/configuration.md)")
    args = parser.parse_args(argv)
    if args.check:
        text = Path(args.check).read_text(encoding="utf-8")
        if _embedded(text) is None:
            print(f"{args.check}: no {START_MARKER} / {END_MARKER} markers", file=sys.stderr)
            return 1
        if not check_readme_reference(text):
            print(f"{args.check}: config reference is stale; run python -m skillgrad.config.docs --write "
                  f"{args.check}", file=sys.stderr)
            return 1
        return 0
    if args.write:
        path = Path(args.write)
        try:
            new = embed_reference(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            print(f"{args.write}: {exc}", file=sys.stderr)
            return 1
        write_text(path, new)
        return 0
    sys.stdout.write(config_reference_markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
