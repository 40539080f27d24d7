"""`skillgrad serve-model`: the bundled GGUF behind `python -m llama_cpp.server` on 127.0.0.1, and the price of a
model served on loopback (0, not unknown: it runs on this machine).

The server is started by the command as documented in docs/guide/providers.md, then called by an `openai` role
as a config would; the completion and the meter both say $0 and no `price_unknown` event is sent.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from conftest import EventRecorder, free_port
from test_lean_install import BLOCKER

from skillgrad.config.schema import RoleConfig
from skillgrad.models.factory import build_llm, price_name
from skillgrad.models.prices import Pricing, is_loopback_url

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skillgrad.cli", *args], capture_output=True, text=True,
                          timeout=120, env=env or dict(os.environ))


def test_loopback_servers_price_unpriced_models_as_local() -> None:
    pricing = Pricing()

    class Served:
        name, loopback = "openai", True

        def __init__(self, model: str) -> None:
            self.model = model

    assert is_loopback_url("http://127.0.0.1:8080/v1") and is_loopback_url("http://localhost:1/v1")
    assert is_loopback_url("http://[::1]:8080/v1") and not is_loopback_url("https://api.openai.com/v1")
    assert not is_loopback_url("http://10.0.0.5:8000/v1")
    assert price_name(pricing, Served("smollm2")) == "local"
    assert price_name(pricing, Served("/models/qwen2.5-0.5b-q4.gguf")) == "local"  # llama_cpp.server's default id
    assert price_name(pricing, Served("gpt-4.1")) == "openai"  # a loopback proxy to a paid API keeps its price
    assert price_name(pricing, Served("mystery-model-9")) == "openai"  # and an unknown name stays unknown
    remote = Served("smollm2")
    remote.loopback = False
    assert price_name(pricing, remote) == "openai" and pricing.lookup("openai", "smollm2") is None


def test_bad_options_are_one_line_errors(tmp_path: Path) -> None:
    r = cli("serve-model", "--model", str(tmp_path / "missing.gguf"))
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"error: --model: GGUF file not found: {tmp_path / 'missing.gguf'}"]
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = cli("serve-model", "--port", str(port))
    assert r.returncode == 2 and f"--port {port}: cannot listen on 127.0.0.1:{port}" in r.stderr
    blocked = {**os.environ, "PYTHONPATH": os.pathsep.join([str(BLOCKER), str(ROOT / "src")]),
               "SKILLGRAD_BLOCK_IMPORTS": "starlette_context"}
    r = cli("serve-model", "--port", str(free_port()), env=blocked)
    assert r.returncode == 2, r.stderr
    assert "starlette_context is missing): pip install 'skillgrad[server]'" in r.stderr


@pytest.mark.slow
def test_serve_model_then_an_openai_role_calls_it_for_free(tmp_path: Path, gguf_path: Path) -> None:
    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "skillgrad.cli", "serve-model", "--port", str(port),
                                 "--threads", "1"], stdout=out, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, log.read_text()[-2000:]
            try:
                models = httpx.get(f"{base_url}/models", timeout=1.0)
                if models.status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.3)
        assert [m["id"] for m in models.json()["data"]] == ["smollm2"]
        assert f"as model 'smollm2' at {base_url}" in log.read_text()
        events = EventRecorder()
        llm = build_llm(RoleConfig(provider="openai", model="smollm2", base_url=base_url), "student", emit=events)
        import asyncio

        async def ask() -> object:
            try:
                return await llm.complete([{"role": "user", "content": "Say hello."}], max_tokens=8)
            finally:
                await llm.aclose()

        completion = asyncio.run(ask())
        assert completion.text.strip()  # type: ignore[attr-defined]
        assert completion.cost == 0.0  # type: ignore[attr-defined]
        assert llm.meter.summary()["total"]["cost"] == 0.0  # type: ignore[attr-defined]
        assert "price_unknown" not in events.names()
    finally:
        proc.send_signal(signal.SIGINT)  # what Ctrl-C sends: the server stops
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_estimate_prices_a_loopback_model_at_zero(gguf_path: Path) -> None:
    from skillgrad.api import load_config
    from skillgrad.engine.estimate import estimate_run

    served = {"provider": "openai", "model": "smollm2", "base_url": "http://127.0.0.1:8080/v1"}
    loaded = load_config({"_base_": "skillgrad:demo.yaml", "model": {"student": served},
                          "train": {"num_epochs": 1, "batch_size": 2}, "env": {"n_facts": 10}})
    est = estimate_run(loaded.config)
    assert est["total"]["cost"] == 0.0, est["total"]
    assert all(r["cost"] == 0.0 for r in est["rows"] if r["role"] == "student")
