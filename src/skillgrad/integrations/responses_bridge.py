"""A Responses-API front for a chat-completions server, so the Codex CLI can replay on a local model.

Codex CLI (0.1xx) talks only the OpenAI Responses API (`wire_api = "chat"` was removed: the binary says
"`wire_api = \"chat\"` is no longer supported"), while llama.cpp's server, vLLM and Ollama speak chat
completions. This bridge takes Codex's `POST /v1/responses` (streamed), turns its input items into chat
messages, asks the backend once, and streams the reply back as the Responses events Codex reads
(`response.created`, `response.output_item.added` / `.done`, `response.output_text.delta`,
`response.completed` with usage). Tools are not offered to the backend: a small model answers in text,
which Codex takes as the turn's final message. Earlier tool calls and their outputs in the input become
plain text turns so a multi-turn replay keeps its history.

Run: `python -m skillgrad.integrations.responses_bridge --backend http://127.0.0.1:8000/v1 --port 8011`, then
in `$CODEX_HOME/config.toml`:

    model_provider = "local"
    [model_providers.local]
    name = "local"
    base_url = "http://127.0.0.1:8011/v1"
    wire_api = "responses"

Binds 127.0.0.1 only. Never logs request bodies (they hold the user's project text).
"""

from __future__ import annotations

import argparse
import json
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

ROLE = {"developer": "system", "system": "system", "user": "user", "assistant": "assistant"}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for c in content or []:
        if isinstance(c, dict) and isinstance(c.get("text"), str):
            parts.append(c["text"])
    return "\n".join(parts)


def chat_messages(body: dict[str, Any]) -> list[dict[str, str]]:
    """Responses `instructions` + `input` items -> chat messages (system first, same-role turns merged)."""
    out: list[dict[str, str]] = []

    def add(role: str, text: str) -> None:
        if not text.strip():
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"] += "\n\n" + text
        else:
            out.append({"role": role, "content": text})
    if body.get("instructions"):
        add("system", str(body["instructions"]))
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    for item in items or []:
        kind = item.get("type", "message")
        if kind == "message":
            add(ROLE.get(item.get("role", "user"), "user"), _text(item.get("content")))
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            args = item.get("arguments") or item.get("input") or json.dumps(item.get("action", {}))
            add("assistant", f"(called {item.get('name', kind)} {args})")
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            add("user", f"(tool output)\n{output if isinstance(output, str) else json.dumps(output)}")
    if out and out[0]["role"] == "system" and len(out) == 1:
        out.append({"role": "user", "content": "Go on."})
    return out


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps({'type': event, **data})}\n\n".encode()


def response_events(text: str, usage: dict[str, Any], model: str) -> Iterator[bytes]:
    """The Responses stream of one assistant message."""
    rid, mid = f"resp_{uuid.uuid4().hex[:24]}", f"msg_{uuid.uuid4().hex[:24]}"
    base = {"id": rid, "object": "response", "model": model}
    yield sse("response.created", {"response": {**base, "status": "in_progress", "output": []}})
    item = {"type": "message", "id": mid, "role": "assistant", "status": "in_progress", "content": []}
    yield sse("response.output_item.added", {"output_index": 0, "item": item})
    if text:
        yield sse("response.output_text.delta", {"item_id": mid, "output_index": 0, "content_index": 0,
                                                 "delta": text})
    done = {**item, "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}]}
    yield sse("response.output_item.done", {"output_index": 0, "item": done})
    prompt, completion = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    yield sse("response.completed", {"response": {
        **base, "status": "completed", "output": [done],
        "usage": {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": completion, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": prompt + completion}}})


def failed_event(message: str) -> bytes:
    rid = f"resp_{uuid.uuid4().hex[:24]}"
    return sse("response.failed", {"response": {"id": rid, "status": "failed",
                                                "error": {"code": "server_error", "message": message}}})


class Bridge:
    """The backend a bridge server forwards to (its chat-completions base URL, model and reply cap)."""

    def __init__(self, backend: str, *, model: str = "", max_tokens: int = 256, timeout_s: float = 600.0) -> None:
        self.backend = backend.rstrip("/")
        self.model = model
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s

    def complete(self, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        cap = body.get("max_output_tokens") or self.max_tokens
        payload = {"model": self.model or body.get("model", ""), "messages": chat_messages(body),
                   "max_tokens": min(int(cap), self.max_tokens), "temperature": body.get("temperature", 0.0) or 0.0}
        r = httpx.post(f"{self.backend}/chat/completions", json=payload, timeout=self.timeout_s)
        if r.status_code != 200:
            raise RuntimeError(f"backend {r.status_code}: {r.text[:300]}")
        data = r.json()
        return str(data["choices"][0]["message"].get("content") or "").strip(), data.get("usage") or {}


def handler_for(bridge: Bridge) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in separate writes: with Nagle on, the body waits for the client's
        # delayed ACK (about 40 ms per call).
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            return  # request lines only; bodies are never logged

        def _json(self, status: int, obj: dict[str, Any]) -> None:
            raw = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": [{"id": bridge.model or "local", "object": "model"}]})
            else:
                self._json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                self._json(400, {"error": {"message": "request body is not JSON"}})
                return
            if not self.path.rstrip("/").endswith("/responses"):
                self._json(404, {"error": {"message": f"no route {self.path}; this bridge serves /v1/responses"}})
                return
            try:
                text, usage = bridge.complete(body)
                chunks = list(response_events(text, usage, str(body.get("model", ""))))
            except (httpx.HTTPError, RuntimeError, KeyError, ValueError) as e:
                chunks = [failed_event(f"responses bridge: {e}")]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Content-Length", str(sum(len(c) for c in chunks)))
            self.end_headers()
            for c in chunks:
                self.wfile.write(c)
    return Handler


def serve(bridge: Bridge, port: int = 0) -> tuple[ThreadingHTTPServer, threading.Thread]:
    """Start the bridge on 127.0.0.1 (port 0: a free one) in a thread; `server.server_address` has the port."""
    server = ThreadingHTTPServer(("127.0.0.1", port), handler_for(bridge))
    thread = threading.Thread(target=server.serve_forever, daemon=True, name="responses-bridge")
    thread.start()
    return server, thread


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", required=True, help="chat-completions base URL, e.g. http://127.0.0.1:8000/v1")
    ap.add_argument("--model", default="", help="model name sent to the backend (default: the one Codex sends)")
    ap.add_argument("--port", type=int, default=8011)
    ap.add_argument("--max-tokens", type=int, default=256, help="reply cap sent to the backend")
    a = ap.parse_args(argv)
    server, thread = serve(Bridge(a.backend, model=a.model, max_tokens=a.max_tokens), a.port)
    print(f"responses bridge on http://127.0.0.1:{server.server_address[1]}/v1 -> {a.backend}", flush=True)
    try:
        thread.join()
    except KeyboardInterrupt:
        server.shutdown()


if __name__ == "__main__":
    main()
