"""The one secret redactor: structured data by key name, free text by shape.

Used for everything that reaches disk, logs, events, reports, cache keys and pages: config.json, events.jsonl,
harvested agent sessions, the dashboard. Structured data: a value under a secret-looking key (`api_key`,
`password`, `authorization`, ...) becomes `***` whole (resume reads `***` back as "unset"). Text (prose, shell
output, error messages): vendor key shapes, bearer tokens, PEM private keys, URL credentials, Slack webhooks,
Azure connection-string keys, Google OAuth tokens, `password=` style assignments, long random strings quoted after
a secret-like name in any config syntax (`config :app, :signing_secret, "..."`) and long random values assigned to
environment variables are replaced by a mark. Every pattern is linear-time (no nested quantifiers): session
lines can be megabytes long. Prose that merely names a secret word (`**Token Efficiency**:`, `the token budget`)
is left alone.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

SECRET_MARKERS = ("api_key", "apikey", "token", "secret", "password", "authorization")
REDACTED = "***"  # a whole value under a secret key
MARK = "[REDACTED]"  # a secret found inside text

# Vendor token shapes; each match is replaced whole.
_VENDOR = re.compile(
    r"""
      sk-ant-[A-Za-z0-9_\-]{16,}                      # Anthropic
    | sk-(?:proj-|svcacct-|admin-)[A-Za-z0-9_\-]{16,} # OpenAI project / service / admin keys
    | sk-[A-Za-z0-9_\-]{20,}                          # OpenAI legacy
    | github_pat_[A-Za-z0-9_]{20,}                    # GitHub fine-grained PAT
    | gh[pousr]_[A-Za-z0-9]{16,}                      # GitHub classic tokens
    | (?:AKIA|ASIA)[0-9A-Z]{16}                       # AWS access key id
    | xox[abposr]-[A-Za-z0-9\-]{10,}                  # Slack tokens
    | https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{8,}  # Slack webhooks
    | AIza[0-9A-Za-z_\-]{35}                          # Google API key
    | ya29\.[0-9A-Za-z_\-]{20,}                       # Google OAuth access token
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
# Azure storage / service bus connection strings: AccountKey=...;  SharedAccessKey=...;
_AZURE_KEY = re.compile(r"(?i)\b(AccountKey|SharedAccessKey)(=)([A-Za-z0-9+/=%]{8,})")

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
# A long random string quoted right after a secret-like name, in any config syntax: Elixir
# `config :app, :session_signing_secret, "..."`, Ruby `:secret_key => "..."`, `set("api_secret", "...")`, TOML,
# YAML or JSON. Redacted when the value looks random (digits and letters, >= 3.5 bits per character).
_KEYED_STRING = re.compile(
    r"""(?ix)
    (?P<name>[A-Za-z0-9_.\-]{0,40}(?:""" + _NAME_WORDS + r"""|key|salt|signing|cookie)[A-Za-z0-9_.\-]{0,40})
    (?P<sep>["']?\s{0,3}(?:=>|=|:|,)?\s{0,3})
    (?P<q>["'])
    (?P<value>[A-Za-z0-9+/_\-.=]{24,400})
    (?P=q)
    """
)
# An upper-case environment variable assigned a long value: redacted when the value looks random.
_ENV = re.compile(r"\b(?P<name>[A-Z][A-Z0-9_]{2,64})(?P<sep>=)(?P<q>[\"']?)(?P<value>[A-Za-z0-9+/_\-.=]{20,})")
_NOT_VALUES = {"none", "null", "true", "false", "undefined", "required", "optional", "bearer", "basic", "token"}


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


def _assign(m: re.Match[str], mark: str) -> str:
    name, value, sep = m.group("name"), m.group("value"), m.group("sep")
    low = name.lower()
    # Counts and settings, not secrets: max_tokens=100, token_count: 5, tokens=...
    if "tokens" in low or low.endswith(("_env", "_count", "_limit", "_file", "_path", "_type")):
        return m.group(0)
    if value in (MARK, REDACTED) or value.lower() in _NOT_VALUES:
        return m.group(0)
    # tig's `set show-author = abbreviated`, `author: Ada`: "auth" inside "author" names no secret
    if not any(w in re.sub(r"author(?!i[sz])", "", low) for w in (*SECRET_MARKERS, *_EXTRA_NAMES)):
        return m.group(0)
    # "token budget", "password: please", "**Token Efficiency**:": prose. Without `=` or quotes a value counts
    # only when it holds a digit (keys and passwords do; words and headings do not).
    if "=" not in sep and not m.group("q") and not any(c.isdigit() for c in value):
        return m.group(0)
    return f"{name}{sep}{m.group('q')}{mark}"


def redact_text(text: str, mark: str = MARK) -> str:
    """`text` with every secret-looking substring replaced by `mark`. Idempotent."""
    if not text:
        return text
    text = _PEM.sub(mark, text)
    text = _VENDOR.sub(mark, text)
    text = _URL_CREDS.sub(lambda m: m.group(1) + mark + "@", text)
    text = _AZURE_KEY.sub(lambda m: m.group(1) + m.group(2) + mark, text)
    text = _BEARER.sub(lambda m: m.group(1) + m.group(2) + mark, text)
    text = _KEYED_STRING.sub(lambda m: f"{m.group('name')}{m.group('sep')}{m.group('q')}{mark}{m.group('q')}"
                             if _looks_random(m.group("value")) else m.group(0), text)
    text = _ASSIGN.sub(lambda m: _assign(m, mark), text)
    return _ENV.sub(lambda m: f"{m.group('name')}={m.group('q')}{mark}" if _looks_random(m.group("value"))
                    else m.group(0), text)


def is_secret_key(key: str) -> bool:
    k = key.lower()
    return any(m in k for m in SECRET_MARKERS) and not k.endswith("_env") and "tokens" not in k


def redact(obj: Any, mark: str = MARK) -> Any:
    """JSON-like data: values under secret keys become `***`; secrets inside other strings become `mark`."""
    if isinstance(obj, dict):
        return {k: (REDACTED if is_secret_key(str(k)) and v not in (None, "") else redact(v, mark))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [redact(v, mark) for v in obj]
    if isinstance(obj, str):
        return redact_text(obj, mark)
    return obj


def redact_override(text: str) -> str:
    """One config override (`-o key=value`): the whole value when the key is secret-like
    (`model.student.api_key=...`), whatever its shape; otherwise the text with secrets inside it marked."""
    key, sep, value = text.partition("=")
    if sep and value and is_secret_key(key.strip()):
        return f"{key}={REDACTED}"
    return redact_text(text)


def redact_sources(info: dict[str, Any]) -> dict[str, Any]:
    """A config's sources record (files, warnings, overrides) as config.json keeps it."""
    out = redact(info)
    if isinstance(info.get("overrides"), list):
        out["overrides"] = [redact_override(str(o)) for o in info["overrides"]]
    return out
