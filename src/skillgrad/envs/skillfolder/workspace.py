"""The skill-eval workspace: `<skill>-workspace/iteration-N/eval-<name>/{with_skill,without_skill}/` with
`outputs/`, `grading.json` and `timing.json`, and `iteration-N/benchmark.json`, in the field names of the Agent
Skills evaluation guide and skill-creator's schemas (`expectations[].text/passed/evidence`, `summary`,
`total_tokens`/`duration_ms`, `runs[].configuration/result`, `run_summary.<arm>.pass_rate.mean`, `delta`), so
other tools and their viewers read what skillgrad writes.

Reading is lenient because the tools that write workspaces differ: a benchmark's per-arm pass rate is taken from
`run_summary.<arm>.pass_rate.mean`, `run_summary.<arm>.mean_pass_rate` or `configurations|configs[].aggregate
.mean_pass_rate`; feedback.json is the guide's `{"eval-<name>": "note"}` or skill-creator's `{"reviews":
[{"run_id": "eval-<name>-with_skill", "feedback": ...}]}`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillgrad.core.atomic import write_json, write_text
from skillgrad.errors import DataError

ARMS = ("with_skill", "without_skill")


@dataclass
class RunRecord:
    """One eval run in one arm, as the workspace files record it."""

    eval_id: str
    eval_name: str  # the folder name without `eval-`
    prompt: str
    answer: str
    expectations: list[dict[str, Any]]
    split: str = ""
    seconds: float = 0.0
    tokens: int = 0
    error: str = ""
    cached: bool = False  # the reply came from the LLM cache: its time is the lookup's, not the model's

    @property
    def passed(self) -> int:
        return sum(1 for e in self.expectations if e.get("passed"))

    @property
    def pass_rate(self) -> float:
        return self.passed / len(self.expectations) if self.expectations else 0.0


def _stats(values: list[float]) -> dict[str, float]:
    if not values:
        return {"mean": 0.0, "stddev": 0.0, "min": 0.0, "max": 0.0}
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else 0.0
    return {"mean": round(mean, 4), "stddev": round(sd, 4), "min": round(min(values), 4), "max": round(max(values), 4)}


def _eval_id(v: str) -> int | str:
    return int(v) if v.isdigit() else v


def _grading(r: RunRecord) -> dict[str, Any]:
    n = len(r.expectations)
    return {"expectations": r.expectations,
            "summary": {"passed": r.passed, "failed": n - r.passed, "total": n, "pass_rate": round(r.pass_rate, 4)},
            "timing": {"executor_duration_seconds": r.seconds, "total_duration_seconds": r.seconds}}


def write_iteration(workspace: Path, n: int, *, skill_name: str, skill_path: str, runs: dict[str, list[RunRecord]],
                    label: str, model: str = "", notes: list[str] | None = None) -> Path:
    """Write `iteration-<n>` for `runs` ({arm: records}); returns its folder. `label` says which skill the
    with_skill arm ran (baseline, step k, final)."""
    it = workspace / f"iteration-{n}"
    bench_runs: list[dict[str, Any]] = []
    for arm, records in runs.items():
        for r in records:
            d = it / f"eval-{r.eval_name}"
            write_json(d / "eval_metadata.json", {"eval_id": _eval_id(r.eval_id), "eval_name": r.eval_name,
                                                  "prompt": r.prompt, "split": r.split,
                                                  "assertions": [e["text"] for e in r.expectations]})
            write_text(d / arm / "outputs" / "response.md", r.answer + ("\n" if r.answer else ""))
            write_json(d / arm / "grading.json", _grading(r))
            write_json(d / arm / "timing.json", {"total_tokens": r.tokens, "duration_ms": round(r.seconds * 1000),
                                                 "total_duration_seconds": r.seconds, "cached": r.cached})
            n_exp = len(r.expectations)
            bench_runs.append({"eval_id": _eval_id(r.eval_id), "eval_name": r.eval_name, "configuration": arm,
                               "run_number": 1,
                               "result": {"pass_rate": round(r.pass_rate, 4), "passed": r.passed,
                                          "failed": n_exp - r.passed, "total": n_exp,
                                          "time_seconds": r.seconds, "tokens": r.tokens, "tool_calls": 0,
                                          "errors": int(bool(r.error))},
                               "expectations": r.expectations, "notes": [r.error] if r.error else []})
    summary: dict[str, Any] = {}
    for arm, records in runs.items():
        summary[arm] = {"pass_rate": _stats([r.pass_rate for r in records]),
                        "time_seconds": _stats([r.seconds for r in records]),
                        "tokens": _stats([float(r.tokens) for r in records])}
    if all(a in summary for a in ARMS):
        summary["delta"] = {k: round(summary["with_skill"][k]["mean"] - summary["without_skill"][k]["mean"], 4)
                            for k in ("pass_rate", "time_seconds", "tokens")}
    by_split = {arm: {s: _stats([r.pass_rate for r in recs if r.split == s])["mean"]
                      for s in sorted({r.split for r in recs if r.split})} for arm, recs in runs.items()}
    n_cached = sum(r.cached for rs in runs.values() for r in rs)
    if n_cached:
        notes = [*(notes or []), f"{n_cached} of {sum(len(rs) for rs in runs.values())} runs were answered from the "
                                 "LLM cache (the same request made earlier in the run): their time_seconds is a "
                                 "lookup's, so compare time only between uncached runs"]
    bench = {"metadata": {"skill_name": skill_name, "skill_path": skill_path, "executor_model": model,
                          "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
                          "evals_run": sorted({_eval_id(r.eval_id) for rs in runs.values() for r in rs}, key=str),
                          "runs_per_configuration": 1, "iteration": n, "with_skill_is": label,
                          "pass_rate_by_split": by_split},
             "runs": bench_runs, "run_summary": summary, "notes": notes or []}
    write_json(it / "benchmark.json", bench)
    return it


def next_iteration(workspace: Path) -> int:
    nums = [int(m.group(1)) for p in workspace.glob("iteration-*") if (m := re.fullmatch(r"iteration-(\d+)", p.name))]
    return max(nums, default=0) + 1


# ------------------------------------------------------------------ reading what other tools wrote
@dataclass
class Benchmark:
    path: Path
    pass_rate: dict[str, float] = field(default_factory=dict)  # arm -> mean pass rate


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DataError(f"{path}: not valid JSON ({e}); fix or remove the file") from None


def read_benchmark(path: Path) -> Benchmark:
    """Mean pass rate per arm from a benchmark.json in any of the forms in use."""
    data = _load(path)
    out = Benchmark(path)
    if not isinstance(data, dict):
        raise DataError(f"{path}: a benchmark.json is an object with run_summary; this one is not")
    summary = data.get("run_summary")
    if isinstance(summary, dict):
        for arm, v in summary.items():
            if not isinstance(v, dict) or arm == "delta":
                continue
            rate = v.get("pass_rate")
            rate = rate.get("mean") if isinstance(rate, dict) else v.get("mean_pass_rate", rate)
            if isinstance(rate, int | float):
                out.pass_rate[arm] = float(rate)
    for cfg in data.get("configurations") or data.get("configs") or []:
        agg = cfg.get("aggregate") if isinstance(cfg, dict) else None
        if isinstance(agg, dict) and isinstance(agg.get("mean_pass_rate"), int | float):
            out.pass_rate.setdefault(str(cfg.get("name")), float(agg["mean_pass_rate"]))
    if not out.pass_rate:
        raise DataError(f"{path}: no pass rate per configuration found (run_summary.<arm>.pass_rate.mean); "
                        "is it a benchmark.json?")
    return out


_ARM_SUFFIX = re.compile(r"-(?:with_skill|without_skill|old_skill|new_skill)$")


def read_feedback(path: Path) -> dict[str, str]:
    """{eval folder name: the reviewer's note} for the notes that are not empty."""
    if not path.is_file():
        raise DataError(f"env.feedback_file: {path} not found")
    data = _load(path)
    notes: dict[str, str] = {}
    if isinstance(data, dict) and isinstance(data.get("reviews"), list):
        for r in data["reviews"]:
            if isinstance(r, dict) and str(r.get("feedback") or "").strip():
                key = _ARM_SUFFIX.sub("", str(r.get("run_id", "")))
                notes[key] = (notes[key] + " " if key in notes else "") + str(r["feedback"]).strip()
    elif isinstance(data, dict):
        notes = {str(k): str(v).strip() for k, v in data.items() if isinstance(v, str) and v.strip()}
    else:
        raise DataError(f"{path}: feedback.json is an object ({{\"eval-<name>\": \"note\"}} or {{\"reviews\": [...]}})")
    return notes


@dataclass
class Workspace:
    root: Path
    iteration: int
    benchmark: Benchmark | None
    feedback_path: Path | None


def read_workspace(root: Path) -> Workspace | None:
    """The latest iteration of a workspace: its benchmark (a baseline) and the feedback.json nearest to it."""
    n = next_iteration(root) - 1
    if n < 1:
        return None
    it = root / f"iteration-{n}"
    bench = read_benchmark(it / "benchmark.json") if (it / "benchmark.json").is_file() else None
    fb = next((p for p in (it / "feedback.json", root / "feedback.json") if p.is_file()), None)
    return Workspace(root, n, bench, fb)
