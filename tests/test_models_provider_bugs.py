"""A bug inside a provider (TypeError, AttributeError, KeyError, ValueError) surfaces at once as itself:
it is not retried as a "malformed response" and never reported as an unreachable server (exit code 2).
Real transport and protocol failures (cut or non-JSON bodies) are still retried."""

from __future__ import annotations

import asyncio

import pytest

from skillgrad.config.schema import RoleConfig
from skillgrad.errors import EndpointUnreachable
from skillgrad.models.factory import build_llm
from skillgrad.models.fakes import Fault
from skillgrad.models.providers import openai as openai_provider


def _llm(fault_server, event_sink):
    role = RoleConfig(provider="openai", model="fake", base_url=fault_server.base_url, max_retries=3)
    return build_llm(role, "student", emit=event_sink, retry_base_s=0.01)


@pytest.mark.parametrize("bug", [TypeError, AttributeError, KeyError, ValueError])
def test_a_bug_in_reply_handling_is_not_retried(fault_server, event_sink, monkeypatch, bug):
    def broken_usage(**kwargs):
        raise bug("a bug in our reply handling")

    monkeypatch.setattr(openai_provider, "Usage", broken_usage)
    llm = _llm(fault_server, event_sink)
    with pytest.raises(bug):
        asyncio.run(llm.complete([{"role": "user", "content": "hi"}], max_tokens=4))
    assert len(fault_server.requests) == 1  # one attempt: no retries of a bug
    assert event_sink.of("llm_retry") == []


def test_cut_and_non_json_bodies_are_still_retried(fault_server, event_sink):
    fault_server.script(Fault.truncated(), Fault.not_json(), Fault.ok("fine"))
    comp = asyncio.run(_llm(fault_server, event_sink).complete([{"role": "user", "content": "hi"}], max_tokens=4))
    assert comp.text == "fine" and len(event_sink.of("llm_retry")) == 2


def test_an_endpoint_that_keeps_sending_garbage_is_reported_unreachable(fault_server, event_sink):
    fault_server.default = Fault.not_json()
    with pytest.raises(EndpointUnreachable):
        asyncio.run(_llm(fault_server, event_sink).complete([{"role": "user", "content": "hi"}], max_tokens=4))
    assert len(fault_server.requests) == 4


@pytest.mark.parametrize("status", [408, 409, 425, 429, 500, 502, 503, 504])
def test_the_docs_list_exactly_the_retried_statuses(fault_server, event_sink, status):
    from pathlib import Path

    guide = (Path(__file__).parents[1] / "docs" / "guide" / "providers.md").read_text(encoding="utf-8")
    assert "408, 409, 425, 429 and every 5xx" in guide
    fault_server.script(Fault.error(status, "try again"), Fault.ok("fine"))
    comp = asyncio.run(_llm(fault_server, event_sink).complete([{"role": "user", "content": "hi"}], max_tokens=4))
    assert comp.text == "fine"
    assert [r["status"] for r in event_sink.of("llm_retry")] == [status]
