"""Since-last-harvest bookkeeping, one small JSON file per project.

The file (e.g. `<project>/.skillgrad/sleep/state.json`) may hold other Sleep state too; harvest owns only its
`"harvest"` key and keeps the rest. The cursor advances only when the caller records a harvest (after the night
has used it), so a night killed midway re-reads the same sessions on the next run.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from skillgrad.core.atomic import read_json, write_json
from skillgrad.errors import UsageError
from skillgrad.sleep.harvest.build import iso, parse_time

STATE_KEY = "harvest"


@dataclass
class HarvestState:
    cursor: str = ""        # ISO time of the newest session end already harvested
    last_run_at: str = ""   # when a harvest was last recorded
    runs: int = 0
    sessions_total: int = 0
    recent_session_ids: list[str] = field(default_factory=list)  # the last harvest's sessions, for reports


def _read(path: Path) -> dict[str, Any]:
    try:
        data = read_json(path, default={})
    except (ValueError, OSError) as e:
        raise UsageError(f"{path}: not a readable JSON state file ({e}); fix or delete it") from e
    if not isinstance(data, dict):
        raise UsageError(f"{path}: state file must hold a JSON object; fix or delete it")
    return data


def load_state(path: Path) -> HarvestState:
    raw = _read(path).get(STATE_KEY)
    if not isinstance(raw, dict):
        return HarvestState()
    known = {k: v for k, v in raw.items() if k in HarvestState.__dataclass_fields__}
    try:
        return HarvestState(**known)
    except TypeError:
        return HarvestState()


def since_for(path: Path, *, lookback_hours: float, now: datetime | None = None) -> datetime:
    """Where the next harvest starts: the recorded cursor, or `now - lookback_hours` on the first harvest."""
    now = now or datetime.now(UTC)
    cursor = parse_time(load_state(path).cursor)
    return cursor if cursor is not None else now - timedelta(hours=lookback_hours)


def record_harvest(path: Path, *, cursor: str, session_ids: list[str], now: datetime | None = None) -> HarvestState:
    """Advance the cursor after a harvest was used (atomic write; other keys in the file are kept)."""
    data = _read(path)
    state = load_state(path)
    new, old = parse_time(cursor), parse_time(state.cursor)
    if new is not None and (old is None or new > old):
        state.cursor = iso(new)
    state.last_run_at = iso(now or datetime.now(UTC))
    state.runs += 1
    state.sessions_total += len(session_ids)
    state.recent_session_ids = list(session_ids)[-500:]
    data[STATE_KEY] = asdict(state)
    write_json(path, data)
    return state
