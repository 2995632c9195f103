"""How often an interval holds the truth across simulated worlds, and how sure we are of that.

A 95% interval should hold its estimand in 95% of worlds drawn from the same model. Over
``R`` worlds the observed coverage of one estimand is a proportion of independent worlds,
so its Monte Carlo uncertainty is a Wilson interval
(:func:`analysis.stats.intervals.wilson_interval`). Coverage pooled over the estimands of a
study is a mean over worlds of each world's share of covered estimands; the estimands of
one world are not independent (they share its users, prompts and raters), so its Monte
Carlo interval comes from resampling worlds, and it is tested against the nominal level.

The targets (``COVERAGE_TARGETS``) are about the nominal level, not a band around it: no
estimand's Monte Carlo interval wholly below ``floor``; the pooled coverage within
``pooled``; an estimand's Monte Carlo interval wholly above ``ceiling`` only where its
design is declared conservative and its interval is at most ``conservative_width`` times as
wide as the estimates' spread across worlds. Bias is the mean estimate minus the truth, with
its Monte Carlo standard error, so a reader can tell a shifted estimate from an interval
that is merely too narrow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri

from analysis.stats.intervals import clopper_pearson, wilson_interval

__all__ = [
    "COVERAGE_TARGETS",
    "COVERAGE_WORLDS",
    "CoverageTargets",
    "IntervalCoverage",
    "PooledCoverage",
    "interval_coverage",
    "pooled_coverage",
]


@dataclass(frozen=True)
class CoverageTargets:
    """What a nominal 95% interval's coverage across worlds must meet."""

    nominal: float = 0.95
    #: no estimand's Monte Carlo interval may lie wholly below this
    floor: float = 0.93
    #: the pooled coverage must lie in this range
    pooled: tuple[float, float] = (0.94, 0.97)
    #: an estimand's Monte Carlo interval wholly above this is over-coverage ...
    ceiling: float = 0.97
    #: ... allowed only for a conservative design at most this wide relative to the spread
    conservative_width: float = 1.25


COVERAGE_TARGETS = CoverageTargets()
#: worlds a coverage study should have: the Monte Carlo interval of a 95% coverage is then
#: about +-0.014, narrow enough to tell 0.93 from 0.95
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
    #: "ok", "under-covers", "over-covers" or "conservative" (over the ceiling, allowed)
    verdict: str


def interval_coverage(
    estimates: np.ndarray,
    truth: float | np.ndarray,
    targets: CoverageTargets = COVERAGE_TARGETS,
    level: float = 0.95,
    conservative: bool = False,
) -> IntervalCoverage:
    """Coverage of ``estimates`` (rows ``[value, ci_low, ci_high]``, one per world).

    ``truth`` is one value for every world or one per world (a truth conditional on the
    world's fixed factors). ``conservative``: the interval's design is declared conservative.
    """
    got = np.asarray(estimates, dtype=np.float64)
    if got.ndim != 2 or got.shape[1] != 3 or not len(got):
        raise ValueError(f"estimates must be rows [value, ci_low, ci_high], got {got.shape}")
    truth = np.broadcast_to(np.asarray(truth, dtype=np.float64), (len(got),))
    covered = int(((got[:, 1] <= truth) & (truth <= got[:, 2])).sum())
    low, high = wilson_interval(covered, len(got), level)
    err = got[:, 0] - truth
    sd = float(err.std(ddof=1)) if len(got) > 1 else 0.0
    z = float(ndtri(0.5 + level / 2))
    mean_width = float((got[:, 2] - got[:, 1]).mean())
    ratio = mean_width / (2 * z * sd) if sd > 0 else None
    verdict = "ok"
    if high < targets.floor:
        verdict = "under-covers"
    elif low > targets.ceiling:
        allowed = conservative and ratio is not None and ratio <= targets.conservative_width
        verdict = "conservative" if allowed else "over-covers"
    return IntervalCoverage(
        worlds=len(got),
        covered=covered,
        coverage=covered / len(got),
        mc_low=float(low),
        mc_high=float(high),
        bias=float(err.mean()),
        bias_mc_se=float(err.std(ddof=1) / np.sqrt(len(got))) if len(got) > 1 else None,
        mean_ci_width=mean_width,
        width_to_spread=ratio,
        verdict=verdict,
    )


@dataclass(frozen=True)
class PooledCoverage:
    """Coverage pooled over estimands, with a Monte Carlo interval from resampling worlds."""

    worlds: int
    estimands: int
    coverage: float
    mc_low: float
    mc_high: float
    #: two-sided p-value of "pooled coverage = nominal" (normal, world-resampling se)
    p_vs_nominal: float
    #: "ok" when the pooled coverage lies within the pooled target, else "under-covers" or
    #: "over-covers"
    verdict: str
    #: the interval is Clopper-Pearson over worlds (every world covered all its estimands, or
    #: none): resampling worlds would give an interval of width zero at the boundary
    exact: bool = False


def pooled_coverage(
    covered: np.ndarray,
    targets: CoverageTargets = COVERAGE_TARGETS,
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> PooledCoverage:
    """Pooled coverage of a (worlds x estimands) 0/1 matrix (NaN: the world has no estimate).

    Each world's share of covered estimands is averaged over worlds (weighted by how many
    estimands the world has); the percentile interval and the standard error of the test
    come from ``n_boot`` resamples of worlds. Where every world covered all its estimands (or
    none), every resample is that boundary and the percentile interval has width zero; the
    interval is then Clopper-Pearson over the worlds (``exact``).
    """
    hits = np.asarray(covered, dtype=np.float64)
    if hits.ndim != 2 or not hits.size:
        raise ValueError(f"covered must be a (worlds, estimands) matrix, got {hits.shape}")
    have = np.isfinite(hits)
    per_world, counts = np.where(have, hits, 0.0).sum(axis=1), have.sum(axis=1)
    value = float(per_world.sum() / counts.sum())
    rng = np.random.default_rng(seed)
    draws = rng.integers(len(hits), size=(n_boot, len(hits)))
    boot = per_world[draws].sum(axis=1) / counts[draws].sum(axis=1)
    alpha = (1 - level) / 2
    low, high = (float(x) for x in np.quantile(boot, [alpha, 1 - alpha]))
    exact = value in (0.0, 1.0)
    if exact:
        # Every world at the same boundary: the worlds are the independent units, so the exact
        # binomial interval of R worlds out of R (or 0 of R) says how sure R worlds can make us.
        low, high = clopper_pearson(len(hits) * value, len(hits), level)
    se = float(boot.std(ddof=1))
    p = 2 * float(ndtr(-abs(value - targets.nominal) / se)) if se > 0 else float(value != 0.95)
    lo_target, hi_target = targets.pooled
    verdict = "ok"
    if value < lo_target:
        verdict = "under-covers"
    elif value > hi_target:
        verdict = "over-covers"
    return PooledCoverage(
        worlds=len(hits),
        estimands=int(have.any(axis=0).sum()),
        coverage=value,
        mc_low=low,
        mc_high=high,
        p_vs_nominal=p,
        verdict=verdict,
        exact=exact,
    )
