"""The run directory: paths, atomic JSON/markdown writes, per-item rollout results, skill versions.

Stages return values; only the trainer hands them to the store. Item ids from data never become
raw path parts (`safe_name`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from skillgrad.core.atomic import read_json, write_json, write_text, writing
from skillgrad.core.events import append_line, read_jsonl
from skillgrad.envs.base import Trajectory
from skillgrad.errors import DamagedFile, DamageWarning

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(item_id: str) -> str:
    """A path-safe, collision-free name for an item id (slug + short hash)."""
    slug = _SAFE.sub("_", str(item_id)).strip("._")[:48] or "item"
    return f"{slug}-{hashlib.sha256(str(item_id).encode()).hexdigest()[:8]}"


_WRITER: list[ThreadPoolExecutor] = []  # one thread writes every results log of the process (made on first use)


def _writer() -> ThreadPoolExecutor:
    """The results writer; its thread is joined at interpreter exit, so a normal exit writes what was queued."""
    if not _WRITER:
        _WRITER.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="results-writer"))
    return _WRITER[0]


class ResultsLog:
    """results.jsonl of one rollout: one trajectory per line, appended as each task finishes (resume reuses it).

    The durable writes (conversation.json, then the line, each fsynced) run on a writer thread, not on the
    event loop that calls `append`: two fsyncs per result there held the next task's start (1.5-1.9x the
    critical path at high concurrency, benchmarks/step_latency.py). Results that finish while the writer is
    busy are written as one batch: each conversation first, then their lines in one append and one fsync, so
    a kill still never leaves a reused line without its conversation. `flush` waits for the writer (the run
    calls it before a rollout's results count as saved); a kill before that loses at most the unwritten
    results, whose tasks run again on resume (their model replies come from the cache).
    """

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.path = directory / "results.jsonl"
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._queue: list[tuple[Path, str, str]] = []  # (prediction folder, conversation.json text, line)
        self._running = False
        self._error: BaseException | None = None
        self._checked = False

    def load(self) -> dict[str, Trajectory]:
        """Finished tasks by item id; damaged lines are skipped with one warning (those tasks run again)."""
        self.flush()  # this log's own results still on their way to disk count too
        out: dict[str, Trajectory] = {}
        skipped = [0]

        def count(n: int) -> None:
            skipped[0] += n

        for rec in read_jsonl(self.path, on_skip=count):
            try:
                t = Trajectory.from_json(rec)
            except (TypeError, KeyError, AttributeError, ValueError):
                skipped[0] += 1
                continue
            out[t.item_id] = t
        if skipped[0]:
            warnings.warn(f"{self.path}: skipped {skipped[0]} damaged line{'s' if skipped[0] > 1 else ''}; "
                          "those tasks run again", DamageWarning, stacklevel=2)
        return out

    def append(self, t: Trajectory) -> None:
        """Queue one result for the writer thread (serialised here, so later changes to `t` do not leak in)."""
        pred = self.dir / "predictions" / safe_name(t.item_id)
        line = json.dumps(t.to_json(), ensure_ascii=False, default=str) + "\n"
        conversation = json.dumps(t.messages, indent=2, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            self._queue.append((pred, conversation, line))
            if not self._running:
                self._running = True
                _writer().submit(self._drain)

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._queue or self._error is not None:  # done, or stopped by an error flush() reports
                    self._running = False
                    self._idle.notify_all()
                    return
                batch, self._queue = self._queue, []
            try:
                self.dir.mkdir(parents=True, exist_ok=True)
                # The conversations first: a kill between the writes must not leave a reused result without its
                # conversation.json (found by the chaos test); an orphan conversation is rewritten when the task
                # reruns.
                for pred, conversation, _ in batch:
                    write_text(pred / "conversation.json", conversation)
                append_line(self.path, "".join(line for _, _, line in batch), repair_cut=not self._checked,
                            fsync=True)
                self._checked = True
            except BaseException as e:  # noqa: BLE001 - raised on the caller's thread by flush()
                with self._lock:  # kept for the next try; a line cut by the failed append is ended first then
                    self._queue, self._error, self._checked = batch + self._queue, e, False

    @contextmanager
    def saving(self) -> Iterator[ResultsLog]:
        """Around a rollout: its results are on disk when the block ends, also when it ends by an error (a
        write error then stays behind the rollout's own)."""
        try:
            yield self
        except BaseException:
            with suppress(Exception):
                self.flush()
            raise
        self.flush()

    def flush(self) -> None:
        """Wait until every appended result is on disk; a write error (disk full, ...) is raised here."""
        with self._idle:
            while self._running:
                self._idle.wait()
            error, self._error = self._error, None
        if error is not None:
            raise error


class RunStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)  # created by the first write, so reading a wrong path creates nothing

    def write_json(self, rel: str | Path, data: Any) -> None:
        write_json(self.root / rel, data)

    def read_json(self, rel: str | Path, default: Any = None) -> Any:
        return read_json(self.root / rel, default)

    def write_text(self, rel: str | Path, text: str) -> None:
        write_text(self.root / rel, text)

    def exists(self, rel: str | Path) -> bool:
        return (self.root / rel).exists()

    def results(self, rel: str | Path) -> ResultsLog:
        return ResultsLog(self.root / rel)

    def load_history(self) -> list[dict[str, Any]]:
        """history.json; when it is damaged, rebuilt from the step folders' step_record.json (it is their
        list), with a warning: a damaged history never stops a run or loses a step."""
        try:
            hist = self.read_json("history.json", [])
            if isinstance(hist, list):
                return hist
            why = f"a JSON {type(hist).__name__}, not a list"
        except DamagedFile as e:
            why = e.why
        records = []
        for rec_path in sorted((self.root / "steps").glob("step_*/step_record.json")):
            try:
                rec = read_json(rec_path)
            except DamagedFile:
                continue
            if isinstance(rec, dict):
                records.append(rec)
        path = self.root / "history.json"
        aside = path.with_name("history.json.damaged")
        with writing(path):
            os.replace(path, aside)  # kept for a look; the rebuilt list takes its place
        write_json(path, records)
        warnings.warn(f"{path} is damaged ({why}); rebuilt it from the {len(records)} step record(s) in steps/ "
                      f"(the damaged file is kept as {aside.name})", DamageWarning, stacklevel=2)
        return records

    def save_skill_version(self, step: int, text: str) -> None:
        self.write_text(f"skills/skill_v{step:04d}.md", text)
