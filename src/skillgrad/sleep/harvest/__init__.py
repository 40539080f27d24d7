"""Harvest: read a coding agent's past sessions (read-only) and turn each into a redacted SessionDigest.

    result = harvest(project=Path.cwd(), claude_home=Path("~/.claude").expanduser(),
                     codex_home=Path("~/.codex").expanduser(), sources=["claude_code", "codex"],
                     since=since_for(state_file, lookback_hours=72), max_sessions=120)
    ... use result.digests ...
    record_harvest(state_file, cursor=result.cursor, session_ids=[d.session_id for d in result.digests])

A bad file never stops a harvest: it is listed in `result.errors`; filtered sessions are in `result.skipped`.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillgrad.core.redact import redact_text
from skillgrad.errors import UsageError
from skillgrad.sleep.harvest import (
    claude_code,
    codex,
    copilot_cli,
    cursor,
    gemini_cli,
    opencode,
    vscode_copilot,
)
from skillgrad.sleep.harvest.build import iso, parse_time
from skillgrad.sleep.harvest.digest import Feedback, SessionDigest, Turn
from skillgrad.sleep.harvest.filters import is_replay, skip_reason, under_project
from skillgrad.sleep.harvest.settings import REPLAY_MARKER, HarvestSettings
from skillgrad.sleep.harvest.state import (
    HarvestState,
    load_state,
    record_harvest,
    record_settled,
    settled_ids,
    since_for,
)

SOURCES = ("claude_code", "codex", "vscode_copilot", "copilot_cli", "opencode", "gemini_cli", "cursor")
_ALIASES = {"claude": "claude_code", "claude-code": "claude_code", "claude_code": "claude_code", "codex": "codex",
            "vscode": "vscode_copilot", "copilot-chat": "vscode_copilot", "vscode_copilot": "vscode_copilot",
            "copilot": "copilot_cli", "copilot-cli": "copilot_cli", "copilot_cli": "copilot_cli",
            "opencode": "opencode", "gemini": "gemini_cli", "gemini-cli": "gemini_cli", "gemini_cli": "gemini_cli",
            "cursor": "cursor"}
# Where each agent keeps its sessions by default (Linux; macOS / Windows users pass --home SOURCE=PATH).
DEFAULT_HOMES = {"claude_code": "~/.claude", "codex": "~/.codex", "vscode_copilot": "~/.config/Code/User",
                 "copilot_cli": "~/.copilot", "opencode": "~/.local/share/opencode", "gemini_cli": "~/.gemini",
                 "cursor": "~/.config/Cursor/User"}
_MARKS = {"claude_code": "projects", "codex": "", "vscode_copilot": "workspaceStorage", "copilot_cli": "session-state",
          "opencode": "storage", "gemini_cli": "tmp", "cursor": "globalStorage"}

__all__ = [
    "REPLAY_MARKER", "SOURCES", "Feedback", "HarvestError", "HarvestResult", "HarvestSettings", "HarvestState",
    "SessionDigest", "Skipped", "Turn", "harvest", "is_replay", "load_state", "normalize_sources",
    "record_harvest", "record_settled", "redact_text", "settled_ids", "since_for", "under_project",
]


@dataclass
class Skipped:
    path: str
    reason: str  # before_since | replay | no_prompt | too_short | other_project | duplicate | max_sessions | settled
    session_id: str = ""
    ended_at: str = ""  # for max_sessions: a session read but not mined holds the cursor back


@dataclass
class HarvestError:
    path: str
    error: str


@dataclass
class HarvestResult:
    digests: list[SessionDigest] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    errors: list[HarvestError] = field(default_factory=list)
    damaged: list[HarvestError] = field(default_factory=list)  # read, but with lines that could not be
    cursor: str = ""  # newest end of a session of this project; pass to record_harvest once the harvest was used

    def problems(self, limit: int = 5) -> list[str]:
        """One line per unreadable or damaged file (path and why), for the terminal and night.json."""
        lines = [f"{e.path}: {e.error}" for e in [*self.errors, *self.damaged]]
        more = len(lines) - limit
        return lines[:limit] + ([f"... and {more} more"] if more > 0 else [])

    def skipped_counts(self) -> dict[str, int]:
        return dict(Counter(s.reason for s in self.skipped))

    def to_json(self) -> dict[str, Any]:
        return {"digests": [d.to_json() for d in self.digests], "skipped": [asdict(s) for s in self.skipped],
                "errors": [asdict(e) for e in self.errors], "damaged": [asdict(e) for e in self.damaged],
                "cursor": self.cursor}


def all_homes(claude_home: Path, codex_home: Path, homes: dict[str, Path] | None = None) -> dict[str, Path]:
    """Each source's session home: the defaults, the two classic arguments, then `homes`."""
    out = {k: Path(v).expanduser() for k, v in DEFAULT_HOMES.items()}
    out.update(claude_code=claude_home, codex=codex_home)
    for name, path in (homes or {}).items():
        if name.strip().lower() not in _ALIASES:
            raise UsageError(f"--home {name}=...: unknown session source; use one of {', '.join(SOURCES)}")
        out[_ALIASES[name.strip().lower()]] = Path(path).expanduser()
    return out


def normalize_sources(sources: Iterable[str], *, claude_home: Path, codex_home: Path,
                      homes: dict[str, Path] | None = None) -> list[str]:
    """Canonical source names (comma-separated lists allowed); `auto` means every agent whose home exists.
    Unknown names are a usage error."""
    where = all_homes(claude_home, codex_home, homes)
    out: list[str] = []
    for s in (part for item in sources for part in item.split(",")):
        key = s.strip().lower()
        if key in ("auto", "all"):
            found = [n for n in SOURCES if (where[n] / _MARKS[n]).is_dir()]
            out += found if key == "auto" else list(SOURCES)
        elif key in _ALIASES:
            out.append(_ALIASES[key])
        else:
            raise UsageError(f"--source {s!r}: unknown session source; use one of {', '.join(SOURCES)}, auto")
    return list(dict.fromkeys(out))


def harvest(
    *,
    project: Path | None,
    claude_home: Path,
    codex_home: Path,
    sources: list[str],
    since: datetime | None,
    max_sessions: int,
    settings: HarvestSettings | None = None,
    homes: dict[str, Path] | None = None,
    exclude: Collection[str] = (),
) -> HarvestResult:
    """Digests of the sessions that ended after `since` (newest `max_sessions` kept), read-only.

    `project`: keep only sessions whose working directory is inside it (None: every project).
    `exclude`: ids of sessions already settled (used by a night or judged not minable), skipped as "settled".
    Never raises for a bad session file; raises UsageError only for bad arguments.
    """
    if max_sessions < 0:
        raise UsageError(f"max_sessions={max_sessions}: must be 0 or more")
    settings = settings or HarvestSettings()
    if since is not None:
        since = since.astimezone(UTC) if since.tzinfo else since.replace(tzinfo=UTC)
    result = HarvestResult()
    where = all_homes(claude_home, codex_home, homes)
    parsers: dict[str, tuple[Callable[[Path], list[Path]], Callable[[Path, HarvestSettings], SessionDigest]]] = {
        name: (mod.find_sessions, mod.parse_session) for name, mod in (
            ("claude_code", claude_code), ("codex", codex), ("vscode_copilot", vscode_copilot),
            ("copilot_cli", copilot_cli), ("opencode", opencode), ("gemini_cli", gemini_cli), ("cursor", cursor))}
    gemini_here = gemini_cli.project_hash(project.expanduser().resolve()) if project is not None else ""
    kept: dict[tuple[str, str], SessionDigest] = {}
    newest = None
    for source in normalize_sources(sources, claude_home=claude_home, codex_home=codex_home, homes=homes):
        (find, parse), home = parsers[source], where[source]
        try:
            paths = find(home)
        except OSError as e:
            result.errors.append(HarvestError(str(home), f"cannot list sessions: {e}"))
            continue
        for path in paths:
            mtime = _mtime(path)
            if since is not None and mtime is not None and mtime < since.timestamp():
                result.skipped.append(Skipped(str(path), "before_since"))
                continue
            try:
                d = parse(path, settings)
            except Exception as e:  # noqa: BLE001 - a foreign file must never stop the night
                result.errors.append(HarvestError(str(path), f"{type(e).__name__}: {e}"[:300]))
                continue
            if not d.project and d.project_hash and d.project_hash == gemini_here and project is not None:
                d.project = str(project.expanduser().resolve())  # Gemini CLI names its project by hash only
            end = parse_time(d.ended_at)
            if since is not None and end is not None and end <= since:
                result.skipped.append(Skipped(str(path), "before_since", d.session_id))
                continue
            # the cursor is this project's: another project's newer session must not hide this one's
            if end is not None and (newest is None or end > newest) and (
                    project is None or under_project(d.project, project)):
                newest = end
            reason = skip_reason(d, settings, project) or ("settled" if d.session_id in exclude else "")
            if d.skipped_records and reason != "other_project":
                result.damaged.append(HarvestError(str(path), f"{d.skipped_records} unreadable line(s) skipped"))
            if reason:
                result.skipped.append(Skipped(str(path), reason, d.session_id))
                continue
            key = (d.agent, d.session_id)
            other = kept.get(key)
            if other is not None:  # the same session in sessions/ and archived_sessions/, or a copied file
                loser, winner = (other, d) if len(d.turns) > len(other.turns) else (d, other)
                result.skipped.append(Skipped(loser.source_path, "duplicate", loser.session_id))
                kept[key] = winner
                continue
            kept[key] = d
    ranked = sorted(kept.values(), key=lambda x: x.ended_at or x.started_at, reverse=True)
    for d in ranked[max_sessions:]:
        result.skipped.append(Skipped(d.source_path, "max_sessions", d.session_id, d.ended_at or d.started_at))
    result.digests = sorted(ranked[:max_sessions], key=lambda x: (x.started_at, x.session_id))
    result.cursor = iso(newest)
    return result


def _mtime(path: Path) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None
