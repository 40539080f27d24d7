"""Secret redaction for free text harvested from agent sessions.

`config.redact` redacts structured data by key name; session text is prose and shell output, so secrets are
found by shape instead: vendor key formats, bearer tokens, PEM private keys, `password=` style assignments and
long high-entropy values assigned to environment variables. The assignment rule reuses config.redact's list of
secret-looking names so both redactors agree on what a secret name is. Every pattern is linear-time (no nested
quantifiers) because session lines can be megabytes long.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from skillgrad.config.redact import SECRET_MARKERS

MARK = "[REDACTED]"

# Vendor token shapes. Order matters only for readability: each match is replaced whole.
_VENDOR = re.compile(
    r"""
      sk-ant-[A-Za-z0-9_\-]{16,}                      # Anthropic
    | sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,} # OpenAI
    | github_pat_[A-Za-z0-9_]{20,}                    # GitHub fine-grained PAT
    | gh[pousr]_[A-Za-z0-9]{20,}                      # GitHub classic tokens
    | (?:AKIA|ASIA)[0-9A-Z]{16}                       # AWS access key id
    | xox[abposr]-[A-Za-z0-9\-]{10,}                  # Slack
    | AIza[0-9A-Za-z_\-]{35}                          # Google API key
    | (?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}        # Stripe
    | hf_[A-Za-z0-9]{30,}                             # Hugging Face
    | glpat-[A-Za-z0-9_\-]{20,}                       # GitLab
    | npm_[A-Za-z0-9]{36}                             # npm
    | eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}  # JWT
    """,
    re.VERBOSE,
)
_PEM = re.compile(r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY-----(?:.*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY-----|.*\Z)", re.S)
_BEARER = re.compile(r"(?i)\b(bearer|token|basic)(\s+)([A-Za-z0-9\-._~+/]{16,}=*)")
_URL_CREDS = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]{1,20}://[^\s:/@]{1,100}:)([^\s@/]{1,200})@")

_EXTRA_NAMES = ("passwd", "api-key", "access-key", "credential", "private_key", "access_key", "client_secret", "auth")
_NAME_WORDS = "|".join(re.escape(m) for m in (*SECRET_MARKERS, *_EXTRA_NAMES))
# name = value, name: value, "name": "value", --name value; the name must contain a secret word.
_ASSIGN = re.compile(
    r"""(?ix)
    (?P<name>[A-Za-z0-9_.\-]{0,40}(?:""" + _NAME_WORDS + r""")[A-Za-z0-9_.\-]{0,40})
    (?P<sep>["']?\s{0,3}(?:=|:(?!//))\s{0,3}|\s+)
    (?P<q>["']?)
    (?P<value>[^\s"'`,;&<>(){}\[\]]{4,})
    """
)
# An upper-case environment variable assigned a long value: redacted when the value looks random.
_ENV = re.compile(r"\b(?P<name>[A-Z][A-Z0-9_]{2,64})(?P<sep>=)(?P<q>[\"']?)(?P<value>[A-Za-z0-9+/_\-.=]{20,})")


def entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    if not s:
        return 0.0
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def _looks_random(value: str) -> bool:
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return has_digit and has_alpha and entropy(value) >= 3.5 and "/" not in value.strip("/")[:1]


_NOT_VALUES = {"none", "null", "true", "false", "undefined", "required", "optional", "bearer", "basic", "token"}


def _assign(m: re.Match[str]) -> str:
    name, value = m.group("name"), m.group("value")
    low = name.lower()
    # Counts and settings, not secrets: max_tokens=100, token_count: 5, tokens=...
    if "tokens" in low or low.endswith(("_env", "_count", "_limit", "_file", "_path", "_type")):
        return m.group(0)
    if value == MARK or value.lower() in _NOT_VALUES:
        return m.group(0)
    if "=" not in m.group("sep") and not m.group("q") and value.isalpha():
        return m.group(0)  # "token budget", "password: please": prose, not an assignment

    return f"{name}{m.group('sep')}{m.group('q')}{MARK}"


def _env(m: re.Match[str]) -> str:
    return f"{m.group('name')}={m.group('q')}{MARK}" if _looks_random(m.group("value")) else m.group(0)


def redact_text(text: str) -> str:
    """`text` with every secret-looking substring replaced by [REDACTED]. Idempotent."""
    if not text:
        return text
    text = _PEM.sub(MARK, text)
    text = _VENDOR.sub(MARK, text)
    text = _URL_CREDS.sub(lambda m: m.group(1) + MARK + "@", text)
    text = _BEARER.sub(lambda m: m.group(1) + m.group(2) + MARK, text)
    text = _ASSIGN.sub(_assign, text)
    return _ENV.sub(_env, text)
