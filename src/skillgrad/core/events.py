"""events.jsonl: append-only, one JSON line per event; the source of truth for reports and progress.

Every layer receives an `EventSink` (a callable) rather than writing files itself. Lines are
written with a single `write` of a complete line under a lock, so a kill leaves at most one
truncated final line, which readers skip (and the next writer ends with a newline before appending,
so that line never swallows a good one). Damaged lines elsewhere are skipped with one warning.
"""

from __future__ import annotations

import json
import os
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from skillgrad.core.atomic import writing
from skillgrad.core.redact import redact
from skillgrad.errors import DamageWarning


class EventSink(Protocol):
    def __call__(self, event: str, **fields: Any) -> None: ...


def null_sink(event: str, **fields: Any) -> None:
    return None


class EventLog:
    def __init__(self, path: Path, listeners: list[Callable[[dict[str, Any]], None]] | None = None) -> None:
        self.path = path
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._checked = False
        self.listeners = list(listeners or [])

    def __call__(self, event: str, **fields: Any) -> None:
        rec = {"ts": round(time.time(), 3), "event": event, **redact(fields)}
        line = json.dumps(rec, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            append_line(self.path, line, repair_cut=not self._checked)
            self._checked = True
        for listener in self.listeners:
            listener(rec)


def append_line(path: Path, line: str, *, repair_cut: bool, fsync: bool = False) -> None:
    """Append one JSONL line; `repair_cut` (the writer's first append) ends a line cut by a kill first, so it
    cannot swallow the new one."""
    with writing(path):
        if repair_cut and not ends_with_newline(path):
            line = "\n" + line
        with open(path, "a", encoding="utf-8") as f:
            f.write(line)
            if fsync:
                f.flush()
                os.fsync(f.fileno())


def ends_with_newline(path: Path) -> bool:
    """True for a missing or empty file or one whose last byte is a newline."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            if f.tell() == 0:
                return True
            f.seek(-1, 2)
            return f.read(1) == b"\n"
    except FileNotFoundError:
        return True


def read_jsonl(path: Path, on_skip: Callable[[int], None] | None = None) -> Iterator[Any]:
    """Each line's JSON. A final line without its newline (a kill mid-write) is dropped silently; other
    lines that do not parse are skipped and counted: `on_skip(n)` once at the end, or one DamageWarning."""
    if not path.exists():
        return
    skipped = 0
    with open(path, encoding="utf-8", errors="replace") as f:  # a bad byte damages one value, not the file
        for raw in f:
            line = raw.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                skipped += raw.endswith("\n")
    if skipped:
        if on_skip is not None:
            on_skip(skipped)
        else:
            warnings.warn(f"{path}: skipped {skipped} damaged line{'s' if skipped > 1 else ''}", DamageWarning,
                          stacklevel=2)


def read_events(path: Path, on_skip: Callable[[int], None] | None = None) -> Iterator[dict[str, Any]]:
    for rec in read_jsonl(path, on_skip):
        if isinstance(rec, dict):
            yield rec
