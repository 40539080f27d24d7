"""events.jsonl: append-only, one JSON line per event; the source of truth for reports and progress.

Every layer receives an `EventSink` (a callable) rather than writing files itself. Lines are
written with a single `write` of a complete line under a lock, so a kill leaves at most one
truncated final line, which readers skip.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from skillgrad.core.redact import redact


class EventSink(Protocol):
    def __call__(self, event: str, **fields: Any) -> None: ...


def null_sink(event: str, **fields: Any) -> None:
    return None


class EventLog:
    def __init__(self, path: Path, listeners: list[Callable[[dict[str, Any]], None]] | None = None) -> None:
        self.path = path
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.listeners = list(listeners or [])

    def __call__(self, event: str, **fields: Any) -> None:
        rec = {"ts": round(time.time(), 3), "event": event, **redact(fields)}
        line = json.dumps(rec, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(line)
        for listener in self.listeners:
            listener(rec)


def read_events(path: Path) -> Iterator[dict[str, Any]]:
    if not path.exists():
        return
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:  # a line cut by a kill
                continue
