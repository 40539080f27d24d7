"""Statistical gate rules and paired statistics on constructed item vectors with known answers."""

from __future__ import annotations

import math

import pytest

from skillgrad.engine.gate import gate_test
from skillgrad.engine.gate.stats import flips, mcnemar_exact, mcnemar_one_sided, paired_summary, percentile


def test_flips_count_each_direction() -> None:
    a = [1, 1, 0, 0, 1, 0]
    b = [1, 0, 1, 1, 1, 0]
    assert flips(a, b) == (2, 1)


def test_mcnemar_exact_known_values() -> None:
    # 10 discordant pairs all one way: two-sided p = 2 / 2**10
    assert mcnemar_exact(10, 0) == pytest.approx(2 / 1024)
    # 6 vs 2: P(X<=2 | n=8) = (1 + 8 + 28) / 256, doubled
    assert mcnemar_exact(6, 2) == pytest.approx(2 * 37 / 256)
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_one_sided(5, 0) == pytest.approx(1 / 32)
    assert mcnemar_one_sided(0, 5) == 1.0


def test_percentile_interpolates() -> None:
    assert percentile([0.0, 1.0], 0.5) == 0.5
    assert percentile([1.0, 2.0, 3.0], 1.0) == 3.0


def test_paired_summary_interval_covers_a_sure_gain_and_excludes_zero() -> None:
    a = [0.0] * 30
    b = [1.0] * 20 + [0.0] * 10
    s = paired_summary(a, b, seed=1)
    assert s.mean_diff == pytest.approx(20 / 30)
    assert 0 < s.ci_low <= s.mean_diff <= s.ci_high <= 1
    assert s.p_bootstrap == 0.0
    assert (s.gained, s.lost) == (20, 0)
    assert s.p_mcnemar == pytest.approx(2 / 2**20)


def test_paired_summary_no_difference_interval_straddles_zero() -> None:
    a = [1, 0] * 15
    b = [0, 1] * 15
    s = paired_summary(a, b, seed=3)
    assert s.mean_diff == 0
    assert s.ci_low < 0 < s.ci_high
    assert s.p_mcnemar == 1.0


def test_strict_rule_is_skillopts_rule() -> None:
    assert gate_test("strict", [0, 0, 0], [0, 0, 1]).passed
    assert not gate_test("strict", [0, 0, 1], [0, 1, 0]).passed  # tie rejects


def test_no_gain_made_of_rounding_error_passes_strict() -> None:
    # a Sleep night's held-out soft scores (benchmarks/sleep_sessions.py, seed 2): the sums differ by 3.7e-17, and
    # "mean gain +0.0000 > 0.0" staged a skill that gained nothing
    before, after = [0.375, 0.4, 0.4, 0.375, 0.2, 0.2], [0.375, 0.3, 0.3, 0.375, 0.3, 0.3]
    assert (sum(after) - sum(before)) / 6 > 0.0
    t = gate_test("strict", before, after)
    assert not t.passed and t.mean_diff == 0.0


def test_one_lucky_item_passes_strict_but_not_the_statistical_rules() -> None:
    inc = [1] * 10 + [0] * 20
    cand = [1] * 11 + [0] * 19
    assert gate_test("strict", inc, cand).passed
    boot = gate_test("paired_bootstrap", inc, cand, alpha=0.05, seed=0)
    assert not boot.passed and boot.p_value is not None and boot.p_value > 0.05
    mc = gate_test("mcnemar", inc, cand, alpha=0.05)
    assert not mc.passed and mc.p_value == pytest.approx(0.5)


def test_a_large_consistent_gain_passes_every_rule() -> None:
    inc = [0] * 30
    cand = [1] * 12 + [0] * 18
    for rule in ("strict", "paired_bootstrap", "mcnemar"):
        t = gate_test(rule, inc, cand, alpha=0.05, seed=0)
        assert t.passed, (rule, t.reason)
    assert gate_test("mcnemar", inc, cand).p_value == pytest.approx(1 / 2**12)


def test_no_regression_blocks_a_net_gain_that_breaks_an_item() -> None:
    inc = [1, 0, 0, 0, 0]
    cand = [0, 1, 1, 1, 0]
    assert gate_test("strict", inc, cand).passed
    t = gate_test("strict", inc, cand, no_regression=True)
    assert not t.passed and "no_regression" in t.reason and t.lost == 1


def test_min_delta_requires_a_margin() -> None:
    inc = [0] * 10
    cand = [1] + [0] * 9
    assert gate_test("strict", inc, cand).passed
    assert not gate_test("strict", inc, cand, min_delta=0.1).passed
    assert gate_test("strict", inc, [1, 1] + [0] * 8, min_delta=0.1).passed


def test_soft_scores_work_with_bootstrap() -> None:
    inc = [0.5] * 20
    cand = [0.6] * 20
    t = gate_test("paired_bootstrap", inc, cand, seed=0)
    assert t.passed and math.isclose(t.mean_diff, 0.1)


def test_bad_rule_and_mismatched_items_are_errors() -> None:
    from skillgrad.errors import ConfigError

    with pytest.raises(ConfigError):
        gate_test("vibes", [0], [1])
    with pytest.raises(ValueError):
        gate_test("strict", [0, 1], [1])
