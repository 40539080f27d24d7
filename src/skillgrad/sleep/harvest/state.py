"""Since-last-harvest bookkeeping, one small JSON file per project.

The file (e.g. `<project>/.skillgrad/sleep/state.json`) may hold other Sleep state too; harvest owns only its
`"harvest"` key and keeps the rest. The cursor advances only when the caller records a harvest (after the night
has used it), so a night killed midway re-reads the same sessions on the next run.

Cursor rules (a night never uses up sessions it did not mine): a night records, per session it read, whether its
tasks were used ("used") or a miner found none in it ("llm" or "heuristic"). `cursor` moves only past sessions that
are used or that an LLM miner judged not minable; `heuristic_cursor` also past those the heuristic miner judged
not minable, so a rerun with an agent as teacher still sees them. Sessions capped out of a harvest
(max_sessions) stop both. A harvest starts at the miner's cursor or `lookback_hours` back, whichever is older, and
skips by id the sessions already settled after it.
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
    heuristic_cursor: str = ""  # like `cursor`, also past sessions the heuristic miner judged not minable
    settled: dict[str, list[str]] = field(default_factory=dict)  # session id -> [used|llm|heuristic, its end]


MAX_SETTLED = 5000


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


def since_for(path: Path, *, lookback_hours: float, now: datetime | None = None, miner: str = "llm") -> datetime:
    """Where the next harvest starts: `lookback_hours` back, or the miner's cursor when that is older (a cursor
    never hides a session it did not settle; `--lookback-hours` always reaches back that far)."""
    now = now or datetime.now(UTC)
    state = load_state(path)
    back = now - timedelta(hours=lookback_hours)
    cursor = parse_time(state.cursor if miner == "llm" else (state.heuristic_cursor or state.cursor))
    return back if cursor is None else min(cursor, back)


def settled_ids(path: Path, *, miner: str) -> set[str]:
    """Sessions a harvest skips: used by a night, or judged not minable by this miner or an LLM one."""
    keep = ("used", "llm") if miner == "llm" else ("used", "llm", "heuristic")
    return {sid for sid, (how, _end) in load_state(path).settled.items() if how in keep}


def record_settled(path: Path, *, outcomes: dict[str, tuple[str, str]], waiting: list[str], newest: str,
                   miner: str, now: datetime | None = None) -> HarvestState:
    """Record what a night did with each session it read (`outcomes`: id -> (used|llm|heuristic, its end)) and
    move the cursors past every session settled for them; `waiting`: the ends of sessions read but not mined
    (capped out), which hold both cursors back; `newest`: the harvest's newest session end."""
    data = _read(path)
    state = load_state(path)
    eps = timedelta(milliseconds=1)

    def advance(old: str, blocking: list[str]) -> str:
        ends = [t for t in (parse_time(b) for b in blocking) if t is not None]
        new = min(ends) - eps if ends else parse_time(newest)
        before = parse_time(old)
        return iso(new) if new is not None and (before is None or new > before) else old

    heuristic = [end for how, end in outcomes.values() if how == "heuristic"]
    state.cursor = advance(state.cursor, [*heuristic, *waiting])
    state.heuristic_cursor = advance(state.heuristic_cursor or state.cursor, waiting)
    for sid, (how, end) in outcomes.items():
        if state.settled.get(sid, ["", ""])[0] != "used":
            state.settled[sid] = [how, end]
    state.settled = dict(sorted(state.settled.items(), key=lambda kv: kv[1][1])[-MAX_SETTLED:])
    state.last_run_at = iso(now or datetime.now(UTC))
    state.runs += 1
    state.sessions_total += sum(how == "used" for how, _ in outcomes.values())
    state.recent_session_ids = list(outcomes)[-500:]
    data[STATE_KEY] = asdict(state)
    write_json(path, data)
    return state


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
