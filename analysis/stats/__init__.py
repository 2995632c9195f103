"""Statistics of the study: agreement coefficients, bootstrap and analytic intervals.

* :mod:`analysis.stats.agreement`: the agreement library (a contract; long-format ratings
  with columns ``item``, ``rater``, ``label`` in, floats out).
* :mod:`analysis.stats.bootstrap`: vectorized cluster bootstrap (percentile and BCa), the
  fast bootstrap of the pairwise kappa matrix and its group means.
* :mod:`analysis.stats.intervals`: Wilson and Fisher-z intervals.
* :mod:`analysis.stats.coverage`: coverage of an interval across simulated worlds.
* ``analysis.stats.study_*``: the study's records, built on the three modules above.
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
from analysis.stats.bootstrap import (
    BootstrapResult,
    PairwiseKappaBootstrap,
    bootstrap_agreement,
    bootstrap_mean,
    bootstrap_paired_difference,
    bootstrap_pairwise_kappa,
    bootstrap_precision_recall_f1,
    bootstrap_proportion,
    bootstrap_ratio,
    bootstrap_statistic,
    paired_difference,
)
from analysis.stats.interval import Interval
from analysis.stats.intervals import (
    correlation_with_ci,
    fisher_z_interval,
    proportion_with_ci,
    wilson_interval,
)

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
    "BootstrapResult",
    "Interval",
    "PairwiseKappaBootstrap",
    "bootstrap_statistic",
    "bootstrap_proportion",
    "bootstrap_mean",
    "bootstrap_ratio",
    "bootstrap_paired_difference",
    "bootstrap_precision_recall_f1",
    "bootstrap_agreement",
    "bootstrap_pairwise_kappa",
    "paired_difference",
    "wilson_interval",
    "proportion_with_ci",
    "fisher_z_interval",
    "correlation_with_ci",
]
