"""OfficeQA's SkillOpt search modes: offline gold pages (with and without the tool loop) and custom_search
against a real HTTP search server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from skillgrad.config.schema import EnvSection
from skillgrad.envs.officeqa.env import OfficeQAEnv, OfficeQAOptions
from skillgrad.envs.officeqa.search import custom_search, oracle_pages, parse_queries
from skillgrad.errors import DataError
from skillgrad.models.base import Completion, Usage


def _env(**opts: Any) -> OfficeQAEnv:
    return OfficeQAEnv(EnvSection(name="officeqa"), OfficeQAOptions(**opts))


def test_offline_mode_shows_the_gold_pages():
    env = _env(search_mode="offline")
    item = env.load_splits().test[0]
    tools = env.tools()
    prompt = env.user_prompt(item, tools)
    source = item.inputs["source_files"][0]
    first_line = next(ln for ln in tools.resolve(source).read_text(encoding="utf-8").splitlines() if ln.strip())
    assert "Document pages:" in prompt and f"### {source}" in prompt and first_line.strip() in prompt
    assert "TOOL line" in prompt  # offline keeps the tools unless use_local_tools is false
    plain = _env().user_prompt(item, tools)  # our default "tools" mode shows no pages
    assert "Document pages:" not in plain
    no_tools = _env(search_mode="offline", use_local_tools=False)
    assert no_tools.tool_budget() == 0 and "TOOL" not in no_tools.preamble()


def test_gold_pages_are_narrowed_to_the_named_pages(tmp_path: Path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bulletin.txt").write_text("Page 1\nintro text\nPage 2\nreceipts 4,100\nPage 3\nappendix\n",
                                       encoding="utf-8")
    env = OfficeQAEnv(EnvSection(name="officeqa", split_dir=str(tmp_path)), OfficeQAOptions())
    text = oracle_pages(env.tools(), ["docs/bulletin.txt"], "bulletin, page 2", 4000)
    assert "receipts 4,100" in text and "intro text" not in text and "appendix" not in text
    whole = oracle_pages(env.tools(), ["docs/bulletin.txt"], "", 4000)
    assert "intro text" in whole and "appendix" in whole
    assert len(oracle_pages(env.tools(), ["docs/bulletin.txt"], "", 30)) <= 30


def test_query_parsing_caps_and_dedups():
    assert parse_queries("SEARCH: receipts 2021 | outlays 2021 | receipts 2021", 4) == ["receipts 2021",
                                                                                         "outlays 2021"]
    assert parse_queries('<search_queries>["a", "b", "c"]</search_queries>', 2) == ["a", "b"]
    assert parse_queries("ANSWER: 12", 4) == []


class _SearchHandler(BaseHTTPRequestHandler):
    seen: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _SearchHandler.seen.append({"auth": self.headers.get("Authorization"), **body})
        if self.headers.get("Authorization") != "Bearer s3cret":
            self.send_response(401)
            self.end_headers()
            return
        payload = {"results": [{"title": f"Bulletin hit {i}", "url": f"https://example.test/{i}",
                                "snippet": f"net receipts were {4100 + i} million"} for i in range(10)]}
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def search_server():
    server = HTTPServer(("127.0.0.1", 0), _SearchHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _SearchHandler.seen.clear()
    yield f"http://127.0.0.1:{server.server_address[1]}/search"
    server.shutdown()
    server.server_close()


def test_custom_search_calls_the_api(search_server):
    text = asyncio.run(custom_search(["net receipts 2022"], url=search_server, token="s3cret", provider="duckduckgo",
                                     max_results=2, timeout_s=5))
    assert "Bulletin hit 0" in text and "Bulletin hit 1" in text and "Bulletin hit 2" not in text
    assert _SearchHandler.seen[0] == {"auth": "Bearer s3cret", "query": "net receipts 2022",
                                      "provider": "duckduckgo", "max_num_results": 2}
    bad = asyncio.run(custom_search(["q"], url=search_server, token="wrong", provider="x", max_results=1,
                                    timeout_s=5))
    assert "[search error: HTTPStatusError" in bad


class _Scripted:
    """Replies in order; records the prompts (plumbing only: the search server is real)."""

    is_agent = False

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.prompts: list[list[dict[str, Any]]] = []

    async def complete(self, messages: list[dict[str, Any]], **_: Any) -> Completion:
        self.prompts.append([dict(m) for m in messages])
        return Completion(text=self.replies[len(self.prompts) - 1], usage=Usage(10, 5))


def test_custom_search_loop_feeds_results_back(search_server, monkeypatch):
    monkeypatch.setenv("OQ_TOKEN", "s3cret")
    env = _env(search_mode="custom", search_api_url=search_server, search_auth_env="OQ_TOKEN",
               max_queries_per_turn=2, search_max_num_results=1, max_tool_turns=3)
    item = env.load_splits().test[0]
    student = _Scripted(["SEARCH: a | b | c", f"ANSWER: {item.gold[0]}"])
    traj = asyncio.run(env.run_task(item, "", student))
    assert traj.hard == 1.0 and traj.extras["search_queries"] == 2
    assert [s["query"] for s in _SearchHandler.seen] == ["a", "b"]  # capped at max_queries_per_turn
    assert "Search results:" in student.prompts[1][-1]["content"]
    assert "Document pages:" in student.prompts[0][1]["content"]  # custom_search keeps the gold pages
    monkeypatch.delenv("OQ_TOKEN")
    with pytest.raises(DataError, match=r"\$OQ_TOKEN"):
        env.load_splits()


@pytest.mark.slow
def test_offline_no_tools_runs_with_the_embedded_model(gguf_path):
    from skillgrad.models.factory import build_llm
    from tests.conftest import local_role

    env = _env(search_mode="offline", use_local_tools=False, max_tokens=24, oracle_chars=1200)
    item = env.load_splits().test[0]
    student = build_llm(local_role(gguf_path, n_ctx=2048), "student")
    traj = asyncio.run(env.run_task(item, "Answer with the number only.", student))
    assert traj.error is None and traj.messages[1]["content"].count("Document pages:") == 1
    assert sum(m["role"] == "assistant" for m in traj.messages) <= 2  # no tool loop: an answer (and one nudge)
    assert 0.0 <= traj.soft <= 1.0 and (traj.hard == 1.0 or traj.fail_reason)
