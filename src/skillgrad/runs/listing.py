"""`skillgrad runs list|show`: facts about run directories, as plain data (the CLI renders them)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from skillgrad.errors import UsageError
from skillgrad.runs.report_data import RunData, is_run_dir, load_run


@dataclass
class RunInfo:
    name: str
    path: Path
    env: str
    status: str  # completed | stopped (budget) | running | incomplete | not started | run_end's status
    steps_done: int
    best_val_score: float | None
    test_delta: float | None  # best - initial, hard test score
    started: float | None  # unix seconds (run_start event, else first event, else config.json mtime)
    warnings: list[str] = field(default_factory=list)  # damaged files that were skipped while reading

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["path"] = str(self.path)
        return d


def run_info(run_dir: Path) -> RunInfo:
    return _info(load_run(Path(run_dir)))


def _info(data: RunData) -> RunInfo:
    return RunInfo(
        name=data.name,
        path=data.path,
        env=data.env_name,
        status=_status(data),
        steps_done=data.steps_done,
        best_val_score=data.best_val_score,
        test_delta=data.test_delta,
        started=data.started,
        warnings=list(data.warnings),
    )


def _status(data: RunData) -> str:
    """The run's status, and `running` for an unfinished run whose writer still holds its lock (the dashboard
    says the same)."""
    from skillgrad.runs.lock import holder

    if data.status == "incomplete" and holder(data.path) is not None:
        return "running"
    return data.status


def list_runs(root: Path) -> list[RunInfo]:
    """Runs directly under `root` (and `root` itself if it is one), newest first; [] if root is absent."""
    root = Path(root)
    if not root.is_dir():
        return []
    candidates = [root] if is_run_dir(root) else []
    candidates += sorted(p for p in root.iterdir() if not p.name.startswith(".") and is_run_dir(p))
    infos = [run_info(p) for p in candidates]
    infos.sort(key=lambda i: (i.started is None, -(i.started or 0.0), i.name))
    return infos


def show_run(run_dir: Path, last: int = 5) -> dict[str, Any]:
    """Summary, the last `last` history records and the paths of the run's main files."""
    run_dir = Path(run_dir)
    if not is_run_dir(run_dir):
        raise UsageError(f"{run_dir} is not a run directory (no config.json or events.jsonl); "
                         "pass a directory listed by `skillgrad runs list`")
    data = load_run(run_dir)
    files = {
        "config": "config.json",
        "summary": "summary.json",
        "history": "history.json",
        "runtime_state": "runtime_state.json",
        "events": "events.jsonl",
        "best_skill": "best_skill.md",
        "report_html": "report.html",
        "report_md": "report.md",
    }
    paths = {k: str(run_dir / v) for k, v in files.items() if (run_dir / v).exists()}
    if data.skills:
        paths["initial_skill"] = str(data.skills[min(data.skills)])
        paths["latest_skill"] = str(data.skills[max(data.skills)])
    return {
        "info": _info(data).to_dict(),
        "teacher": data.role_models("teacher"),
        "student": data.role_models("student"),
        "summary": data.summary,
        "runtime_state": data.runtime_state,
        "last_steps": data.history[-last:] if last > 0 else [],
        "paths": paths,
        "warnings": list(data.warnings),
    }


# summary.json keys a compact summary keeps (the rest: sample replies, per-stage usage, ... stay in the full one)
_COMPACT_SUMMARY = ("status", "stop_reason", "baseline_test_hard", "baseline_test_soft", "test_hard", "test_soft",
                    "final_test_hard", "final_test_soft", "best_step", "best_origin", "best_selection_gate_score",
                    "total_steps", "planned_steps", "total_accepts", "total_rejects", "total_skips", "elapsed_s")
_COMPACT_STEP = ("step", "epoch", "action", "rollout_hard", "candidate_gate_score", "current_score", "best_score")


def compact_run(run_dir: Path, last: int = 5) -> dict[str, Any]:
    """A run in a few hundred bytes (under 4 KB): facts, headline scores, the last steps' decisions and where
    the files are; `show_run` is the full version (it holds whole skills and per-item replies)."""
    full = show_run(run_dir, last=last)
    summary = full.get("summary") or {}
    return {
        "info": full["info"],
        "teacher": full.get("teacher"),
        "student": full.get("student"),
        "summary": {k: summary[k] for k in _COMPACT_SUMMARY if k in summary},
        "last_steps": [{k: s[k] for k in _COMPACT_STEP if k in s} for s in full.get("last_steps") or []],
        "paths": full.get("paths") or {},
        "warnings": (full.get("warnings") or [])[:5],
        "full": "call again with full=true for the whole summary, runtime state and step records",
    }
