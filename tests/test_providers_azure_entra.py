"""Azure Entra ID auth for real: azure-identity's managed-identity flow fetches a token from a loopback
token endpoint (App Service's IDENTITY_ENDPOINT protocol), and a loopback Azure-OpenAI-compatible
server answers only requests that carry that bearer token."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from skillgrad.config.schema import RoleConfig
from skillgrad.errors import ProviderFatal
from skillgrad.models.factory import build_llm
from skillgrad.models.fakes import chat_body

IDENTITY_SECRET = "identity-header-secret"


class EntraStub:
    """Token endpoint at /msi/token, Azure OpenAI chat at /openai/deployments/<name>/chat/completions."""

    def __init__(self) -> None:
        self.token = "entra-token-1"
        self.token_requests: list[dict[str, Any]] = []
        self.chat_auth: list[str] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                url = urlparse(self.path)
                if url.path != "/msi/token":
                    return self._json(404, {"error": "not found"})
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                stub.token_requests.append({"query": query, "header": self.headers.get("X-IDENTITY-HEADER")})
                if self.headers.get("X-IDENTITY-HEADER") != IDENTITY_SECRET:
                    return self._json(401, {"error": "bad identity header"})
                self._json(200, {"access_token": stub.token, "expires_on": str(int(time.time()) + 3600),
                                 "resource": query.get("resource", ""), "token_type": "Bearer"})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                payload = json.loads(self.rfile.read(length) or b"{}")
                auth = self.headers.get("Authorization", "")
                stub.chat_auth.append(auth)
                if "/openai/deployments/" not in self.path:
                    return self._json(404, {"error": {"message": "no such route", "code": "404"}})
                if auth != "Bearer entra-token-1":
                    return self._json(401, {"error": {"code": "PermissionDenied", "message": "bad bearer token"}})
                self._json(200, chat_body("entra ok", str(payload.get("model", "dep"))))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def entra(monkeypatch: pytest.MonkeyPatch) -> Iterator[EntraStub]:
    stub = EntraStub()
    for var in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH",
                "AZURE_USERNAME", "AZURE_FEDERATED_TOKEN_FILE", "MSI_ENDPOINT", "MSI_SECRET",
                "IMDS_ENDPOINT", "AZURE_POD_IDENTITY_AUTHORITY_HOST", "AZURE_OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("IDENTITY_ENDPOINT", f"{stub.base}/msi/token")
    monkeypatch.setenv("IDENTITY_HEADER", IDENTITY_SECRET)
    try:
        yield stub
    finally:
        stub.stop()


def _llm(stub: EntraStub):
    role = RoleConfig(provider="azure", model="gpt-4o-mini", deployment="dep", azure_endpoint=stub.base,
                      auth_mode="entra", max_retries=0)
    return build_llm(role, "teacher")


def test_entra_token_from_a_managed_identity_endpoint_reaches_the_server(entra: EntraStub) -> None:
    llm = _llm(entra)

    async def go() -> list[str]:
        try:
            return [(await llm.complete([{"role": "user", "content": f"hi {i}"}], max_tokens=4)).text
                    for i in range(2)]
        finally:
            await llm.aclose()

    assert asyncio.run(go()) == ["entra ok", "entra ok"]
    assert entra.chat_auth == ["Bearer entra-token-1"] * 2
    # one token request (azure-identity caches the token), for the Cognitive Services resource
    assert len(entra.token_requests) == 1
    assert entra.token_requests[0]["query"]["resource"].startswith("https://cognitiveservices.azure.com")
    assert entra.token_requests[0]["header"] == IDENTITY_SECRET


def test_a_token_the_server_refuses_is_an_auth_error_naming_entra(entra: EntraStub) -> None:
    entra.token = "stale-token"
    llm = _llm(entra)

    async def go() -> None:
        try:
            await llm.complete([{"role": "user", "content": "hi"}], max_tokens=4)
        finally:
            await llm.aclose()

    with pytest.raises(ProviderFatal) as info:
        asyncio.run(go())
    assert info.value.status == 401 and "Entra ID" in str(info.value)
    assert entra.chat_auth == ["Bearer stale-token"]
    assert "stale-token" not in str(info.value)
