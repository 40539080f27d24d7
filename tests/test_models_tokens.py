"""Token counting per provider (tiktoken, Anthropic's count_tokens, the model's own vocabulary, or the
documented estimate, named in events and the meter summary) and context windows from the model table."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import tiktoken

from skillgrad.config.schema import RoleConfig
from skillgrad.models.factory import build_llm
from skillgrad.models.meter import Meter
from skillgrad.models.tokens import ESTIMATE, tiktoken_counter


def _openai(model: str, **kw: Any):
    meter = Meter()
    return build_llm(RoleConfig(provider="openai", model=model, base_url="http://127.0.0.1:9/v1", **kw),
                     "teacher", meter=meter), meter


def test_context_window_comes_from_the_model_table_unless_n_ctx_is_set():
    assert _openai("gpt-4o-2024-08-06")[0].context_window == 128_000
    assert _openai("gpt-4.1-mini")[0].context_window == 1_047_576
    assert _openai("gpt-4o", n_ctx=8192)[0].context_window == 8192  # the user's setting wins
    assert _openai("some-local-alias")[0].context_window == 4096  # unknown model: n_ctx's default


def test_tiktoken_unavailable_offline_falls_back_to_the_named_estimate(monkeypatch):
    def offline(*args: Any, **kwargs: Any) -> Any:
        raise ConnectionError("no network")

    monkeypatch.setattr(tiktoken, "get_encoding", offline)
    llm, meter = _openai("gpt-4o")
    assert llm.count_tokens("x" * 40) == 10
    assert llm.token_counter.name.startswith(ESTIMATE) and "o200k_base" in llm.token_counter.name
    assert meter.summary()["token_counters"]["teacher"] == llm.token_counter.name
    assert "does not know" in tiktoken_counter("smollm2").name


def test_tiktoken_encoding_is_used_when_it_loads(monkeypatch):
    # A real tiktoken BPE with a tiny vocabulary stands in for o200k_base, whose file needs the network.
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = 256
    enc = tiktoken.Encoding("tiny", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})
    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: enc)
    llm, _ = _openai("gpt-4o")
    assert llm.token_counter.name == "tiktoken o200k_base"
    assert llm.count_tokens("abab") == 2 and llm.count_tokens("xyz") == 3


class CountTokensStub:
    """Anthropic's /v1/messages/count_tokens on loopback: 1 token per 3 characters plus 7 of framing."""

    def __init__(self, works: bool = True) -> None:
        self.requests: list[dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                stub.requests.append({"path": self.path, "body": body, "key": self.headers.get("x-api-key")})
                if works and self.path.endswith("/v1/messages/count_tokens"):
                    text = body["messages"][0]["content"]
                    status, out = 200, {"input_tokens": len(text) // 3 + 7}
                else:
                    status, out = 404, {"type": "error", "error": {"type": "not_found_error", "message": "nope"}}
                data = json.dumps(out).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def count_stub() -> Iterator[CountTokensStub]:
    stub = CountTokensStub()
    yield stub
    stub.httpd.shutdown()


def _anthropic(base_url: str):
    meter = Meter()
    role = RoleConfig(provider="anthropic", model="claude-sonnet-4-5", base_url=base_url, api_key="sk-ant-test")
    return build_llm(role, "teacher", meter=meter), meter


def test_anthropic_counts_with_its_count_tokens_endpoint(count_stub):
    llm, meter = _anthropic(count_stub.base_url)
    assert llm.context_window == 200_000
    assert abs(llm.count_tokens("y" * 3000) - 1000) <= 5  # calibrated: framing subtracted
    assert llm.token_counter.name.startswith("anthropic count_tokens")
    assert len(count_stub.requests) == 2  # calibrated once, then no call per count
    llm.count_tokens("z" * 99)
    assert len(count_stub.requests) == 2
    assert count_stub.requests[0]["body"]["model"] == "claude-sonnet-4-5"
    assert meter.summary()["token_counters"] == {"teacher": llm.token_counter.name}


def test_anthropic_without_count_tokens_uses_the_named_estimate():
    stub = CountTokensStub(works=False)
    try:
        llm, _ = _anthropic(stub.base_url)
        assert llm.count_tokens("x" * 40) == 10
        assert llm.token_counter.name.startswith(ESTIMATE) and "count_tokens unavailable" in llm.token_counter.name
        assert "sk-ant-test" not in llm.token_counter.name
    finally:
        stub.httpd.shutdown()
