"""A fixed-latency OpenAI-compatible server on loopback, for the benchmarks.

Every chat completion waits `latency_s` (concurrent requests overlap: one thread per request) and then
answers: plain text for plain calls (usage: about 4 characters a token), and for schema'd calls (llama.cpp-style `{"type": "json_object",
"schema": ...}` or OpenAI `json_schema`) a JSON instance built from the schema: every property, one
element per array, the first enum value, the lower bound of numbers. It also records when each request
arrived, so a benchmark can find the first provider call after a restart.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def instance(schema: dict[str, Any], defs: dict[str, Any], n: int) -> Any:
    """A value valid for `schema` (the subset pydantic emits)."""
    if "$ref" in schema:
        return instance(defs[schema["$ref"].split("/")[-1]], defs, n)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return instance(schema[key][0], defs, n)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type", "object")
    if kind == "object":
        return {k: instance(v, defs, n) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [] if schema.get("maxItems", 1) == 0 else [instance(schema.get("items", {}), defs, n)]
    if kind in ("integer", "number"):
        return max(schema.get("minimum", 1), 1) if schema.get("maximum", 1) >= 1 else schema.get("minimum", 0)
    if kind == "boolean":
        return True
    text = f"Always answer with the value from the skill (note {n})."
    return text[: schema.get("maxLength", len(text))]


class LatencyServer:
    def __init__(self, latency_s: float = 0.3, answer: str = "I do not know.") -> None:
        self.latency_s, self.answer = latency_s, answer
        self.arrivals: list[float] = []  # time.time() of every completion request
        self._counter = itertools.count()
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        n = next(self._counter)
        fmt = body.get("response_format") or {}
        schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema")
        text = json.dumps(instance(schema, schema.get("$defs", {}), n)) if schema else self.answer
        prompt = sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) // 4  # ~4 chars a token
        return {"id": f"c{n}", "object": "chat.completion", "created": int(time.time()), "model": body.get("model"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": len(text) // 4,
                          "total_tokens": prompt + len(text) // 4}}

    def start(self) -> LatencyServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: with Nagle's algorithm the body waited for the client's
            # delayed ACK, 40 ms on every call, which the benchmarks counted as skillgrad's overhead.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _send(self, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                self._send({"object": "list", "data": [{"id": "bench", "object": "model"}]})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                server.arrivals.append(time.time())
                time.sleep(server.latency_s)
                self._send(server.reply(body))

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()


def serve_forever(latency_s: float) -> None:
    """`python -m benchmarks.latency_server 0.3`: run one in the foreground (prints its base URL)."""
    s = LatencyServer(latency_s).start()
    print(s.base_url, flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    import sys

    serve_forever(float(sys.argv[1]) if len(sys.argv) > 1 else 0.3)
