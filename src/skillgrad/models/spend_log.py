"""spend.jsonl: an append-only log of every settled LLM call, so a SIGKILL forgets no spending.

The meter and the budget are checkpointed in runtime_state.json at stage boundaries; calls made
after the last checkpoint would be forgotten by a killed run. Each of them appends one line here
(a single `os.write` on an O_APPEND descriptor, so a kill leaves at most one cut line, which readers
skip), and each snapshot names the last line it already holds: restoring = snapshot + later lines.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any


class SpendLog:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        records = self._read()
        self.seq = max((int(r.get("seq", 0)) for r in records), default=0)
        self._fd: int | None = None

    def _read(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:  # cut by a kill
                continue
            if isinstance(rec, dict):
                out.append(rec)
        return out

    def append(self, kind: str, data: dict[str, Any]) -> int:
        """Write one record; returns its sequence number."""
        with self._lock:
            self.seq += 1
            line = json.dumps({"seq": self.seq, "kind": kind, **data}, ensure_ascii=False, default=str) + "\n"
            if self._fd is None:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.write(self._fd, line.encode("utf-8"))
            return self.seq

    def since(self, kind: str, seq: int) -> list[dict[str, Any]]:
        """Records of `kind` written after sequence number `seq`, in order."""
        with self._lock:
            records = self._read()
        return sorted((r for r in records if r.get("kind") == kind and int(r.get("seq", 0)) > seq),
                      key=lambda r: int(r["seq"]))

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
