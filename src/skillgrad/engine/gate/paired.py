"""The gate score and the per-item test (`evaluation.gate_test`, `gate_min_delta`, `gate_no_regression`)."""

from __future__ import annotations

from dataclasses import dataclass

from skillgrad.errors import ConfigError


def gate_score(hard: float, soft: float, metric: str, mixed_weight: float, density_bonus: float = 0.0) -> float:
    """hard, soft, or (1-w)*hard + w*soft, plus an optional semantic-density bonus."""
    if metric == "hard":
        base = hard
    elif metric == "soft":
        base = soft
    elif metric == "mixed":
        base = (1.0 - mixed_weight) * hard + mixed_weight * soft
    else:
        raise ConfigError(f"evaluation.gate_metric: unknown metric {metric!r}; use hard, soft or mixed")
    return base + density_bonus


@dataclass(frozen=True)
class GateTest:
    """Whether a candidate's per-item gain over the incumbent passes the configured rule, and why."""

    rule: str
    passed: bool
    reason: str
    mean_diff: float
    p_value: float | None
    gained: int
    lost: int

    def to_json(self) -> dict[str, object]:
        return {"rule": self.rule, "passed": self.passed, "reason": self.reason, "mean_diff": self.mean_diff,
                "p_value": self.p_value, "gained": self.gained, "lost": self.lost}


_NO_GAIN = 1e-9  # a mean difference smaller than this is zero (sums of soft scores carry rounding error)


def gate_test(rule: str, incumbent: list[float], candidate: list[float], *, alpha: float = 0.05,
              min_delta: float = 0.0, no_regression: bool = False, seed: int = 0,
              resamples: int = 2000) -> GateTest:
    """The evaluation.gate_test rule on per-item scores of the same items (same order).

    strict: mean gain > min_delta (SkillOpt's rule when min_delta is 0). paired_bootstrap: additionally the
    share of item resamples whose mean gain is <= 0 must be below alpha. mcnemar: additionally the
    one-sided exact binomial test on the items that flipped must be below alpha. no_regression: no item
    that passed under the incumbent may fail under the candidate.
    """
    from skillgrad.engine.gate.stats import bootstrap_diffs, flips, mcnemar_one_sided

    if len(incumbent) != len(candidate):
        raise ValueError("gate_test: incumbent and candidate were scored on different items")
    n = len(candidate)
    diff = (sum(candidate) - sum(incumbent)) / n if n else 0.0
    if abs(diff) < _NO_GAIN:  # float noise: 0.3 - 0.4 and 0.3 - 0.2 summed is 3.7e-17, not a gain
        diff = 0.0
    gained, lost = flips(incumbent, candidate)
    p: float | None = None

    def result(passed: bool, reason: str) -> GateTest:
        return GateTest(rule, passed, reason, diff, p, gained, lost)

    if not diff > min_delta:
        return result(False, f"mean gain {diff:+.4f} is not above min_delta {min_delta}")
    if no_regression and lost:
        return result(False, f"{lost} item(s) that passed now fail (no_regression)")
    if rule == "strict":
        return result(True, f"mean gain {diff:+.4f} > {min_delta}")
    if rule == "paired_bootstrap":
        diffs = bootstrap_diffs(incumbent, candidate, resamples=resamples, seed=seed)
        p = sum(1 for x in diffs if x <= 0) / len(diffs)
    elif rule == "mcnemar":
        p = mcnemar_one_sided(gained, lost)
    else:
        raise ConfigError(f"evaluation.gate_test: unknown rule {rule!r}; use strict, paired_bootstrap or mcnemar")
    if p < alpha:
        return result(True, f"{rule} p={p:.4f} < alpha {alpha}")
    return result(False, f"{rule} p={p:.4f} >= alpha {alpha}: the gain may be noise")
