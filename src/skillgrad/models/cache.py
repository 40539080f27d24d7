"""Persistent LLM cache in SQLite: raw reply text, usage and finish reason keyed by the request.

WAL mode plus a busy timeout lets several processes (a training run and a resumed one, parallel
workers) share one file. The key is `Request.cache_key(provider, model, params)`, which never holds
secrets; a sample index is part of it, so temperature > 0 samples stay distinct.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
import threading
import time
import warnings
from pathlib import Path
from typing import Any

from skillgrad.core.atomic import writing
from skillgrad.errors import DamageWarning
from skillgrad.models.base import Completion, Handler, Request, Usage

_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    usage TEXT NOT NULL,
    finish_reason TEXT,
    trace TEXT,
    created REAL NOT NULL
)
"""


_DIGESTS: dict[tuple[str, int, int], str] = {}  # (path, mtime_ns, size) -> sha256: hash a file once
_DIGEST_LOCK = threading.Lock()


def file_digest(path: Path | str) -> str:
    """sha256 of a file's content (for cache keys of local models: two GGUFs with one name differ),
    computed once per path, mtime and size in a process."""
    st = os.stat(path)
    key = (str(Path(path).resolve()), st.st_mtime_ns, st.st_size)
    with _DIGEST_LOCK:
        if key in _DIGESTS:
            return _DIGESTS[key]
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    with _DIGEST_LOCK:
        _DIGESTS[key] = h.hexdigest()
    return _DIGESTS[key]


class LLMCache:
    def __init__(self, path: Path | str, *, busy_timeout_ms: int = 10_000) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.busy_timeout_ms = busy_timeout_ms
        try:
            self._conn = self._open()
            self._conn.execute("SELECT COUNT(*) FROM completions WHERE rowid < 0").fetchone()
        except sqlite3.DatabaseError as e:  # not a database, or a damaged one: it is only a cache
            if "locked" in str(e):
                raise
            aside = self._move_aside(e)
            self._conn = self._open()
            warnings.warn(f"{self.path} is damaged ({e}); moved it to {aside.name} and started an empty cache "
                          "(the run goes on; finished stages are still reused from the run folder)",
                          DamageWarning, stacklevel=2)
        self.hits = 0
        self.misses = 0
        self._write_failed = False

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(str(self.path), timeout=self.busy_timeout_ms / 1000, check_same_thread=False,
                               isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_ms)}")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_SCHEMA)
        except BaseException:
            conn.close()
            raise
        return conn

    def _move_aside(self, e: Exception) -> Path:
        aside = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        with writing(self.path):
            os.replace(self.path, aside)
            for suffix in ("-wal", "-shm"):  # the old journal belongs to the old file
                side = self.path.with_name(self.path.name + suffix)
                if side.exists():
                    os.replace(side, aside.with_name(aside.name + suffix))
        return aside

    def get(self, key: str) -> Completion | None:
        with self._lock:
            try:
                row = self._conn.execute(
                    "SELECT provider, model, text, usage, finish_reason, trace FROM completions WHERE key = ?", (key,)
                ).fetchone()
            except sqlite3.DatabaseError as e:  # a damaged page: this entry is a miss
                self._warn_once(f"{self.path}: a damaged entry could not be read ({e}); the call runs again")
                row = None
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
        provider, model, text, usage, finish_reason, trace = row
        u = json.loads(usage)
        return Completion(
            text=text, usage=Usage(**u), cost=0.0, cached=True, model=model, provider=provider,
            finish_reason=finish_reason, trace=json.loads(trace) if trace else None,
        )

    def put(self, key: str, comp: Completion) -> None:
        usage = {"prompt_tokens": comp.usage.prompt_tokens, "completion_tokens": comp.usage.completion_tokens,
                 "cached_tokens": comp.usage.cached_tokens}
        trace = json.dumps(comp.trace, ensure_ascii=False, default=str) if comp.trace is not None else None
        with self._lock:
            try:
                self._conn.execute(
                    "INSERT OR REPLACE INTO completions (key, provider, model, text, usage, finish_reason, trace, "
                    "created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (key, comp.provider, comp.model, comp.text, json.dumps(usage), comp.finish_reason, trace,
                     time.time()),
                )
            except sqlite3.DatabaseError as e:  # full disk, read-only or damaged file: the reply is still good
                self._warn_once(f"{self.path}: cannot store replies ({e}); the run goes on without caching them")

    def _warn_once(self, message: str) -> None:
        if not self._write_failed:
            self._write_failed = True
            warnings.warn(message, DamageWarning, stacklevel=3)

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM completions").fetchone()[0])

    def stats(self) -> dict[str, Any]:
        return {"hits": self.hits, "misses": self.misses, "entries": len(self), "path": str(self.path)}

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def wrap(self, inner: Handler, *, provider: str, model: str, params: dict[str, Any]) -> Handler:
        # One request in flight per key: two identical requests sent together (two skills that read the same
        # to the student, scored at once) would both miss and both pay; the second waits and reads the reply.
        inflight: dict[tuple[int, str], asyncio.Future[None]] = {}

        async def cached(req: Request) -> Completion:
            key = req.cache_key(provider, model, params)
            hit = self.get(key)
            if hit is not None:
                return hit
            loop = asyncio.get_running_loop()
            slot = (id(loop), key)
            pending = inflight.get(slot)
            if pending is not None:
                await asyncio.shield(pending)
                hit = self.get(key)
                if hit is not None:
                    return hit  # else the first call failed (or could not be stored): this one is sent itself
            done: asyncio.Future[None] = loop.create_future()
            inflight.setdefault(slot, done)
            try:
                comp = await inner(req)
                self.put(key, comp)
                return comp
            finally:
                if inflight.get(slot) is done:
                    del inflight[slot]
                done.set_result(None)

        return cached
