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
from pathlib import Path
from typing import Any

from skillgrad.envs.base import Trajectory
from skillgrad.runs.atomic import read_json, write_json, write_text

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(item_id: str) -> str:
    """A path-safe, collision-free name for an item id (slug + short hash)."""
    slug = _SAFE.sub("_", str(item_id)).strip("._")[:48] or "item"
    return f"{slug}-{hashlib.sha256(str(item_id).encode()).hexdigest()[:8]}"


class ResultsLog:
    """results.jsonl of one rollout: one trajectory per line, appended as each task finishes (resume reuses it)."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.path = directory / "results.jsonl"
        self._lock = threading.Lock()

    def load(self) -> dict[str, Trajectory]:
        out: dict[str, Trajectory] = {}
        if not self.path.exists():
            return out
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                t = Trajectory.from_json(json.loads(line))
            except (json.JSONDecodeError, TypeError):
                continue  # a line cut by a kill
            out[t.item_id] = t
        return out

    def append(self, t: Trajectory) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        # The conversation first: a kill between the two writes must not leave a reused result without its
        # conversation.json (found by the chaos test); an orphan conversation is rewritten when the task reruns.
        pred = self.dir / "predictions" / safe_name(t.item_id)
        write_json(pred / "conversation.json", t.messages)
        line = json.dumps(t.to_json(), ensure_ascii=False, default=str) + "\n"
        with self._lock:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(line)
                f.flush()
                os.fsync(f.fileno())


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

    def save_skill_version(self, step: int, text: str) -> None:
        self.write_text(f"skills/skill_v{step:04d}.md", text)
