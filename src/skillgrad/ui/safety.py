"""What keeps the dashboard safe: paths confined to a root, secrets scrubbed from text, tokens.

Every path that comes from the browser goes through `resolve_under`; every piece of run text that is
rendered goes through `scrub` (core/redact.py, the one redactor; config.json is already redacted at write time; this is the second line).
"""

from __future__ import annotations

import hmac
import ipaddress
import re
import secrets
from pathlib import Path
from typing import Any

from skillgrad.core.redact import REDACTED, redact, redact_text


class PathRefused(ValueError):
    """A browser-supplied path that is absolute, escapes the root, or does not exist."""


def resolve_under(root: Path, rel: str) -> Path:
    """`root / rel` fully resolved (symlinks followed), refused unless it stays inside `root`."""
    if not rel or "\x00" in rel:
        raise PathRefused("empty path")
    if rel.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", rel) or Path(rel).is_absolute():
        raise PathRefused("absolute path")
    base = root.resolve()
    target = (base / rel).resolve()
    if not target.is_relative_to(base):
        raise PathRefused("outside the root")
    return target


def scrub(text: str) -> str:
    """Text with anything that looks like a credential replaced by ***."""
    return redact_text(text, REDACTED)


def scrub_data(obj: Any) -> Any:
    """JSON-like data with secret keys redacted and secret-looking strings scrubbed."""
    return redact(obj, REDACTED)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def new_token() -> str:
    return secrets.token_urlsafe(24)


def same_token(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())
