"""Plain data for the dashboard's pages, built from the run files through `skillgrad.runs` readers.

Nothing here writes; a run may be live, finished, stopped or copied from elsewhere, so every value
is optional. Parsed runs are cached by the size and mtime of the files they come from, so a page for
a live run re-reads only when the run has moved on.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from skillgrad.core.events import read_jsonl as core_read_jsonl
from skillgrad.runs.report import action_counts, baseline_selection, step_records
from skillgrad.runs.report_data import RunData, as_float, as_int, is_run_dir, llm_usage, load_run

LIVE_WINDOW_S = 90.0  # an unfinished run whose events moved this recently counts as running
_WATCHED = ("events.jsonl", "summary.json", "history.json", "runtime_state.json", "config.json")


def file_signature(run_dir: Path) -> tuple[Any, ...]:
    """Sizes and mtimes of the files a run's pages come from (changes when the run moves on)."""
    sig: list[Any] = []
    for name in _WATCHED:
        try:
            st = (run_dir / name).stat()
            sig.append((st.st_size, st.st_mtime_ns))
        except OSError:
            sig.append(None)
    steps = run_dir / "steps"
    sig.append(steps.stat().st_mtime_ns if steps.is_dir() else None)
    return tuple(sig)


class RunCache:
    """load_run results keyed by path and file signature (small LRU; safe across request threads)."""

    def __init__(self, size: int = 64) -> None:
        self._items: OrderedDict[Path, tuple[tuple[Any, ...], RunData]] = OrderedDict()
        self._lock = threading.Lock()
        self.size = size

    def get(self, run_dir: Path) -> RunData:
        sig = file_signature(run_dir)
        with self._lock:
            hit = self._items.get(run_dir)
            if hit is not None and hit[0] == sig:
                self._items.move_to_end(run_dir)
                return hit[1]
        data = load_run(run_dir)
        with self._lock:
            self._items[run_dir] = (sig, data)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return data


def run_config(data: RunData) -> dict[str, Any]:
    """The run's config mapping (config.json holds {"config": ...}; SkillOpt-style copies hold it flat)."""
    inner = data.config.get("config")
    return inner if isinstance(inner, dict) else data.config


def find_runs(root: Path) -> list[Path]:
    """Run directories directly under root (and root itself if it is one)."""
    if not root.is_dir():
        return []
    found = [root] if is_run_dir(root) else []
    found += sorted(p for p in root.iterdir() if not p.name.startswith(".") and is_run_dir(p))
    return found


def is_live(data: RunData, alive: bool | None = None) -> bool:
    """alive: whether the process writing the run is known to be running (None: unknown, so judge by
    how recently an unfinished run's events moved)."""
    if alive is not None:
        return alive
    from skillgrad.runs.lock import holder

    if holder(data.path) is not None:  # a live process holds the run lock (a terminal, another dashboard, MCP)
        return True
    if data.status != "incomplete":
        return False
    try:
        age = time.time() - (data.path / "events.jsonl").stat().st_mtime
    except OSError:
        return False
    return age < LIVE_WINDOW_S


@dataclass
class Budget:
    calls: int = 0
    tokens: int = 0
    cost: float = 0.0
    minutes: float = 0.0
    limits: dict[str, float] = field(default_factory=dict)  # max_calls, max_tokens, max_usd, max_minutes
    source: str = "events"  # "budget": the budget's own checkpoint + spend log; "events": llm_call events
    unpriced_calls: int = 0

    def rows(self) -> list[dict[str, Any]]:
        used = {"max_calls": self.calls, "max_tokens": self.tokens, "max_usd": self.cost, "max_minutes": self.minutes}
        out = []
        for key, label in (("max_calls", "calls"), ("max_tokens", "tokens"), ("max_usd", "cost (USD)"),
                           ("max_minutes", "minutes")):
            limit = self.limits.get(key) or 0
            pct = 100.0 * used[key] / limit if limit else None
            out.append({"key": key, "label": label, "used": used[key], "limit": limit, "pct": pct})
        return out


def _budget_counts(data: RunData) -> Budget | None:
    """What the run's budget itself has counted: its checkpoint in runtime_state.json plus every call settled
    after it in spend.jsonl (the numbers `budget.max_*` are enforced against, failed calls included)."""
    from skillgrad.models.budget import Budget as Counter
    from skillgrad.models.spend_log import SpendLog

    snap = (data.runtime_state or {}).get("budget")
    spend = data.path / "spend.jsonl"
    if not isinstance(snap, dict) and not spend.is_file():
        return None
    try:
        counter = Counter(log=SpendLog(spend) if spend.is_file() else None)
        counter.restore(snap if isinstance(snap, dict) else {})
    except (OSError, ValueError, TypeError, KeyError):  # a damaged checkpoint or log: fall back to the events
        return None
    return Budget(calls=counter.calls, tokens=counter.tokens, cost=counter.usd, minutes=counter.minutes,
                  source="budget", unpriced_calls=counter.unpriced_calls)


def budget(data: RunData) -> Budget:
    """Use against the configured limits, as the budget counts it; for runs without its records, the
    provider calls of the events (cache hits are free and are not counted by the budget)."""
    b = _budget_counts(data)
    if b is None:
        b = Budget()
        for e in data.events_of("llm_call"):
            if e.get("cached"):
                continue
            b.calls += 1
            b.tokens += (as_int(e.get("prompt_tokens")) or 0) + (as_int(e.get("completion_tokens")) or 0)
            b.cost += as_float(e.get("cost")) or 0.0
        b.minutes = (data.wall_time_s or 0.0) / 60.0
    raw = run_config(data).get("budget")
    if isinstance(raw, dict):
        b.limits = {k: as_float(v) or 0.0 for k, v in raw.items() if k.startswith("max_")}
        for k in ("max_calls", "max_tokens"):  # counts: shown as whole numbers, like their use
            if k in b.limits:
                b.limits[k] = int(b.limits[k])
    return b


@dataclass
class RunRow:
    rel: str
    name: str
    status: str
    live: bool
    env: str
    teacher: str
    student: str
    baseline: float | None
    best: float | None
    accepts: int
    rejects: int
    skips: int
    steps: int
    calls: int  # sent to a provider (cache hits are free: a resumed run replays them)
    tokens: int
    cost: float | None  # None: some call's price is unknown
    wall_s: float | None
    started: float | None
    test_initial: float | None
    test_best: float | None
    errors: dict[str, int]  # split -> tasks that ended in an error (outside the means)


def run_row(rel: str, data: RunData, alive: bool | None = None) -> RunRow:
    records = step_records(data)
    accepts, rejects, skips = action_counts(data, records)
    _, total = llm_usage(data.events)
    live = is_live(data, alive)
    tests = data.test_scores()
    return RunRow(
        rel=rel, name=data.name, status="running" if live else data.status, live=live, env=data.env_name,
        teacher=data.role_models("teacher"), student=data.role_models("student"),
        baseline=baseline_selection(data), best=data.best_val_score, accepts=accepts, rejects=rejects, skips=skips,
        steps=data.steps_done, calls=total.calls - total.cached, tokens=total.prompt_tokens + total.completion_tokens,
        cost=total.cost if total.cost_known else None, wall_s=data.wall_time_s, started=data.started,
        test_initial=tests["initial"]["hard"], test_best=tests["best"]["hard"], errors=data.errors,
    )


SORT_KEYS = ("started", "name", "status", "env", "best", "baseline", "accepts", "rejects", "calls", "tokens",
             "cost", "wall_s", "steps")


def filter_sort(rows: list[RunRow], q: str = "", status: str = "", env: str = "", sort: str = "started",
                desc: bool = True) -> list[RunRow]:
    q = q.strip().lower()
    out = [r for r in rows
           if (not q or q in f"{r.name} {r.env} {r.teacher} {r.student} {r.status}".lower())
           and (not status or r.status.split(" ")[0] == status)
           and (not env or r.env == env)]
    key = sort if sort in SORT_KEYS else "started"

    def k(r: RunRow) -> tuple[int, Any]:
        v = getattr(r, key)
        return (0, v) if v is not None else (1, 0)

    present = sorted((r for r in out if getattr(r, key) is not None), key=k, reverse=desc)
    return present + [r for r in out if getattr(r, key) is None]


# -- live view --------------------------------------------------------------------------------------


def stage_list(data: RunData, live: bool = True) -> list[dict[str, Any]]:
    """stage_start / stage_end pairs in order: one entry per stage run, `running` until its end arrives;
    on a run that is not running any more, a stage that never ended is `interrupted`."""
    out: list[dict[str, Any]] = []
    open_: dict[tuple[Any, Any], dict[str, Any]] = {}
    for e in data.events:
        ev = e.get("event")
        if ev not in ("stage_start", "stage_end"):
            continue
        key = (e.get("stage"), e.get("step"))
        if ev == "stage_start":
            entry: dict[str, Any] = {"stage": e.get("stage"), "step": e.get("step"), "epoch": e.get("epoch"), "state": "running",
                     "seconds": None, "counts": {}, "calls": None}
            out.append(entry)
            open_[key] = entry
        else:
            found = open_.pop(key, None)
            entry = found or {"stage": e.get("stage"), "step": e.get("step"), "epoch": e.get("epoch")}
            if entry not in out:
                out.append(entry)
            entry.update(state="done", seconds=as_float(e.get("seconds")), counts=e.get("counts") or {},
                         calls=e.get("calls"))
    if not live:
        for entry in open_.values():
            entry["state"] = "interrupted"
    return out


def progress(data: RunData, live: bool = True) -> dict[str, Any] | None:
    """The latest task_done of the running stage: {stage, done, total}; None when the run is not running."""
    if not live:
        return None
    for e in reversed(data.events):
        if e.get("event") == "task_done":
            return {"stage": e.get("stage"), "done": e.get("done"), "total": e.get("total")}
        if e.get("event") == "stage_end":
            return None
    return None


def gates(data: RunData) -> list[dict[str, Any]]:
    return [e for e in data.events_of("gate")]


def read_jsonl(path: Path, limit: int = 5000) -> list[dict[str, Any]]:
    """The first `limit` objects of a JSONL file; damaged lines (a kill mid-write) are skipped quietly."""
    rows = (r for r in core_read_jsonl(path, on_skip=lambda _n: None) if isinstance(r, dict))
    return list(islice(rows, limit))


def flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    """{"a": {"b": 1}} -> {"a.b": 1} (lists stay values)."""
    if not isinstance(d, dict):
        return {prefix: d} if prefix else {}
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict) and v:
            out.update(flatten(v, key))
        else:
            out[key] = v
    return out
