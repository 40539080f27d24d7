"""Paired statistics over per-item scores: bootstrap intervals, McNemar's exact test, flips.

Pure functions over two equally long score vectors for the same items in the same order (a candidate
and an incumbent, or run B and run A). Used by the statistical gate rules and by `eval --seeds` /
`compare`. Deterministic: every resampling takes an explicit seed.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class PairedSummary:
    n: int
    mean_a: float
    mean_b: float
    mean_diff: float          # mean(b - a)
    ci_low: float             # bootstrap percentile interval of mean(b - a)
    ci_high: float
    confidence: float
    p_bootstrap: float        # one-sided: share of resamples with mean(b - a) <= 0
    p_mcnemar: float          # two-sided exact McNemar on hard (0/1) outcomes; 1.0 when not binary
    gained: int               # items a failed and b passed (b better)
    lost: int                 # items a passed and b failed (b worse)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _check(a: Sequence[float], b: Sequence[float]) -> None:
    if len(a) != len(b):
        raise ValueError(f"paired vectors differ in length: {len(a)} vs {len(b)}")


def flips(a: Sequence[float], b: Sequence[float]) -> tuple[int, int]:
    """(gained, lost): items that went from fail to pass and from pass to fail (pass = score >= 0.5)."""
    _check(a, b)
    gained = sum(1 for x, y in zip(a, b, strict=True) if x < 0.5 <= y)
    lost = sum(1 for x, y in zip(a, b, strict=True) if y < 0.5 <= x)
    return gained, lost


def mcnemar_exact(gained: int, lost: int) -> float:
    """Two-sided exact McNemar p-value: binomial test of the discordant pairs against p = 1/2."""
    n = gained + lost
    if n == 0:
        return 1.0
    k = min(gained, lost)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2.0 * tail)


def mcnemar_one_sided(gained: int, lost: int) -> float:
    """P(at least `gained` of the discordant pairs favour b | no difference): the gate's question."""
    n = gained + lost
    if n == 0:
        return 1.0
    return sum(math.comb(n, i) for i in range(gained, n + 1)) / 2**n


def bootstrap_diffs(a: Sequence[float], b: Sequence[float], *, resamples: int = 2000, seed: int = 0) -> list[float]:
    """Sorted means of (b - a) over item resamples drawn with replacement."""
    _check(a, b)
    d = [y - x for x, y in zip(a, b, strict=True)]
    n = len(d)
    if n == 0:
        return [0.0]
    rng = random.Random(seed)
    out = []
    for _ in range(resamples):
        s = 0.0
        for _ in range(n):
            s += d[rng.randrange(n)]
        out.append(s / n)
    out.sort()
    return out


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in [0, 1]) of an already sorted list."""
    if not sorted_values:
        return 0.0
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def paired_summary(a: Sequence[float], b: Sequence[float], *, confidence: float = 0.95, resamples: int = 2000,
                   seed: int = 0) -> PairedSummary:
    _check(a, b)
    n = len(a)
    diffs = bootstrap_diffs(a, b, resamples=resamples, seed=seed)
    alpha = 1.0 - confidence
    gained, lost = flips(a, b)
    binary = all(v in (0, 1, 0.0, 1.0) for v in list(a) + list(b))
    return PairedSummary(
        n=n, mean_a=sum(a) / n if n else 0.0, mean_b=sum(b) / n if n else 0.0,
        mean_diff=(sum(b) - sum(a)) / n if n else 0.0,
        ci_low=percentile(diffs, alpha / 2), ci_high=percentile(diffs, 1 - alpha / 2), confidence=confidence,
        p_bootstrap=sum(1 for x in diffs if x <= 0) / len(diffs),
        p_mcnemar=mcnemar_exact(gained, lost) if binary else 1.0, gained=gained, lost=lost,
    )
