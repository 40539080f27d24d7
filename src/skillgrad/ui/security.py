"""ASGI guard in front of every route: token check and Host check.

- With a token (required when binding beyond loopback), every request must carry it: `?token=` (then
  kept in an HttpOnly, SameSite=Strict cookie), an `Authorization: Bearer` header, or that cookie.
- On loopback, the Host header must name a loopback host, so a page on another site cannot reach the
  dashboard through DNS rebinding. State-changing forms also carry a per-server CSRF token (app.py).
"""

from __future__ import annotations

from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

from skillgrad.ui.safety import is_loopback, same_token

COOKIE = "skillgrad_ui_token"


def _host_name(host: str) -> str:
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guard:
    def __init__(self, app: Any, *, token: str | None, loopback: bool) -> None:
        self.app, self.token, self.loopback = app, token, loopback
        self.state = app.state

    async def _deny(self, send: Any, status: int, text: str) -> None:
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
        await send({"type": "http.response.body", "body": text.encode()})

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if self.loopback and not is_loopback(_host_name(headers.get("host", "127.0.0.1"))):
            await self._deny(send, 421, "this dashboard only answers to a loopback Host (127.0.0.1 or localhost)")
            return
        if self.token is None:
            await self.app(scope, receive, send)
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        from_query = (query.get("token") or [None])[0]
        auth = headers.get("authorization", "")
        from_header = auth[7:].strip() if auth.lower().startswith("bearer ") else None
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header is simply no cookie
            cookie = SimpleCookie()
        from_cookie = cookie[COOKIE].value if COOKIE in cookie else None
        if not any(same_token(t, self.token) for t in (from_query, from_header, from_cookie)):
            await self._deny(send, 401, "token required: open the URL printed by `skillgrad ui` "
                                        "(it ends with ?token=...) or send Authorization: Bearer <token>")
            return
        if from_query is not None:
            set_cookie = f"{COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/".encode()

            async def send_with_cookie(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", set_cookie)]}
                await send(message)

            await self.app(scope, receive, send_with_cookie)
            return
        await self.app(scope, receive, send)
