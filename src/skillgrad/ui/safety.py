"""What keeps the dashboard safe: paths confined to a root, secrets scrubbed from text, tokens.

Every path that comes from the browser goes through `resolve_under`; every piece of run text that is
rendered goes through `scrub` (config.json is already redacted at write time; this is the second line).
"""

from __future__ import annotations

import hmac
import ipaddress
import re
import secrets
from pathlib import Path
from typing import Any

from skillgrad.config.redact import REDACTED, redact


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


# Key-like strings seen in the wild; a match is replaced, never shown.
_SECRET_PATTERNS = [
    re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\b(?:ghp|gho|github_pat|xox[abpr])_[A-Za-z0-9_]{16,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._\-+/=]{16,}"),
    re.compile(r"(?i)([\"']?(?:api[_-]?key|apikey|secret|password|access[_-]?token|auth[_-]?token)[\"']?\s*[:=]\s*[\"']?)"
               r"([^\s\"',}]{6,})"),
]


def scrub(text: str) -> str:
    """Text with anything that looks like a credential replaced by ***."""
    for pat in _SECRET_PATTERNS:
        if pat.groups == 2:
            text = pat.sub(lambda m: m.group(1) + REDACTED, text)
        elif pat.groups == 1:
            text = pat.sub(lambda m: m.group(1) + " " + REDACTED, text)
        else:
            text = pat.sub(REDACTED, text)
    return text


def scrub_data(obj: Any) -> Any:
    """JSON-like data with secret keys redacted and secret-looking strings scrubbed."""
    obj = redact(obj)
    if isinstance(obj, dict):
        return {k: scrub_data(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [scrub_data(v) for v in obj]
    if isinstance(obj, str):
        return scrub(obj)
    return obj


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
