"""Providers: the innermost handler of a role's chain, one module per backend.

Contract (every provider module, built-in or lazily loaded by `models.factory`):

    def create(role_cfg: RoleConfig, role: str) -> Provider

A `Provider` is an object with
- `name: str`            provider name ("local", "openai", "azure", "anthropic", "codex", "claude_code")
- `model: str`           model / deployment name as sent to the backend
- `endpoint: str`        (optional) human-readable endpoint for error messages, never a secret
- `supports_vision: bool`
- `is_agent: bool`       True for harness students (codex, claude_code)
- `bills_cancelled: bool` (optional) True for HTTP backends: a request cancelled after it was sent is
                         counted as `cancelled` with its prompt tokens (models/cancelled.py)
- `params() -> dict`     non-secret parameters that change replies (base_url, api flavour,
                         repeat_penalty, ...); they go into the cache key, so never put a key here
- `async __call__(req: Request) -> Completion`
                         raw reply text (no parsing: the client parses after the cache); set
                         `usage`, `finish_reason` ("stop" | "length" | ...), optionally `cost`
                         (when the backend reports its own spend) and `trace` (agents)
- `count_tokens(text) -> int`  (optional) exact token count; the client falls back to len(text)//4
- `async aclose()`       release clients / subprocesses

Errors: raise `ProviderError(retryable=True, status=..., retry_after=...)` for transient failures
(429, 5xx, timeouts, connection errors) and `ProviderFatal` for auth / bad request / missing binary.
Messages must never contain secrets. The provider must honour `req.max_tokens`, `req.temperature`
and, when `req.schema` is set, enforce it natively where the backend can (grammar, json_schema,
tools); otherwise it asks for JSON in the prompt and the client's tolerant parser does the rest.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from skillgrad.errors import ConfigError

BUILTIN = ("local", "openai")
KNOWN = ("local", "openai", "azure", "anthropic", "codex", "claude_code", "handoff")


def load_provider_module(name: str) -> ModuleType:
    """Import the module for provider `name` lazily (optional SDKs load only when used).

    `skillgrad.models.providers.<name>` is tried first; the agent harnesses (codex, claude_code)
    may instead live together in `providers.agents`, whose `create` reads `role_cfg.provider`.
    """
    if name not in KNOWN:
        raise ConfigError(f"unknown provider {name!r}; use one of {', '.join(KNOWN)}")
    candidates = [name] + (["agents"] if name in ("codex", "claude_code") else [])
    for module_name in candidates:
        full = f"skillgrad.models.providers.{module_name}"
        try:
            return importlib.import_module(full)
        except ModuleNotFoundError as e:
            if e.name == full:
                continue  # this candidate module does not exist; try the next
            raise ConfigError(
                f"provider {name!r} needs the Python package {e.name!r}; install it (pip install {e.name})"
            ) from e
    raise ConfigError(f"provider {name!r} is not available in this installation")
