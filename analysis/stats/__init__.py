"""Statistics of the study: agreement coefficients, resampling designs, intervals, records.

* :mod:`analysis.stats.agreement`: the agreement library (a contract; long-format ratings
  with columns ``item``, ``rater``, ``label`` in, floats out).
* :mod:`analysis.stats.bootstrap`: the vectorized cluster bootstrap (resample counts,
  strata), the fast bootstrap of the pairwise kappa matrix and its group means;
  :mod:`analysis.stats.weighted_bootstrap`: statistics of weighted rows on the same counts.
* :mod:`analysis.stats.resampling`: the declared designs (``stats.designs``) as resamples:
  users and prompts crossed, annotators deleted one at a time.
* :mod:`analysis.stats.settings`: a rule's statistics settings, typed once.
* :mod:`analysis.stats.records`: the one record maker (design, interval, p-value, families
  of tests, method sentence, ``Record``).
* :mod:`analysis.stats.intervals`: the interval type and the closed forms (Clopper-Pearson,
  Wilson, Fisher z, exact permutation p).
* :mod:`analysis.stats.coverage`: coverage of an interval across simulated worlds.
* ``analysis.stats.study_*``, ``baseline_scores``, ``control_effects``: the study's records.
"""

from analysis.stats.agreement import (
    AgreementError,
    RatingsInputError,
    UndefinedAgreementWarning,
    cohen_kappa,
    fleiss_kappa,
    group_mean_kappa,
    gwet_ac1,
    krippendorff_alpha,
    pairwise_cohen_kappa,
    percent_agreement,
    scott_pi,
)
from analysis.stats.intervals import (
    Interval,
    clopper_pearson,
    correlation_with_ci,
    fisher_z_interval,
    wilson_interval,
)
from analysis.stats.records import NullTest, Statistic, make_records
from analysis.stats.resampling import Resamples, Units, plan
from analysis.stats.settings import StatsSettings

__all__ = [
    "AgreementError",
    "RatingsInputError",
    "UndefinedAgreementWarning",
    "percent_agreement",
    "cohen_kappa",
    "scott_pi",
    "fleiss_kappa",
    "krippendorff_alpha",
    "gwet_ac1",
    "pairwise_cohen_kappa",
    "group_mean_kappa",
    "Interval",
    "clopper_pearson",
    "wilson_interval",
    "fisher_z_interval",
    "correlation_with_ci",
    "StatsSettings",
    "Statistic",
    "NullTest",
    "make_records",
    "Resamples",
    "Units",
    "plan",
]
