"""The project's one interval type: an estimate, its confidence interval and how it was made.

Every interval of the statistics layer is an :class:`Interval`: a cluster-bootstrap interval
(:meth:`analysis.stats.bootstrap.BootstrapResult.ci`,
:func:`analysis.stats.study_common.boot_interval`,
:func:`analysis.stats.weighted_bootstrap.bootstrap`) as well as an analytic one (Wilson,
Fisher z in :mod:`analysis.stats.intervals`). One type means a record, a figure and a p-value
read the same fields whichever method made the interval. A bootstrap interval keeps its
resamples (``resamples``), so a test of the same estimate uses the same resampling unit and
the same draws as its interval (:func:`analysis.stats.bootstrap.resample_p_value`), and the
record can state its confidence level (``level``) instead of a reader searching the config.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the engine imports this module; the type is only named here
    from analysis.stats.bootstrap import BootstrapResult

__all__ = ["Interval", "finite_or_none"]


def finite_or_none(x: float) -> float | None:
    """``x`` as a float, or None when it is NaN or infinite (a record stores no such bound)."""
    return float(x) if math.isfinite(x) else None


@dataclass(frozen=True)
class Interval:
    """An estimate with its interval (``None`` bounds where the interval is undefined).

    ``method`` names the interval's kind in a word or two ("percentile", "bca", "Wilson score
    interval", ...); ``text`` is the sentence a record's method states. ``n`` is the number of
    units the estimate was computed on where the maker knows it. ``resamples`` is the bootstrap
    result the interval was read from (``None`` for an analytic interval); ``p_value`` is the
    test an analytic method comes with (e.g. the t approximation of a correlation), ``None``
    otherwise (a bootstrap test is computed from ``resamples``).
    """

    value: float
    low: float | None
    high: float | None
    level: float
    method: str
    text: str = ""
    n: int | None = None
    p_value: float | None = None
    resamples: BootstrapResult | None = field(default=None, repr=False, compare=False)

    @property
    def has_ci(self) -> bool:
        """Both bounds are defined."""
        return self.low is not None and self.high is not None
