"""The within-stratum difference of means, pooled with Cochran-Mantel-Haenszel weights."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.stats.stratified import stratified_difference, stratum_weights


def test_simpson_s_paradox_is_removed_by_stratifying() -> None:
    """Two generators. Within each, a mention changes nothing (same mean with and without),
    but the good generator mentions a lot and the weak one rarely: pooled, "mentioned" looks
    better by a whole point; stratified, the difference is zero."""
    # generator A: mean 4 either way, 8 mentioned / 2 not; generator B: mean 2, 2 / 8
    sum_m, n_m = np.array([32.0, 4.0]), np.array([8.0, 2.0])
    sum_u, n_u = np.array([8.0, 16.0]), np.array([2.0, 8.0])
    pooled = sum_m.sum() / n_m.sum() - sum_u.sum() / n_u.sum()
    assert pooled == pytest.approx(3.6 - 2.4)
    assert stratified_difference(sum_m, n_m, sum_u, n_u) == pytest.approx(0.0)


def test_weights_by_hand_and_empty_sides() -> None:
    """Differences 1 and -1 with weights 8*2/10 = 1.6 and 3*3/6 = 1.5; a stratum with no
    unmentioned slot has weight 0."""
    sum_m, n_m = np.array([24.0, 6.0, 10.0]), np.array([8.0, 3.0, 5.0])  # means 3, 2, 2
    sum_u, n_u = np.array([4.0, 9.0, 0.0]), np.array([2.0, 3.0, 0.0])  # means 2, 3, --
    expected = (1.6 * 1.0 + 1.5 * -1.0) / 3.1
    assert stratified_difference(sum_m, n_m, sum_u, n_u) == pytest.approx(expected)
    np.testing.assert_allclose(stratum_weights(n_m, n_u), [1.6 / 3.1, 1.5 / 3.1, 0.0])
    # every resample at once: the strata are the last axis
    many = stratified_difference(
        np.stack([sum_m, sum_m]),
        np.stack([n_m, n_m]),
        np.stack([sum_u, sum_u]),
        np.stack([n_u, np.zeros(3)]),
    )
    assert many[0] == pytest.approx(expected) and np.isnan(many[1])
