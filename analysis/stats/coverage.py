"""How often an interval holds the truth across simulated worlds, and how sure we are of that.

A 95% interval should hold its estimand in about 95% of worlds drawn from the same model.
Over ``R`` worlds the observed coverage is a proportion of independent worlds, so its own
Monte Carlo uncertainty is a Wilson interval (:func:`analysis.stats.intervals.wilson_interval`).
An estimator is a *finding* only when that whole Monte Carlo interval lies outside the target
band (default [0.92, 0.98]): a point below 0.95 from a few hundred worlds is ordinary noise.
Bias is the mean estimate minus the truth, with its Monte Carlo standard error, so a reader
can tell a shifted estimate from an interval that is merely too narrow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from analysis.stats.intervals import wilson_interval

__all__ = ["COVERAGE_TARGET", "COVERAGE_WORLDS", "IntervalCoverage", "interval_coverage"]

#: the band a nominal 95% interval's coverage should fall in (its Monte Carlo interval)
COVERAGE_TARGET: tuple[float, float] = (0.92, 0.98)
#: worlds a coverage study should have: the Monte Carlo interval of a 95% coverage is then
#: about +-0.014, narrow enough to tell 0.92 from 0.95
COVERAGE_WORLDS = 1000


@dataclass(frozen=True)
class IntervalCoverage:
    """Coverage of one estimator's interval over ``worlds`` simulated worlds."""

    worlds: int
    covered: int
    coverage: float
    mc_low: float
    mc_high: float
    bias: float
    bias_mc_se: float | None
    mean_ci_width: float
    #: mean interval width over the width a normal interval of the estimates' spread across
    #: worlds would have (2 z sd): above 1 the interval is wider than the estimator varies
    width_to_spread: float | None
    verdict: str  # "ok", "under-covers" or "over-covers"


def interval_coverage(
    estimates: np.ndarray,
    truth: float,
    target: tuple[float, float] = COVERAGE_TARGET,
    level: float = 0.95,
) -> IntervalCoverage:
    """Coverage of ``estimates`` (rows ``[value, ci_low, ci_high]``, one per world)."""
    got = np.asarray(estimates, dtype=np.float64)
    if got.ndim != 2 or got.shape[1] != 3 or not len(got):
        raise ValueError(f"estimates must be rows [value, ci_low, ci_high], got {got.shape}")
    covered = int(((got[:, 1] <= truth) & (truth <= got[:, 2])).sum())
    low, high = wilson_interval(covered, len(got), level)
    err = got[:, 0] - truth
    sd = float(got[:, 0].std(ddof=1)) if len(got) > 1 else 0.0
    z = float(ndtri(0.5 + level / 2))
    mean_width = float((got[:, 2] - got[:, 1]).mean())
    verdict = "ok"
    if high < target[0]:
        verdict = "under-covers"
    elif low > target[1]:
        verdict = "over-covers"
    return IntervalCoverage(
        worlds=len(got),
        covered=covered,
        coverage=covered / len(got),
        mc_low=float(low),
        mc_high=float(high),
        bias=float(err.mean()),
        bias_mc_se=float(err.std(ddof=1) / np.sqrt(len(got))) if len(got) > 1 else None,
        mean_ci_width=mean_width,
        width_to_spread=mean_width / (2 * z * sd) if sd > 0 else None,
        verdict=verdict,
    )
