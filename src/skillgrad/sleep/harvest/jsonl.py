"""Tolerant JSONL reading for session files written by other programs.

Agents append to these files while they run, crash mid-line, and change their schema between versions, so a
reader must survive truncated lines, bad UTF-8, non-object JSON and lines of any size. Each line yields either
a dict or None (a line that could not be read); the caller counts the Nones.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_CHUNK = 1 << 16


def iter_jsonl(path: Path, *, max_line_bytes: int) -> Iterator[dict[str, Any] | None]:
    """Yield each non-blank line of `path` as a dict, or None when it is not a readable JSON object.

    A line longer than `max_line_bytes` is skipped without holding it in memory (yields None).
    """
    with open(path, "rb") as f:
        buf = bytearray()
        oversized = False
        while True:
            chunk = f.read(_CHUNK)
            if not chunk:
                break
            start = 0
            while True:
                nl = chunk.find(b"\n", start)
                if nl < 0:
                    if not oversized:
                        buf += chunk[start:]
                        if len(buf) > max_line_bytes:
                            oversized, buf = True, bytearray()
                    break
                if oversized:
                    yield None
                else:
                    buf += chunk[start:nl]
                    if len(buf) > max_line_bytes:
                        yield None
                    elif buf.strip():
                        yield _decode(bytes(buf))
                buf, oversized, start = bytearray(), False, nl + 1
        if oversized:
            yield None
        elif buf.strip():
            yield _decode(bytes(buf))


def _decode(raw: bytes) -> dict[str, Any] | None:
    try:
        obj = json.loads(raw.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def first_records(path: Path, *, limit: int, max_line_bytes: int) -> list[dict[str, Any]]:
    """The first `limit` readable records of a file (for cheap peeks such as a subagent's parent id)."""
    out: list[dict[str, Any]] = []
    for n, rec in enumerate(iter_jsonl(path, max_line_bytes=max_line_bytes)):
        if rec is not None:
            out.append(rec)
        if len(out) >= limit or n >= limit * 4:
            break
    return out


def text_of(value: Any) -> str:
    """Coerce a field that should be a string (but may be anything in a foreign file) to a string."""
    return value if isinstance(value, str) else ""
