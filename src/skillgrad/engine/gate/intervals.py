"""Intervals for reports: the bootstrap interval of a mean, and paired comparisons keyed by item id."""

from __future__ import annotations

from typing import Any

from skillgrad.engine.gate.stats import paired_summary
from skillgrad.envs.base import Trajectory


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
    """Run-end test results: each skill's mean with an interval, and best/final against each baseline (initial,
    few-shot; paired)."""
    out: dict[str, Any] = {name: mean_interval(list(v.values())) for name, v in per_item.items()}
    for baseline in ("initial", "fewshot"):
        base = per_item.get(baseline)
        if base is not None:
            for name in ("best", "final"):
                if name in per_item:
                    out[f"{name}_vs_{baseline}"] = paired_by_id(base, per_item[name])
    return out


def seed_summary(runs: list[list[Trajectory]], temperature: float) -> dict[str, Any]:
    """`eval --seeds`: the same items under several student samples, paired by item."""
    runs = [[t for t in trajs if not t.env_error] for trajs in runs]  # an error is no score (exec/pool.py)
    per_item: dict[str, list[float]] = {}
    for trajs in runs:
        for t in trajs:
            per_item.setdefault(t.item_id, []).append(t.hard)
    means = {k: sum(v) / len(v) for k, v in per_item.items()}
    seed_means = [sum(t.hard for t in trajs) / len(trajs) if trajs else 0.0 for trajs in runs]
    out: dict[str, Any] = {
        "seeds": len(runs), "hard_per_seed": seed_means, "hard_mean_over_seeds": sum(seed_means) / len(seed_means),
        "hard_interval": mean_interval(list(means.values())),
        "items_always_pass": sum(all(x >= 0.5 for x in v) for v in per_item.values()),
        "items_never_pass": sum(all(x < 0.5 for x in v) for v in per_item.values()),
        "items_unstable": sum(len({x >= 0.5 for x in v}) > 1 for v in per_item.values()),
        "per_item_hard": per_item,
    }
    if temperature == 0:
        out["note"] = "eval_temperature is 0: greedy decoding repeats the same answer under every seed"
    return out
