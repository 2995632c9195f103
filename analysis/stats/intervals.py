"""The project's one interval type, and the analytic intervals beside the bootstrap.

:class:`Interval` is what every interval of the statistics layer is (the record maker,
:mod:`analysis.stats.records`, reads a design's resamples into one; the closed forms here
return one). The closed forms complement the bootstrap where it cannot work or where a
closed form is standard:

* Clopper and Pearson's (1934) exact interval of a proportion, from the beta distribution
  (``statsmodels.stats.proportion.proportion_confint(method="beta")`` for whole counts); with
  a real-valued effective count and sample size (Korn and Graubard 1998) it is the same
  beta quantiles. Its coverage is at least the nominal level for every true proportion, it
  is defined at 0 and n successes with a non-zero width, and it is what a share at 0 or 1,
  or on a few units, gets instead of a bootstrap whose resamples cannot move.
* Wilson (1927) score interval, via ``statsmodels.stats.proportion.proportion_confint``;
  unlike the Wald interval it stays inside [0, 1] and is sensible at 0 or n successes (the
  Monte Carlo uncertainty of a coverage study, :mod:`analysis.stats.coverage`).
* Fisher (1921) z transform: ``z = atanh(r)``, ``r`` in ``tanh(z -/+ z_{a/2} * se)``, with
  ``se = 1 / sqrt(n - 3)`` for Pearson (as ``scipy.stats.pearsonr(...).confidence_interval``)
  and ``se = sqrt((1 + r**2 / 2) / (n - 3))`` for Spearman (Bonett & Wright 2000,
  *Psychometrika* 65, 23-28, who show the Pearson variance is too small for Spearman's rho).
  For ``|r| = 1`` the transform is infinite and the interval is returned as NaN rather than
  the degenerate ``[1, 1]``; ``n <= 3`` raises.
* Exact permutation p-value of a correlation over all ``n!`` pairings
  (``scipy.stats.permutation_test``, ``permutation_type="pairings"``): with a handful of
  units the t approximation behind ``spearmanr``'s p is not valid (for n = 5 and rho = 0.9 it
  gives 0.037 where the exact p is 10 / 120 = 0.083), so small samples get the exact test.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import stats
from scipy.special import ndtri
from statsmodels.stats.proportion import proportion_confint

__all__ = [
    "Interval",
    "finite_or_none",
    "clopper_pearson",
    "wilson_interval",
    "fisher_z_interval",
    "correlation_with_ci",
    "exact_permutation_p",
    "EXACT_PERMUTATION_MAX_N",
]

#: largest sample for which :func:`exact_permutation_p` enumerates every pairing (9! = 362,880)
EXACT_PERMUTATION_MAX_N = 9

CorrelationMethod = Literal["pearson", "spearman"]


def finite_or_none(x: float) -> float | None:
    """``x`` as a float, or None when it is NaN or infinite (a record stores no such bound)."""
    return float(x) if math.isfinite(x) else None


@dataclass(frozen=True)
class Interval:
    """An estimate with its interval (``None`` bounds where the interval is undefined).

    ``method`` names the interval's kind in a word or two (``percentile``, ``bca``, ``t``,
    ``exact``, ``Fisher z``, ``not estimable``); ``text`` is the sentence a record's method
    states. ``n`` is the number of units the estimate was computed on where the maker knows
    it. ``p_value`` is the test an analytic method comes with (the t approximation of a
    correlation), None otherwise (the record maker tests a resampled estimate on its own
    resamples). ``exact``: the interval's coverage is guaranteed (Clopper-Pearson).
    """

    value: float
    low: float | None
    high: float | None
    level: float
    method: str
    text: str = ""
    n: int | None = None
    p_value: float | None = None
    exact: bool = False

    @property
    def has_ci(self) -> bool:
        """Both bounds are defined."""
        return self.low is not None and self.high is not None


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")


def wilson_interval(successes: Any, n: Any, level: float = 0.95) -> tuple[Any, Any]:
    """Wilson score interval of ``successes / n`` (arrays broadcast). ``n`` must be > 0."""
    _check_level(level)
    k = np.asarray(successes)
    nn = np.asarray(n)
    if np.any(nn <= 0):
        raise ValueError("a proportion needs n > 0 trials")
    if np.any(k < 0) or np.any(k > nn):
        raise ValueError(f"successes must lie in [0, n]; got successes={k}, n={nn}")
    low, high = proportion_confint(k, nn, alpha=1.0 - level, method="wilson")
    return low, high


def clopper_pearson(successes: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Clopper-Pearson interval of ``successes / n``; real-valued counts allowed.

    The bounds are the beta quantiles ``B(a/2; x, n - x + 1)`` and ``B(1 - a/2; x + 1, n - x)``
    (0 at ``x = 0`` and 1 at ``x = n``), which for whole counts are statsmodels'
    ``proportion_confint(method="beta")`` and for an effective count and sample size of a
    clustered design are Korn and Graubard's (1998) interval.
    """
    _check_level(level)
    if not n > 0 or not 0.0 <= successes <= n:
        raise ValueError(f"a proportion needs n > 0 and 0 <= successes <= n, got {successes}/{n}")
    alpha = 1.0 - level
    low = 0.0 if successes <= 0 else float(stats.beta.ppf(alpha / 2, successes, n - successes + 1))
    high = (
        1.0
        if successes >= n
        else float(stats.beta.ppf(1 - alpha / 2, successes + 1, n - successes))
    )
    return low, high


def fisher_z_interval(
    r: float, n: int, level: float = 0.95, method: CorrelationMethod = "pearson"
) -> tuple[float, float]:
    """Fisher-z interval of a correlation ``r`` from ``n`` pairs (see the module docstring)."""
    _check_level(level)
    if n <= 3:
        raise ValueError(f"a Fisher-z interval needs n > 3 pairs, got n={n}")
    if not -1.0 <= r <= 1.0 or not np.isfinite(r):
        raise ValueError(f"a correlation must lie in [-1, 1], got {r}")
    if abs(r) == 1.0:
        warnings.warn(
            f"|r| = 1 with n={n}: the Fisher-z interval is undefined; returning NaN",
            RuntimeWarning,
            stacklevel=2,
        )
        return float("nan"), float("nan")
    if method == "pearson":
        se = 1.0 / np.sqrt(n - 3)
    elif method == "spearman":
        se = np.sqrt((1.0 + r**2 / 2.0) / (n - 3))
    else:
        raise ValueError(f"method must be 'pearson' or 'spearman', got {method!r}")
    z = np.arctanh(r)
    half = ndtri(1.0 - (1.0 - level) / 2.0) * se
    return float(np.tanh(z - half)), float(np.tanh(z + half))


def correlation_with_ci(
    x: Any, y: Any, method: CorrelationMethod = "spearman", level: float = 0.95
) -> Interval:
    """Pearson r or Spearman rho of paired values (scipy), with a Fisher-z interval.

    ``p_value`` is scipy's test of 0 (t approximation); the bounds are ``None`` where the
    interval is undefined (``|r| = 1``).
    """
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"x and y must be paired 1-d sequences, got {a.shape} and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("x and y must not contain missing values; drop incomplete pairs first")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        raise ValueError("a correlation with a constant variable is undefined")
    if method == "pearson":
        res = stats.pearsonr(a, b)
        label = "Pearson r, Fisher z interval"
    elif method == "spearman":
        res = stats.spearmanr(a, b)
        label = "Spearman rho, Fisher z interval (Bonett-Wright SE)"
    else:
        raise ValueError(f"method must be 'pearson' or 'spearman', got {method!r}")
    r = float(res.statistic)
    low, high = fisher_z_interval(r, a.size, level, method)
    ok = np.isfinite(low) and np.isfinite(high)
    return Interval(
        r,
        float(low) if ok else None,
        float(high) if ok else None,
        level,
        label,
        label,
        int(a.size),
        p_value=float(res.pvalue),
    )


def _pairings_test(x: Any, y: Any, method: CorrelationMethod) -> Any:
    """``scipy.stats.permutation_test`` of a correlation over all pairings (see below)."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"x and y must be paired 1-d sequences, got {a.shape} and {b.shape}")
    if a.size > EXACT_PERMUTATION_MAX_N:
        raise ValueError(
            f"exact enumeration of {a.size}! pairings is too large (at most "
            f"{EXACT_PERMUTATION_MAX_N} units); use the analytic or bootstrap p-value"
        )
    if method == "spearman":
        a, b = stats.rankdata(a), stats.rankdata(b)
    elif method != "pearson":
        raise ValueError(f"method must be 'pearson' or 'spearman', got {method!r}")
    bc = b - b.mean()

    def statistic(u: np.ndarray, axis: int = -1) -> np.ndarray:
        uc = u - u.mean(axis=axis, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (uc * bc).sum(axis=axis) / np.sqrt((uc * uc).sum(axis=axis) * (bc * bc).sum())

    return stats.permutation_test(
        (a,),
        statistic,
        permutation_type="pairings",
        alternative="two-sided",
        n_resamples=np.inf,
        vectorized=True,
    )


def exact_permutation_p(x: Any, y: Any, method: CorrelationMethod = "spearman") -> float:
    """Exact two-sided permutation p-value of a correlation over all pairings of ``x``/``y``.

    scipy's two-sided p: twice the smaller of the shares of the ``n!`` re-pairings whose
    statistic is at most / at least the observed one (ties with the observed value count, up
    to scipy's relative tolerance). It is exact at any n, which is why small samples use it;
    enumeration is bounded by :data:`EXACT_PERMUTATION_MAX_N`. The statistic is vectorized
    over permutations (Pearson's r of the values, or of their mid-ranks for Spearman).
    """
    return float(_pairings_test(x, y, method).pvalue)


def exact_permutation_attainable(
    x: Any, y: Any, method: CorrelationMethod = "spearman"
) -> list[list[float]]:
    """Every outcome the exact test of :func:`exact_permutation_p` can have, with its p-value.

    ``[[statistic, p], ...]`` over the distinct values of the statistic across all ``n!``
    pairings (sorted; values equal to 1e-9 are one value), p being the two-sided p the test
    gives that outcome. Why: with a handful of units a discrete test may reach a level only at
    its most extreme outcome (five models: only rho = +/-1 reaches p < 0.05), and a claim
    judged on it is then inconclusive rather than refuted when it misses the level
    (:mod:`analysis.paper.claims` reads this list).
    """
    null = np.round(np.asarray(_pairings_test(x, y, method).null_distribution), 9)
    values = np.unique(null)
    below = np.searchsorted(np.sort(null), values, side="right") / null.size
    above = 1.0 - np.searchsorted(np.sort(null), values, side="left") / null.size
    p = np.minimum(1.0, 2.0 * np.minimum(below, above))
    return [[float(t), round(float(q), 12)] for t, q in zip(values, p, strict=True)]
