"""`skillgrad compare A B`: paired per-item results of two runs (or `skillgrad eval` directories).

Items are matched by id; each side's per-item score is its hard score, averaged over seeds for an eval
directory made with `--seeds N`. The answer: mean difference (B - A) with a bootstrap interval, the one-sided
bootstrap and two-sided exact McNemar p-values, and the items that flipped each way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillgrad.engine.gate.intervals import paired_by_id
from skillgrad.errors import UsageError
from skillgrad.runs.store import ResultsLog

# a training run's run-end test results per skill. The trainer scores each distinct skill once, in the order
# initial, best, final: a skill equal to an earlier one has its results in that one's folder.
RUN_DIRS = {"initial": ["test_eval_baseline"], "best": ["test_eval", "test_eval_baseline"],
            "final": ["test_eval_final", "test_eval", "test_eval_baseline"]}


def item_scores(path: Path, *, skill: str = "best", split: str = "test") -> dict[str, float]:
    """Per-item hard scores of a run directory (test results of `skill`) or an eval directory (`split`)."""
    if not path.is_dir():
        raise UsageError(f"{path}: not a directory; give a run directory or a `skillgrad eval --out` directory")
    if (path / "eval_summary.json").exists() or (path / "eval_key.json").exists():
        folders = [path / split, *sorted((path / split).glob("seed_*"))]
        what = f"split {split!r} of eval directory"
    else:
        folders = [next((path / d for d in RUN_DIRS[skill] if (path / d / "results.jsonl").exists()),
                        path / RUN_DIRS[skill][0])]
        what = f"run-end test results of the {skill} skill in"
    sums: dict[str, list[float]] = {}
    for folder in folders:
        for item, t in ResultsLog(folder).load().items():
            if not t.env_error:  # an environment crash is not the skill's score
                sums.setdefault(item, []).append(t.hard)
    if not sums:
        raise UsageError(f"{path}: no {what} it (results.jsonl missing or empty); finish the run or "
                         "choose --skill/--split")
    return {k: sum(v) / len(v) for k, v in sums.items()}


def compare_runs(a: Path, b: Path, *, skill: str = "best", split: str = "test", confidence: float = 0.95,
                 seed: int = 0) -> dict[str, Any]:
    sa, sb = item_scores(a, skill=skill, split=split), item_scores(b, skill=skill, split=split)
    if not set(sa) & set(sb):
        raise UsageError(f"{a} and {b} share no item ids: they were scored on different data")
    out = paired_by_id(sa, sb, confidence=confidence, seed=seed)
    out.update(a=str(a), b=str(b), skill=skill, split=split)
    return out
