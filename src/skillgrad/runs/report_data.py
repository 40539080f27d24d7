"""Tolerant reading of a run directory for reports and `runs list|show`.

A run may have been stopped at any point, so every file and every field is optional: a missing or
unreadable file becomes an empty value plus a warning, never an exception.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillgrad.core.records import RunFiles, as_float, as_int

_STEP_DIR = re.compile(r"^step_(\d+)$")
_EPOCH_DIR = re.compile(r"^epoch_(\d+)$")
_SKILL_FILE = re.compile(r"^skill_v(\d+)\.md$")

ACCEPT_ACTIONS = ("accept_new_best", "accept", "force_accept")


def is_run_dir(path: Path) -> bool:
    return path.is_dir() and ((path / "config.json").is_file() or (path / "events.jsonl").is_file())


def epoch_boundaries(records: list[dict[str, Any]]) -> list[float]:
    """Step positions (between two steps) where the epoch changes, for the separators of per-step plots."""
    out: list[float] = []
    prev = None
    for r in records:
        epoch, step = as_int(r.get("epoch")), as_int(r.get("step"))
        if epoch is None or step is None:
            continue
        if prev is not None and epoch != prev:
            out.append(step - 0.5)
        prev = epoch
    return out


@dataclass
class RunData:
    path: Path
    config: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] | None = None
    runtime_state: dict[str, Any] | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    skills: dict[int, Path] = field(default_factory=dict)  # version -> skills/skill_vNNNN.md
    steps: dict[int, Path] = field(default_factory=dict)  # step -> steps/step_NNNN/
    slow_updates: dict[int, Path] = field(default_factory=dict)  # epoch -> slow_update/epoch_EE/
    warnings: list[str] = field(default_factory=list)

    # -- small lookups -------------------------------------------------------------------------

    def read_json(self, rel: str | Path, expect: type | tuple[type, ...] = (dict, list)) -> Any:
        """Parsed JSON of a file under the run, or None (with a warning when it exists but is bad)."""
        data = RunFiles(self.path, warn=self.warnings.append).json(str(rel))
        if data is not None and not isinstance(data, expect):
            self.warnings.append(f"{rel}: unexpected JSON type {type(data).__name__}; ignored")
            return None
        return data

    def read_text(self, path: Path | None) -> str | None:
        if path is None or not path.is_file():
            return None
        try:
            return path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def events_of(self, name: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("event") == name]

    def summary_get(self, key: str) -> Any:
        return (self.summary or {}).get(key)

    # -- derived facts ---------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def env_name(self) -> str:
        env = self.config.get("env")
        if isinstance(env, dict) and env.get("name"):
            return str(env["name"])
        if isinstance(env, str) and env:  # SkillOpt's flat cfg
            return env
        for e in self.events_of("run_start"):
            if e.get("env"):
                return str(e["env"])
        return str(self.summary_get("env") or "?")

    def role_models(self, role: str) -> str:
        """'provider/model' strings a role used: from llm_call events, else from the config."""
        seen: list[str] = []
        for e in self.events_of("llm_call"):
            if e.get("role") != role:
                continue
            label = "/".join(str(x) for x in (e.get("provider"), e.get("model")) if x)
            if label and label not in seen:
                seen.append(label)
        if seen:
            return ", ".join(seen)
        for e in self.events_of("run_start"):
            if e.get(role):
                return str(e[role])
        if self.summary_get(role):
            return str(self.summary_get(role))
        model = self.config.get("model")
        if not isinstance(model, dict):
            return "?"
        raw = model.get(role)
        block: dict[str, Any] = raw if isinstance(raw, dict) else {}
        legacy = "optimizer" if role == "teacher" else "target"
        name = block.get("model") or model.get(legacy) or ""
        provider = block.get("provider") or model.get(f"{legacy}_backend") or model.get("backend") or ""
        label = "/".join(str(x) for x in (provider, name) if x)
        return label or "?"

    @property
    def errors(self) -> dict[str, int]:
        """Tasks per split that ended in an error (timeout, crash, provider failure): outside every mean.
        From summary.json; before the run's end, the task events so far under "so far"."""
        saved = self.summary_get("errors")
        if isinstance(saved, dict):
            return {str(k): int(v) for k, v in saved.items() if as_int(v)}
        n = sum(1 for e in self.events_of("task_done") if e.get("env_error"))
        return {"so far": n} if n else {}

    @property
    def status(self) -> str:
        ends = self.events_of("run_end")
        if ends and ends[-1].get("stopped") == "interrupted":  # newer than any summary (a resumed run's Ctrl-C)
            return "stopped (interrupted)"
        s = self.summary_get("status")
        if s:
            stopped = self.summary_get("stopped")
            return f"{s} ({stopped})" if stopped and s == "stopped" else str(s)
        if ends and ends[-1].get("status"):
            s, stopped = str(ends[-1]["status"]), ends[-1].get("stopped")
            return f"{s} ({stopped})" if stopped and s == "stopped" else s
        if self.events or self.history:
            return "incomplete"
        return "not started"

    @property
    def started(self) -> float | None:
        for e in self.events:
            if e.get("event") == "run_start" and as_float(e.get("ts")) is not None:
                return as_float(e.get("ts"))
        stamps = [t for t in (as_float(e.get("ts")) for e in self.events) if t is not None]
        if stamps:
            return min(stamps)
        cfg = self.path / "config.json"
        return cfg.stat().st_mtime if cfg.exists() else None

    @property
    def wall_time_s(self) -> float | None:
        w = as_float(self.summary_get("total_wall_time_s"))
        if w is not None:
            return w
        stamps = [t for t in (as_float(e.get("ts")) for e in self.events) if t is not None]
        if len(stamps) >= 2:
            return max(stamps) - min(stamps)
        if self.history:
            return as_float(self.history[-1].get("wall_time_s"))
        return None

    @property
    def steps_done(self) -> int:
        steps = [s for s in (as_int(r.get("step")) for r in self.history) if s is not None]
        if steps:
            return max(steps)
        last = as_int((self.runtime_state or {}).get("last_completed_step"))
        if last is not None:
            return last
        total = as_int(self.summary_get("total_steps"))
        return total if total is not None else len(self.events_of("gate"))

    @property
    def best_val_score(self) -> float | None:
        for key in ("best_selection_gate_score", "best_selection_hard"):
            v = as_float(self.summary_get(key))
            if v is not None:
                return v
        state = self.runtime_state or {}
        v = as_float(state.get("best_score"))
        if v is not None and v >= 0 and state.get("baseline_done", True):  # -1 = nothing scored yet
            return v
        scores = [s for s in (as_float(r.get("best_score")) for r in self.history) if s is not None and s >= 0]
        return max(scores) if scores else None

    def test_scores(self) -> dict[str, dict[str, float | None]]:
        """{initial|best|final: {hard, soft}} from summary.json, filled in from `eval` events."""
        keys = {"initial": "baseline_test", "best": "test", "final": "final_test"}
        out: dict[str, dict[str, float | None]] = {}
        for label, prefix in keys.items():
            out[label] = {m: as_float(self.summary_get(f"{prefix}_{m}")) for m in ("hard", "soft")}
        for e in self.events_of("eval"):
            if e.get("split") != "test" or e.get("skill") not in out:
                continue
            slot = out[str(e["skill"])]
            for m in ("hard", "soft"):
                if slot[m] is None:
                    slot[m] = as_float(e.get(m))
        return out

    @property
    def test_delta(self) -> float | None:
        d = as_float(self.summary_get("test_delta_hard"))
        if d is not None:
            return d
        t = self.test_scores()
        a, b = t["initial"]["hard"], t["best"]["hard"]
        return None if a is None or b is None else b - a

    def initial_skill(self) -> Path | None:
        if self.skills:
            return self.skills[min(self.skills)]
        return None

    def best_skill(self) -> Path | None:
        p = self.path / "best_skill.md"
        if p.is_file():
            return p
        best = as_int(self.summary_get("best_step"))
        if best is None:
            best = as_int((self.runtime_state or {}).get("best_step"))
        return self.skills.get(best) if best is not None else None


def _numbered(parent: Path, pattern: re.Pattern[str], want_dir: bool) -> dict[int, Path]:
    out: dict[int, Path] = {}
    if not parent.is_dir():
        return out
    for p in parent.iterdir():
        m = pattern.match(p.name)
        if m and (p.is_dir() if want_dir else p.is_file()):
            out[int(m.group(1))] = p
    return dict(sorted(out.items()))


def load_run(run_dir: Path) -> RunData:
    run_dir = Path(run_dir)
    data = RunData(path=run_dir)
    data.config = data.read_json("config.json", dict) or {}
    files = RunFiles(run_dir, warn=data.warnings.append)  # the typed records (core/records.py), as plain JSON
    summary, state = files.summary(), files.runtime_state()
    data.summary = summary.as_dict() if summary else None
    data.runtime_state = state.as_dict() if state else None
    data.history = [r.as_dict() for r in files.history()]
    data.events = [e.as_dict() for e in files.events()]
    data.skills = _numbered(run_dir / "skills", _SKILL_FILE, want_dir=False)
    data.steps = _numbered(run_dir / "steps", _STEP_DIR, want_dir=True)
    data.slow_updates = _numbered(run_dir / "slow_update", _EPOCH_DIR, want_dir=True)
    return data


@dataclass
class UsageRow:
    stage: str
    role: str
    calls: int = 0
    cached: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cost: float = 0.0
    unknown_cost_calls: int = 0  # calls whose price is unknown (cost null): the total is then unknown

    def add(self, e: dict[str, Any]) -> None:
        self.calls += 1
        cached = bool(e.get("cached"))
        self.cached += cached
        self.failed += e.get("ok") is False
        self.prompt_tokens += as_int(e.get("prompt_tokens")) or 0
        self.completion_tokens += as_int(e.get("completion_tokens")) or 0
        self.seconds += as_float(e.get("seconds")) or 0.0
        cost = as_float(e.get("cost"))
        if cost is not None:
            self.cost += cost
        elif not cached:  # a cache hit paid nothing, whatever the price table says
            self.unknown_cost_calls += 1

    @property
    def cost_known(self) -> bool:
        return self.unknown_cost_calls == 0


def llm_usage(events: list[dict[str, Any]]) -> tuple[list[UsageRow], UsageRow]:
    """`llm_call` events summed per (stage, role), and the grand total."""
    rows: dict[tuple[str, str], UsageRow] = {}
    total = UsageRow(stage="total", role="")
    for e in events:
        if e.get("event") != "llm_call":
            continue
        key = (str(e.get("stage") or "?"), str(e.get("role") or "?"))
        rows.setdefault(key, UsageRow(*key)).add(e)
        total.add(e)
    return [rows[k] for k in sorted(rows)], total


def stage_seconds(data: RunData) -> dict[str, float]:
    """Wall seconds per stage: `stage_end` events, else the history's `timing` blocks."""
    out: dict[str, float] = {}
    for e in data.events_of("stage_end"):
        s = as_float(e.get("seconds"))
        if s is not None:
            out[str(e.get("stage") or "?")] = out.get(str(e.get("stage") or "?"), 0.0) + s
    if out:
        return out
    for r in data.history:
        timing = r.get("timing")
        if not isinstance(timing, dict):
            continue
        for k, v in timing.items():
            s = as_float(v)
            if s is not None:
                stage = k[:-2] if k.endswith("_s") else k
                out[stage] = out.get(stage, 0.0) + s
    return out
