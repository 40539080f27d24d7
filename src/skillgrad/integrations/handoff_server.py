"""An OpenAI-compatible model server on 127.0.0.1 whose answers come from the handoff board.

`skillgrad handoff serve --board DIR --port N` lets any tool that speaks the OpenAI chat API use the user's own
coding agent as its model: a skillgrad role (`provider: openai`, `base_url: http://127.0.0.1:N/v1`), or SkillOpt,
GEPA or DSPy through their OpenAI clients. Each `POST /v1/chat/completions` becomes a handoff prompt on the board
(models/providers/handoff.py): `DIR/PROMPTS.md` and `DIR/pending.json` list the open prompts as a run's handoff does,
the agent writes `DIR/answers/<id>.md`, and the request returns that answer as a chat completion.

- A request blocks until its answer is written, at most `--wait` seconds; then it gets HTTP 503 with
  `{"error": {"type": "handoff_pending", "code": "answer_pending", "id": ...}}` and a `Retry-After` header, and the
  same request sent again waits on the same prompt (OpenAI clients retry a 503 by themselves).
- Answers are cached: the same request (its messages, response format and `n`-th sample) has the same id, so it is
  answered from `answers/<id>.md` at once, in this server or a later one on the same board.
- A request with a JSON `response_format` states its schema in the prompt; an answer that is not one JSON object,
  or breaks the schema (a missing field, a text over its `maxLength`: json_schema_check.py), is moved to
  `answers/<id>.rejected.md` and asked again with the reason, as an API with structured outputs never returns it.
- `GET /v1/models` lists the one model, `--model` (default `agent`). No key is checked; it binds 127.0.0.1 only and
  never logs request bodies (they hold the user's text).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from skillgrad.integrations.json_schema_check import schema_problem
from skillgrad.models.base import Request
from skillgrad.models.providers.handoff import ID_CHARS, Board, prompt_hash

POLL_S = 0.2
RETRY_AFTER_S = 5


def schema_type(schema: dict[str, Any]) -> type[BaseModel]:
    """A stand-in schema class for a request's JSON schema: the board states it in the prompt and hashes it."""

    class Given(BaseModel):
        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:  # type: ignore[override]
            return schema

    Given.__name__ = str(schema.get("title") or "Reply")
    return Given


def request_of(body: dict[str, Any]) -> Request:
    """The board's request for a chat-completions body (its messages, reply length and response format)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages: a non-empty list of {role, content} is required")
    fmt = body.get("response_format") or {}
    schema: dict[str, Any] | None = None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = dict((fmt.get("json_schema") or {}).get("schema") or {"type": "object"})
    elif isinstance(fmt, dict) and fmt.get("type") == "json_object":
        schema = dict(fmt.get("schema") or {"type": "object"})  # llama.cpp's server takes a schema beside it
    max_tokens = int(body.get("max_completion_tokens") or body.get("max_tokens") or 1024)
    return Request(messages=[{"role": str(m.get("role", "user")), "content": m.get("content", "")} for m in messages],
                   max_tokens=max_tokens, temperature=float(body.get("temperature") or 0.0),
                   schema=schema_type(schema) if schema is not None else None, stage="serve", role="served",
                   sample=int(body.get("seed") or 0))


def json_problem(text: str, schema: dict[str, Any] | None = None) -> str:
    """Why a structured answer is not one JSON object, or (given the request's schema) breaks it ('' when it fits);
    a ```json fence around it is allowed."""
    t = text.strip()
    if t.startswith("```"):
        t = t.split("\n", 1)[-1].rsplit("```", 1)[0]
    try:
        value = json.loads(t)
    except json.JSONDecodeError as e:
        return f"the answer is not valid JSON ({e.msg} at line {e.lineno} column {e.colno}); write one JSON object"
    if not isinstance(value, dict):
        return "the answer is JSON but not an object; write one JSON object"
    problem = schema_problem(value, schema) if schema else ""
    return f"the answer does not fit the schema ({problem}); fix that and write the whole JSON object again" \
        if problem else ""


class ServedBoard:
    """A board shared by the server's request threads: a prompt stays listed in pending.json until answered."""

    def __init__(self, root: Path) -> None:
        self.board = Board(root, scope="serve")
        self.lock = threading.Lock()

    def call_id(self, req: Request, model: str) -> str:
        return req.cache_key("handoff", model, {})[:ID_CHARS]

    def take(self, call_id: str, req: Request) -> str | None:
        """The answer when it is on disk (and valid); else the prompt is (still) listed and None."""
        with self.lock:
            b = self.board
            found = b.read_answer(call_id, prompt_hash(req))
            note = ""
            if found is not None and req.schema is not None and (note := json_problem(found[1], req.schema.model_json_schema())):
                b.reject(found[0], call_id, note)
                found = None
            if found is not None:
                if b.asked.pop(call_id, None) is not None:
                    self._flush()
                else:
                    b._save_index()
                return found[1]
            if call_id not in b.asked or note:
                b.flushed = False  # one open round for the server's whole life: earlier prompts stay listed
                b.ask(call_id, req, note)
                self._flush()
            return None

    def _flush(self) -> None:
        self.board.flush()
        self.board.flushed = False


def completion(text: str, call_id: str, model: str, req: Request) -> dict[str, Any]:
    prompt_chars = sum(len(str(m.get("content") or "")) for m in req.messages)
    usage = {"prompt_tokens": prompt_chars // 4, "completion_tokens": len(text) // 4}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return {"id": f"chatcmpl-{call_id}", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": usage}


def make_server(board_dir: Path, *, port: int = 0, model: str = "agent", wait_s: float = 570.0) -> ThreadingHTTPServer:
    """The server (not started): `serve_forever()` it, or run it on a thread in tests; port 0 = a free port."""
    served = ServedBoard(board_dir)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            return  # no request lines on stderr: paths are harmless, but bodies never reach a log either

        def _send(self, code: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def _error(self, code: int, message: str, kind: str) -> None:
            self._send(code, {"error": {"message": message, "type": kind}})

        def do_GET(self) -> None:  # noqa: N802 - the http.server name
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                self._send(200, {"object": "list", "data": [{"id": model, "object": "model", "created": 0,
                                                             "owned_by": "skillgrad-handoff"}]})
            else:
                self._error(404, f"no route {self.path}: this server has /v1/models and /v1/chat/completions",
                            "not_found")

        def do_POST(self) -> None:  # noqa: N802
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                return self._error(404, f"no route {self.path}: POST /v1/chat/completions", "not_found")
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if int(body.get("n") or 1) != 1:
                    raise ValueError("n: only n=1 is served; send one request per sample (with a different seed)")
                req = request_of(body)
            except (ValueError, TypeError, AttributeError) as e:
                return self._error(400, f"bad request: {e}", "invalid_request_error")
            name = str(body.get("model") or model)
            call_id = served.call_id(req, model)
            deadline = time.monotonic() + wait_s
            while True:
                text = served.take(call_id, req)
                if text is not None:
                    break
                if time.monotonic() >= deadline:
                    answer = served.board.answer_file(call_id)
                    message = (f"answer pending: prompt {call_id} is listed in {served.board.root / 'PROMPTS.md'}; "
                               f"write the reply to {answer} and send the same request again")
                    return self._send(503, {"error": {"message": message, "type": "handoff_pending",
                                                      "code": "answer_pending", "id": call_id,
                                                      "answer_file": str(answer)}},
                                      {"Retry-After": str(RETRY_AFTER_S)})
                time.sleep(POLL_S)
            out = completion(text, call_id, name, req)
            if body.get("stream"):
                return self._stream(out)
            return self._send(200, out)

        def _stream(self, out: dict[str, Any]) -> None:
            """The answer as one server-sent chunk, then [DONE] (clients that ask for a stream get one)."""
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            text = out["choices"][0]["message"]["content"]
            for delta, finish in (({"role": "assistant", "content": text}, None), ({}, "stop")):
                chunk = {"id": out["id"], "object": "chat.completion.chunk", "created": out["created"],
                         "model": out["model"], "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    return server
