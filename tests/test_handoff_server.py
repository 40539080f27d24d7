"""The handoff board served as an OpenAI-compatible endpoint: the real `openai` client against the real server on
127.0.0.1, an answering thread standing in for the user's agent (it reads pending.json and writes answers/<id>.md,
as an agent does)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from pydantic import BaseModel

from skillgrad.config.schema import RoleConfig
from skillgrad.integrations.handoff_server import make_server


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., str]]:
    servers = []

    def start(wait_s: float = 180.0) -> str:  # the agent thread answers at once; a loaded machine can take long
        server = make_server(tmp_path / "board", port=0, wait_s=wait_s)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1"

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def agent(board: Path, answer: Callable[[dict[str, Any], str], str], stop: threading.Event,
          seen: list[dict[str, Any]]) -> None:
    """Answers every prompt pending.json lists, once, as an agent would."""
    done: set[tuple[str, str]] = set()  # (id, why its last answer was rejected)
    while not stop.is_set():
        try:
            pending = json.loads((board / "pending.json").read_text())["pending"]
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            pending = []
        for item in pending:
            if (item["id"], item.get("rejected", "")) in done:
                continue
            prompt = Path(item["prompt_file"]).read_text()
            seen.append({**item, "prompt": prompt, "listed": (board / "PROMPTS.md").read_text()})
            done.add((item["id"], item.get("rejected", "")))
            Path(item["answer_file"]).write_text(answer(item, prompt))
        time.sleep(0.05)


def run_agent(board: Path, answer: Callable[[dict[str, Any], str], str]) -> tuple[threading.Event, list[dict[str, Any]]]:
    stop, seen = threading.Event(), []  # type: ignore[var-annotated]
    threading.Thread(target=agent, args=(board, answer, stop, seen), daemon=True).start()
    return stop, seen


def test_the_openai_client_gets_the_agents_answer_and_the_same_request_is_cached(serve, tmp_path: Path) -> None:
    url = serve()
    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
    assert [m.id for m in client.models.list().data] == ["agent"]
    stop, seen = run_agent(tmp_path / "board", lambda item, prompt: "Deploy is green.\n")
    messages = [{"role": "system", "content": "You report build status."}, {"role": "user", "content": "Status?"}]
    reply = client.chat.completions.create(model="agent", messages=messages, max_tokens=50)
    stop.set()
    assert reply.choices[0].message.content == "Deploy is green."
    assert len(seen) == 1 and "Status?" in seen[0]["prompt"] and "You report build status." in seen[0]["prompt"]
    assert seen[0]["id"] in seen[0]["listed"]  # listed in PROMPTS.md while it waited, as a run's prompts are
    assert json.loads((tmp_path / "board" / "pending.json").read_text())["pending"] == []  # answered: off the list
    t0 = time.monotonic()
    again = client.chat.completions.create(model="agent", messages=messages, max_tokens=50)
    assert again.choices[0].message.content == "Deploy is green." and time.monotonic() - t0 < 2.0  # no agent needed


def test_an_unanswered_request_returns_a_clear_pending_status(serve, tmp_path: Path) -> None:
    client = openai.OpenAI(base_url=serve(wait_s=0.5), api_key="unused", max_retries=0)
    with pytest.raises(openai.APIStatusError) as e:
        client.chat.completions.create(model="agent", messages=[{"role": "user", "content": "Hello?"}])
    assert e.value.status_code == 503
    err = e.value.body if isinstance(e.value.body, dict) else {}
    err = err.get("error", err)
    assert err["code"] == "answer_pending" and err["answer_file"].endswith(f"{err['id']}.md")
    assert json.loads((tmp_path / "board" / "pending.json").read_text())["pending"][0]["id"] == err["id"]


def test_a_json_answer_is_checked_and_a_bad_one_asked_again_with_the_reason(serve, tmp_path: Path) -> None:
    client = openai.OpenAI(base_url=serve(), api_key="unused", max_retries=0)
    answers = iter(["not json at all", '{"verdict": "pass"}'])
    stop, seen = run_agent(tmp_path / "board", lambda item, prompt: next(answers))
    fmt = {"type": "json_schema", "json_schema": {"name": "V", "schema": {
        "type": "object", "properties": {"verdict": {"type": "string"}}, "required": ["verdict"]}}}
    reply = client.chat.completions.create(model="agent", messages=[{"role": "user", "content": "Judge it."}],
                                           response_format=fmt)  # type: ignore[arg-type]
    stop.set()
    assert json.loads(reply.choices[0].message.content or "") == {"verdict": "pass"}
    assert '"verdict"' in seen[0]["prompt"]  # the schema is stated in the prompt
    assert "not valid JSON" in seen[1]["prompt"] and seen[1]["rejected"]
    assert list((tmp_path / "board" / "answers").glob("*.rejected.md"))


class Edit(BaseModel):
    op: str
    content: str


def test_a_skillgrad_role_uses_the_agent_through_the_server(serve, tmp_path: Path) -> None:
    """Either role: skillgrad's own `openai` provider with base_url, a structured call, answered by the agent."""
    from skillgrad.models.factory import build_llm

    url = serve()
    stop, seen = run_agent(tmp_path / "board", lambda item, prompt: '{"op": "append", "content": "Be brief."}')
    llm = build_llm(RoleConfig(provider="openai", model="agent", base_url=url, api_key="unused",  # type: ignore[arg-type]
                               max_retries=0), "teacher")
    try:
        c = asyncio.run(llm.complete([{"role": "user", "content": "Propose one edit."}], schema=Edit, max_tokens=80))
    finally:
        stop.set()
        asyncio.run(llm.aclose())
    assert c.parsed == Edit(op="append", content="Be brief.")
    assert "Propose one edit." in seen[0]["prompt"]


def test_the_cli_serves_on_the_port_it_is_given(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "skillgrad.cli", "handoff", "serve", "--board", str(tmp_path / "b"),
                             "--port", str(port), "--wait", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0)
        for _ in range(100):
            try:
                assert [m.id for m in client.models.list().data] == ["agent"]
                break
            except openai.APIConnectionError:
                time.sleep(0.1)
        else:
            pytest.fail(f"the server did not start: {proc.stderr.read() if proc.poll() is not None else ''}")
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert f"http://127.0.0.1:{port}/v1" in out


def test_an_answer_that_breaks_the_schema_is_asked_again_with_where_it_breaks(serve, tmp_path: Path) -> None:
    """The analyst's real schema: a failure description of 244 characters against its 240 was served, the client
    refused it and the run lost the analyst's edits (report-agent-teacher's board, 2026-11-28)."""
    from skillgrad.engine.schemas import analyst_model

    schema = analyst_model(3, 800).model_json_schema()
    edit = {"op": "append", "content": "Answer with the price and ' EUR' only."}
    long = {"edits": [edit], "failure_summary": [{"failure_type": "format", "description": "x" * 244}]}
    fits = {"edits": [edit], "failure_summary": [{"failure_type": "format", "description": "x" * 240}]}
    answers = iter([json.dumps(long), json.dumps(fits)])
    stop, seen = run_agent(tmp_path / "board", lambda item, prompt: next(answers))
    client = openai.OpenAI(base_url=serve(), api_key="unused", max_retries=0)
    fmt = {"type": "json_schema", "json_schema": {"name": "AnalystOutput", "schema": schema}}
    reply = client.chat.completions.create(model="agent", messages=[{"role": "user", "content": "Analyse it."}],
                                           response_format=fmt)  # type: ignore[arg-type]
    stop.set()
    assert json.loads(reply.choices[0].message.content or "") == fits
    assert "$.failure_summary[0].description: 244 characters, at most 240" in seen[1]["rejected"]


def test_the_schema_check_agrees_with_pydantic_on_the_teachers_schemas() -> None:
    from pydantic import ValidationError

    from skillgrad.engine.schemas import analyst_model, merge_model
    from skillgrad.integrations.json_schema_check import schema_problem

    edit = {"op": "replace", "content": "ok", "target": "old"}
    values = [{}, {"edits": []}, {"edits": [edit]}, {"edits": [edit] * 4}, {"edits": [{**edit, "op": "rewrite"}]},
              {"edits": [{"op": "append"}]}, {"edits": [{**edit, "content": "y" * 801}]}, {"edits": "none"},
              {"failure_summary": [{"failure_type": "f", "count": 1000}]}, {"failure_summary": [{"failure_type": 3}]},
              {"edits": [edit], "failure_summary": [{"failure_type": "format", "count": 2, "description": "d"}]}]
    for model in (analyst_model(3, 800), merge_model(4, 800)):
        schema = model.model_json_schema()
        for v in values:
            try:
                model.model_validate(v)
                ok = True
            except ValidationError:
                ok = False
            assert (schema_problem(v, schema) == "") == ok, (model.__name__, v, schema_problem(v, schema))
