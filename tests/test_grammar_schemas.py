"""Every teacher schema the engine can send compiles into a flat llama.cpp grammar and survives one
grammar-constrained call with the embedded model, at small and large limits.

The schemas are enumerated from `skillgrad.engine.schemas` (every model class and every `*_model`
builder) and from every update mode's analyst/merge schema, so a new schema is covered without editing
this file. The bug this guards: llama-cpp-python's converter spelled `maxLength: 1800` as 1,800 nested
optional groups, llama.cpp refused the grammar, and the process died with SIGSEGV.
"""

from __future__ import annotations

import inspect
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import local_role
from pydantic import BaseModel

from skillgrad.engine import schemas
from skillgrad.engine.modes import MODES
from skillgrad.errors import StructuredOutputError
from skillgrad.models.grammar import MAX_GRAMMAR_REPEAT, GrammarError, check_gbnf, schema_to_gbnf
from skillgrad.models.providers.local import LocalProvider
from skillgrad.models.structured import parse_structured

# Values tried for each builder argument, by argument name. Chars: the smallest max_edit_chars, a large
# one, and what the trainer derives from a large one (slow update x3, rewrite documents x20).
CHARS = (20, 120, 4000, 12000, 80000)
COUNTS = (0, 1, 12, 2000)


def _values(param: inspect.Parameter) -> tuple[Any, ...]:
    if param.annotation in (bool, "bool"):
        return (False, True)
    return CHARS if "char" in param.name else COUNTS


def teacher_schemas() -> Iterator[tuple[str, type[BaseModel]]]:
    for name, obj in vars(schemas).items():
        if isinstance(obj, type) and issubclass(obj, BaseModel) and obj.__module__ == schemas.__name__:
            yield name, obj
        elif callable(obj) and name.endswith("_model") and getattr(obj, "__module__", "") == schemas.__name__:
            params = list(inspect.signature(obj).parameters.values())
            for combo in itertools.product(*(_values(p) for p in params)):
                args = [v for p, v in zip(params, combo, strict=True) if p.kind is p.POSITIONAL_OR_KEYWORD]
                kwargs = {p.name: v for p, v in zip(params, combo, strict=True) if p.kind is p.KEYWORD_ONLY}
                yield f"{name}{combo}", obj(*args, **kwargs)
    for mode in MODES.values():
        for chars, n in itertools.product(CHARS, COUNTS):
            for appendix in (False, True):
                yield f"{mode.name}.analyst({n},{chars},{appendix})", mode.analyst_schema(n, chars, appendix)
            yield f"{mode.name}.merge({n},{chars})", mode.merge_schema(n, chars)


ALL = dict(teacher_schemas())


def test_enumeration_covers_every_builder() -> None:
    builders = {n for n, o in vars(schemas).items()
                if callable(o) and n.endswith("_model") and getattr(o, "__module__", "") == schemas.__name__}
    assert builders and all(any(k.startswith(f"{b}(") for k in ALL) for b in builders)
    assert {"slow_update_model", "meta_skill_model", "skill_document_model", "analyst_model"} <= builders
    assert len(ALL) > 100


@pytest.mark.parametrize("name", sorted(ALL))
def test_schema_compiles_to_a_flat_grammar(name: str) -> None:
    schema = ALL[name].model_json_schema()
    grammar = schema_to_gbnf(schema)
    check_gbnf(grammar.gbnf)  # bounded repetitions, shallow nesting, small size
    assert len(grammar.gbnf) < 8000
    text = json.dumps(schema)
    if any(f'"maxLength": {n}' in text or f'"maxItems": {n}' in text for n in (12000, 80000, 2000)):
        assert grammar.unbounded, "a bound over the cap must be named as enforced after parsing"


def test_long_fields_are_unbounded_in_grammar_and_rejected_after_parsing() -> None:
    model = schemas.slow_update_model(1800)
    grammar = schema_to_gbnf(model.model_json_schema())
    assert "char*" in grammar.gbnf and grammar.unbounded == ("<root>.slow_update_content (maxLength 1800)",)
    ok = parse_structured(json.dumps({"slow_update_content": "x" * 1800}), model)
    assert len(ok.slow_update_content) == 1800  # type: ignore[attr-defined]
    with pytest.raises(StructuredOutputError, match="slow_update_content: 1801 characters, over the limit of 1800"):
        parse_structured(json.dumps({"slow_update_content": "x" * 1801}), model)
    # short fields keep their exact bound while decoding
    assert "char{0,120}" in schema_to_gbnf(schemas.edit_proposal_model(120).model_json_schema()).gbnf


def test_check_refuses_the_old_nested_spelling() -> None:
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    old = json_schema_to_gbnf(json.dumps(schemas.slow_update_model(1800).model_json_schema()))
    with pytest.raises(GrammarError, match="nests"):
        check_gbnf(old)
    with pytest.raises(GrammarError, match="exceeds"):
        check_gbnf(f'root ::= "a"{{0,{MAX_GRAMMAR_REPEAT + 1}}}\n')


# ---------------------------------------------------------------- the embedded model


@pytest.fixture(scope="module")
def teacher(gguf_path: Path) -> LocalProvider:
    return LocalProvider(local_role(gguf_path, n_ctx=1024), "teacher")


def _distinct_grammars() -> dict[str, type[BaseModel]]:
    """One schema per distinct grammar (many limit combinations compile to the same text)."""
    seen: dict[str, tuple[str, type[BaseModel]]] = {}
    for name, model in sorted(ALL.items()):
        seen.setdefault(schema_to_gbnf(model.model_json_schema()).gbnf, (name, model))
    return dict(seen.values())


DISTINCT = _distinct_grammars()


@pytest.mark.slow
def test_every_grammar_runs_one_constrained_call(teacher: LocalProvider) -> None:
    """A truncated reply being rejected is fine; a crash or a refused grammar is not."""
    import asyncio

    from skillgrad.models.base import Request

    async def run_all() -> dict[str, str]:
        outcomes: dict[str, str] = {}
        for name, model in DISTINCT.items():
            req = Request(messages=[{"role": "user", "content": "Reply in JSON."}], max_tokens=6, schema=model)
            comp = await teacher(req)
            assert comp.text.lstrip().startswith("{"), (name, comp.text)
            try:
                parse_structured(comp.text, model)
                outcomes[name] = "parsed"
            except StructuredOutputError:
                outcomes[name] = "rejected"
        return outcomes

    outcomes = asyncio.run(run_all())
    assert len(outcomes) == len(DISTINCT) >= 20
    assert teacher.grammar_fallbacks == {}  # every grammar went to llama.cpp, none fell back


@pytest.mark.slow
def test_a_full_reply_under_an_unbounded_grammar_parses(teacher: LocalProvider) -> None:
    import asyncio

    from skillgrad.models.base import Request

    model = schemas.slow_update_model(12000)
    req = Request(messages=[{"role": "user", "content": 'Reply {"slow_update_content": "be brief"} exactly.'}],
                  max_tokens=40, schema=model)
    comp = asyncio.run(teacher(req))
    assert comp.finish_reason == "stop", comp.text
    assert parse_structured(comp.text, model).slow_update_content  # type: ignore[attr-defined]


@pytest.mark.slow
def test_a_schema_without_a_grammar_falls_back_to_the_prompt(teacher: LocalProvider) -> None:
    """A schema the converter cannot express runs without a grammar, logged and recorded, never a crash."""
    import asyncio

    from skillgrad.models.base import Request

    class Counts(BaseModel):
        per_kind: dict[str, int]

    req = Request(messages=[{"role": "user", "content": "Reply in JSON."}], max_tokens=6, schema=Counts)
    comp = asyncio.run(teacher(req))
    assert "free-form keys" in teacher.grammar_fallbacks["Counts"]
    assert comp.usage.completion_tokens > 0


def test_patterns_become_literals_or_a_check_after_parsing() -> None:
    from pydantic import Field

    class Op(BaseModel):
        op: str = Field(pattern="^(add|drop)$")
        code: str = Field(pattern=r"^[A-Z]{3}$")

    grammar = schema_to_gbnf(Op.model_json_schema())
    assert '("\\"add\\"" | "\\"drop\\"")' in grammar.gbnf
    assert grammar.unbounded == ("<root>.code (pattern/format)",)
    with pytest.raises(StructuredOutputError, match="code"):
        parse_structured('{"op": "add", "code": "abc"}', Op)


def test_verify_grammar_turns_a_refusal_into_an_error(gguf_path: Path) -> None:
    """llama.cpp returns NULL for a grammar it cannot parse; that must be an exception, not SIGSEGV."""
    from skillgrad.models.grammar import verify_grammar

    provider = LocalProvider(local_role(gguf_path, n_ctx=1024), "teacher")
    with pytest.raises(GrammarError, match="refused"):
        verify_grammar(provider._entry.llama, "root ::= missing-rule\n")
