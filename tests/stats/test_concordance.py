"""The O(n log n) weighted pair count equals the direct O(n^2) sign-matrix sum, exactly."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.stats.concordance import ConcordancePairs


def direct_net_pairs(x: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    """The former form: ``w' S w / 2`` with ``S_ij = sign(dx) sign(dy)``."""
    s = np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])
    return np.sum((W @ s.T) * W, axis=1) / 2.0


@pytest.mark.parametrize("n", [1, 2, 3, 8, 31, 130])
def test_equals_the_quadratic_form_with_ties_and_zero_weights(n: int) -> None:
    rng = np.random.default_rng(n)
    for discrete_x in (True, False):
        x = rng.integers(0, 4, n).astype(float) if discrete_x else rng.normal(size=n).round(1)
        y = rng.integers(1, 6, n).astype(float)
        W = rng.integers(0, 4, (6, n)).astype(float)
        assert np.array_equal(ConcordancePairs(x, y)(W), direct_net_pairs(x, y, W))


def test_shape_mismatch_is_an_error() -> None:
    with pytest.raises(ValueError, match="one length"):
        ConcordancePairs(np.zeros(3), np.zeros(4))
