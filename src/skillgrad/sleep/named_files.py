"""The files a user named in a request, read at harvest time so the replayed task has the context they had.

A request names a file by an @-mention (`@src/db/schema.ts`), an IDE's "Files mentioned by the user" list, or
in plain words (`why does src/export.ts drop the header?`). Only files that exist inside the session's project
are read, at most `MAX_FILES` per task and a bounded number of characters, secret-redacted; binary files and
files whose names say they hold secrets (`.env`, keys) are never read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillgrad.core.redact import redact_text
from skillgrad.envs.tasks.records import TaskRecord
from skillgrad.sleep.harvest.digest import SessionDigest

MAX_FILES = 3
MAX_FILE_CHARS = 1500
MAX_TOTAL_CHARS = 3000
# A path-like word in a request: has a file extension (`src/export.ts`, `README.md`, `./run.sh`).
_PATH_WORD = re.compile(r"(?<![\w@/.\-])((?:\.{1,2}/|~/|/)?[\w.\-]+(?:/[\w.\-]+)*\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/])")
_SECRET_NAME = re.compile(r"(^\.env(\..*)?$|^id_[a-z0-9]+$|\.(pem|key|p12|pfx|keystore|jks)$|^\.netrc$|"
                          r"^\.npmrc$|^\.pypirc$|credentials|secret)", re.I)


def candidates(prompt: str, named: Sequence[str]) -> list[str]:
    """The explicit mentions first, then path-like words of the request, each once, in order."""
    return list(dict.fromkeys([*named, *(m.rstrip(".") for m in _PATH_WORD.findall(prompt))]))


def _inside(root: Path, raw: str) -> Path | None:
    p = Path(raw).expanduser()
    p = (p if p.is_absolute() else root / p).resolve()
    try:
        p.relative_to(root)
    except ValueError:
        return None
    return p if p.is_file() else None


def _read(path: Path, limit: int) -> tuple[str, bool] | None:
    try:
        with open(path, "rb") as f:
            data = f.read(limit * 4 + 4)
    except OSError:
        return None
    if b"\0" in data[:4096]:
        return None
    text = data.decode("utf-8", errors="ignore")
    cut = len(text) > limit or path.stat().st_size > len(data)
    return redact_text(text[:limit]), cut


def read_named_files(project: str, prompt: str, named: Sequence[str]) -> list[dict[str, Any]]:
    """[{path (relative to the project), text (redacted, bounded), truncated}] of the files a request names."""
    if not project:
        return []
    root = Path(project).expanduser().resolve()
    if not root.is_dir():
        return []
    out: list[dict[str, Any]] = []
    budget = MAX_TOTAL_CHARS
    seen: set[Path] = set()
    for raw in candidates(prompt, named):
        if len(out) >= MAX_FILES or budget <= 0:
            break
        path = _inside(root, raw)
        if path is None or path in seen or _SECRET_NAME.search(path.name):
            continue
        got = _read(path, min(MAX_FILE_CHARS, budget))
        if got is None:
            continue
        seen.add(path)
        text, cut = got
        budget -= len(text)
        out.append({"path": path.relative_to(root).as_posix(), "text": text, "truncated": cut})
    return out


def with_named_files(tasks: Sequence[TaskRecord], digests: Sequence[SessionDigest]) -> list[TaskRecord]:
    """Each task with `meta.context`: the files its request named, read now from the project (harvest time)."""
    by_session = {d.session_id: d for d in digests}
    out: list[TaskRecord] = []
    for t in tasks:
        d = by_session.get(str(t.meta.get("session", "")))
        turn = t.meta.get("turn")
        if d is None or not isinstance(turn, int) or not 0 <= turn < len(d.turns) or "context" in t.meta:
            out.append(t)
            continue
        files = read_named_files(d.project, d.turns[turn].prompt, d.turns[turn].named_files)
        out.append(t.model_copy(update={"meta": {**t.meta, "context": files}}) if files else t)
    return out
