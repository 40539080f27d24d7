"""Intervals for reports: the bootstrap interval of a mean, and paired comparisons keyed by item id."""

from __future__ import annotations

from typing import Any

from skillgrad.engine.stats import paired_summary


def mean_interval(values: list[float], *, confidence: float = 0.95, seed: int = 0) -> dict[str, Any]:
    """Mean with its bootstrap percentile interval over items."""
    s = paired_summary([0.0] * len(values), values, confidence=confidence, seed=seed)
    return {"n": s.n, "mean": s.mean_b, "ci_low": s.ci_low, "ci_high": s.ci_high, "confidence": confidence}


def paired_by_id(a: dict[str, float], b: dict[str, float], *, confidence: float = 0.95,
                 seed: int = 0) -> dict[str, Any]:
    """b versus a on the items both scored (sorted ids): mean difference, interval, p-values, flips."""
    ids = sorted(set(a) & set(b))
    s = paired_summary([a[i] for i in ids], [b[i] for i in ids], confidence=confidence, seed=seed)
    out = s.to_json()
    out["gained_items"] = [i for i in ids if a[i] < 0.5 <= b[i]]
    out["lost_items"] = [i for i in ids if b[i] < 0.5 <= a[i]]
    out["only_a"], out["only_b"] = len(set(a) - set(b)), len(set(b) - set(a))
    return out


def final_test_intervals(per_item: dict[str, dict[str, float]]) -> dict[str, Any]:
    """Run-end test results: each skill's mean with an interval, and best/final against initial (paired)."""
    out: dict[str, Any] = {name: mean_interval(list(v.values())) for name, v in per_item.items()}
    base = per_item.get("initial")
    if base is not None:
        for name in ("best", "final"):
            if name in per_item:
                out[f"{name}_vs_initial"] = paired_by_id(base, per_item[name])
    return out
