"""A scripted OpenAI-compatible HTTP server on loopback, for fault tests and the retry benchmark.

Each POST consumes the next `Fault` of the script (then the default, a valid completion), so a
test can say "429 with Retry-After 1, then a 500, then a timeout, then succeed" and check how
the client's middleware handled it. Serves /v1/chat/completions, /v1/responses and /v1/models.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Fault:
    kind: str  # ok | status | slow | truncated | not_json | echo_auth
    status: int = 200
    retry_after: float | None = None
    delay_s: float = 0.0
    text: str = "ok"
    message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    finish_reason: str = "stop"

    @classmethod
    def ok(cls, text: str = "ok", finish_reason: str = "stop") -> Fault:
        return cls("ok", text=text, finish_reason=finish_reason)

    @classmethod
    def rate_limit(cls, retry_after: float | None = 1) -> Fault:
        return cls("status", status=429, retry_after=retry_after, message="Rate limit reached, slow down")

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        return cls("status", status=status, message="The server had an error while processing your request")

    @classmethod
    def error(cls, status: int, message: str) -> Fault:
        return cls("status", status=status, message=message)

    @classmethod
    def slow(cls, delay_s: float, text: str = "late") -> Fault:
        return cls("slow", delay_s=delay_s, text=text)

    @classmethod
    def truncated(cls) -> Fault:
        return cls("truncated")

    @classmethod
    def not_json(cls) -> Fault:
        return cls("not_json")

    @classmethod
    def echo_auth(cls, status: int = 401) -> Fault:
        """An error whose body repeats the request's Authorization header (a careless server)."""
        return cls("echo_auth", status=status)


def chat_body(text: str, model: str, finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def responses_body(text: str, model: str) -> dict[str, Any]:
    return {
        "id": "resp-fake", "object": "response", "created_at": int(time.time()), "model": model,
        "status": "completed", "output": [{"type": "message", "id": "msg-fake", "role": "assistant",
                                           "status": "completed",
                                           "content": [{"type": "output_text", "text": text, "annotations": []}]}],
        "usage": {"input_tokens": 11, "output_tokens": 7, "total_tokens": 18},
        "parallel_tool_calls": False, "tool_choice": "auto", "tools": [],
    }


class FaultServer:
    def __init__(self, default: Fault | None = None) -> None:
        self.default = default or Fault.ok()
        self._script: list[Fault] = []
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- control ------------------------------------------------------------------------------
    def script(self, *faults: Fault) -> FaultServer:
        with self._lock:
            self._script = list(faults)
            self.requests.clear()
        return self

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def _next(self) -> Fault:
        with self._lock:
            return self._script.pop(0) if self._script else self.default

    def start(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in separate writes: with Nagle on, the body waits for the client's
            # delayed ACK (about 40 ms per call).
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return None

            def _send(self, status: int, body: bytes, ctype: str = "application/json",
                      headers: dict[str, str] | None = None) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(body)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

            def do_GET(self) -> None:  # noqa: N802
                body = {"object": "list", "data": [{"id": "fake", "object": "model", "owned_by": "test"}]}
                self._send(200, json.dumps(body).encode())

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    payload = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    payload = {}
                with server._lock:
                    server.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": payload,
                                            "t": time.monotonic()})
                fault = server._next()
                model = str(payload.get("model", "fake"))
                make = responses_body if self.path.rstrip("/").endswith("/responses") else chat_body
                if fault.kind == "status":
                    headers = dict(fault.headers)
                    if fault.retry_after is not None:
                        headers["Retry-After"] = f"{fault.retry_after:g}"
                    err = {"error": {"message": fault.message, "type": "fake_error", "code": fault.status}}
                    self._send(fault.status, json.dumps(err).encode(), headers=headers)
                elif fault.kind == "echo_auth":
                    auth = self.headers.get("Authorization", "")
                    err = {"error": {"message": f"Incorrect API key provided: {auth}", "type": "auth"}}
                    self._send(fault.status, json.dumps(err).encode())
                elif fault.kind == "slow":
                    time.sleep(fault.delay_s)
                    self._send(200, json.dumps(make(fault.text, model)).encode())
                elif fault.kind == "truncated":
                    full = json.dumps(make("this reply is cut", model)).encode()
                    self._send(200, full[: len(full) // 2])
                elif fault.kind == "not_json":
                    self._send(200, b"<html><body>502 Bad Gateway</body></html>", ctype="application/json")
                elif make is chat_body:
                    self._send(200, json.dumps(chat_body(fault.text, model, fault.finish_reason)).encode())
                else:
                    self._send(200, json.dumps(make(fault.text, model)).encode())

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fault-server", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
