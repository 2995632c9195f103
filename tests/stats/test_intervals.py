"""Analytic intervals against published values and hand calculations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from analysis.stats.intervals import (
    correlation_with_ci,
    fisher_z_interval,
    wilson_interval,
)

#: Newcombe, R. G. (1998). Two-sided confidence intervals for the single proportion:
#: comparison of seven methods. Statistics in Medicine 17, 857-872, Table I, method 3
#: (Wilson score interval without continuity correction).
NEWCOMBE_1998 = [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0000, 0.1611),
    (1, 29, 0.0061, 0.1718),
]


@pytest.mark.parametrize(("k", "n", "low", "high"), NEWCOMBE_1998)
def test_wilson_reproduces_newcombe_1998(k, n, low, high):
    got_low, got_high = wilson_interval(k, n)
    assert (round(float(got_low), 4), round(float(got_high), 4)) == (low, high)


def test_wilson_is_vectorized():
    low, high = wilson_interval(np.array([81, 15]), np.array([263, 148]))
    assert np.round(low, 4).tolist() == [0.2553, 0.0624]


def test_wilson_rejects_impossible_counts():
    with pytest.raises(ValueError, match="n > 0"):
        wilson_interval(0, 0)
    with pytest.raises(ValueError, match=r"\[0, n\]"):
        wilson_interval(5, 4)


def test_fisher_z_by_hand_and_against_scipy_pearson():
    # r = .5, n = 28: z = atanh(.5) = .5493, se = 1/5 -> tanh(.5493 -/+ 1.95996 * .2)
    low, high = fisher_z_interval(0.5, 28)
    z, half = math.atanh(0.5), 1.959963984540054 * 0.2
    assert (low, high) == pytest.approx((math.tanh(z - half), math.tanh(z + half)), abs=1e-12)
    assert (round(low, 3), round(high, 3)) == (0.156, 0.736)
    rng = np.random.default_rng(0)
    x = rng.normal(size=30)
    y = x + rng.normal(size=30)
    ours = correlation_with_ci(x, y, method="pearson", level=0.9)
    ref = stats.pearsonr(x, y).confidence_interval(confidence_level=0.9)
    assert (ours.low, ours.high) == pytest.approx((ref.low, ref.high), abs=1e-12)


def test_spearman_uses_the_bonett_wright_standard_error():
    rng = np.random.default_rng(1)
    x = rng.normal(size=12)
    y = x + rng.normal(size=12)
    res = correlation_with_ci(x, y)  # spearman by default
    rho = stats.spearmanr(x, y).statistic
    se = math.sqrt((1 + rho**2 / 2) / (12 - 3))
    half = 1.959963984540054 * se
    assert res.value == pytest.approx(rho) and res.n == 12
    assert res.p_value == pytest.approx(stats.spearmanr(x, y).pvalue)
    assert (res.low, res.high) == pytest.approx(
        (math.tanh(math.atanh(rho) - half), math.tanh(math.atanh(rho) + half)), abs=1e-12
    )
    pearson_width = np.subtract(*fisher_z_interval(rho, 12, method="pearson")[::-1])
    assert res.high - res.low > pearson_width  # the Spearman interval is wider
    assert "Bonett-Wright" in res.method


def test_correlation_edge_cases():
    with pytest.raises(ValueError, match="n > 3"):
        fisher_z_interval(0.5, 3)
    with pytest.warns(RuntimeWarning, match="undefined"):
        low, high = fisher_z_interval(1.0, 5)
    assert math.isnan(low) and math.isnan(high)
    with pytest.raises(ValueError, match="constant"):
        correlation_with_ci([1, 2, 3, 4, 5], [2, 2, 2, 2, 2])
    with pytest.raises(ValueError, match="missing"):
        correlation_with_ci([1, 2, 3, 4, np.nan], [1, 2, 3, 4, 5])
