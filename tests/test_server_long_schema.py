"""A long-text teacher schema sent to a real llama.cpp server must not kill it.

llama-cpp-python's server builds its grammar with the nested-optional spelling of maxLength and died
with SIGSEGV on the slow-update schema (1,800 characters); the openai provider now sends non-OpenAI
servers the schema without bounds above the grammar limit and enforces them after parsing.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from skillgrad.config.schema import RoleConfig
from skillgrad.engine.schemas import meta_skill_model, skill_document_model, slow_update_model
from skillgrad.errors import StructuredOutputError
from skillgrad.models.factory import build_llm
from skillgrad.models.grammar import MAX_GRAMMAR_REPEAT, server_safe_schema


def test_server_safe_schema_drops_only_large_bounds() -> None:
    schema = {"type": "object", "properties": {
        "a": {"type": "string", "maxLength": 5000, "minLength": 1},
        "b": {"type": "array", "maxItems": 3, "items": {"type": "string", "maxLength": 120}},
        "c": {"anyOf": [{"type": "string", "maxLength": MAX_GRAMMAR_REPEAT + 1}, {"type": "null"}]}}}
    safe = server_safe_schema(schema)
    assert "maxLength" not in safe["properties"]["a"] and safe["properties"]["a"]["minLength"] == 1
    assert safe["properties"]["b"]["maxItems"] == 3
    assert safe["properties"]["b"]["items"]["maxLength"] == 120
    assert "maxLength" not in safe["properties"]["c"]["anyOf"][0]
    assert schema["properties"]["a"]["maxLength"] == 5000  # the original is untouched


@pytest.mark.slow
def test_long_text_schemas_do_not_crash_a_llama_cpp_server(llama_server: str) -> None:
    llm = build_llm(RoleConfig(provider="openai", base_url=llama_server, model="smollm2", api_key="x",
                               max_retries=0), "teacher")

    async def ask(schema: type) -> None:
        try:
            await llm.complete([{"role": "user", "content": "Write one short guidance sentence."}],
                               schema=schema, max_tokens=12, temperature=0.0, stage="slow_update")
        except StructuredOutputError:
            pass  # a truncated 12-token reply is rejected; the point is that the server answers

    for schema in (slow_update_model(1800), meta_skill_model(4000), skill_document_model(20000)):
        asyncio.run(ask(schema))
    assert httpx.get(f"{llama_server}/models", timeout=5).status_code == 200
