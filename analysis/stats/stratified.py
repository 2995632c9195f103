"""A difference of two means within strata, pooled over the strata.

Why: the stage-3 mention effect compares the ratings of slots whose attribute the response
mentions with those whose attribute it does not. Pooled over generators, that difference
mixes two things: the generators differ in how often they mention attributes (some in most
slots, some in few) and in how good their responses are, so a generator that mentions a lot
and writes well makes "mentioned" look better even if, within every generator, a mention
changes nothing (Simpson's paradox). Comparing mentioned with unmentioned slots *within* each
generator and pooling those differences removes the generator from the comparison.

The pooled difference weighs stratum ``g`` by ``w_g = n_m,g n_u,g / (n_m,g + n_u,g)``, the
Cochran-Mantel-Haenszel weight of a difference of two means (the inverse of its variance
when the ratings' variance is the same in every stratum): a stratum where only one side is
observed has weight 0 and drops out. Everything is a function of per-stratum totals, so it
takes every bootstrap resample's totals at once (the last axis is the strata).
"""

from __future__ import annotations

import numpy as np


def stratified_difference(
    sum_a: np.ndarray, n_a: np.ndarray, sum_b: np.ndarray, n_b: np.ndarray
) -> np.ndarray:
    """Pooled within-stratum difference of means ``mean_a - mean_b`` (last axis: strata).

    NaN where no stratum has both sides (the difference is then undefined).
    """
    sa, na = np.asarray(sum_a, dtype=np.float64), np.asarray(n_a, dtype=np.float64)
    sb, nb = np.asarray(sum_b, dtype=np.float64), np.asarray(n_b, dtype=np.float64)
    both = (na > 0) & (nb > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = np.where(both, sa / np.where(na > 0, na, 1.0) - sb / np.where(nb > 0, nb, 1.0), 0.0)
        weight = np.where(both, na * nb / (na + nb), 0.0)
        total = weight.sum(axis=-1)
        value = (weight * diff).sum(axis=-1) / total
    return np.where(total > 0, value, np.nan)


def stratum_weights(n_a: np.ndarray, n_b: np.ndarray) -> np.ndarray:
    """Each stratum's share of the pooled difference's weight (0 where a side is empty)."""
    na, nb = np.asarray(n_a, dtype=np.float64), np.asarray(n_b, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where((na > 0) & (nb > 0), na * nb / (na + nb), 0.0)
        return w / w.sum(axis=-1, keepdims=True)
