"""The one record maker: settings -> design -> resamples -> interval -> p-value -> method -> Record.

Every number the statistics report is made here, so every record states its interval, its
test and its design in the same words and by the same rules, whichever stage computed it:

* **Settings** (:class:`~analysis.stats.settings.StatsSettings`): the ``stats`` config
  group, ``run.seed`` and the models' caveats, typed once per rule.
* **Design and resamples** (:mod:`analysis.stats.resampling`): a statistic arrives as its
  :class:`~analysis.stats.resampling.Resamples` under its declared design, or as an analytic
  :class:`~analysis.stats.intervals.Interval` (a correlation across a handful of models).
* **Interval** (:func:`read_interval`), one rule for every record, in this order:

  1. A share at 0 or 1, or on fewer than :data:`MIN_UNITS` units of its design, gets the
     Clopper-Pearson interval (exact: coverage at least the nominal level for every true
     share, and a non-zero width at 0 and 1, where every resample is 0 or 1) on the design's
     effective number of units: Korn and Graubard's (1998) ``n* = p (1 - p) / v`` with ``v``
     the design's variance (at most the observations), or the design's units themselves at
     0 or 1. Wilson's score interval was the alternative; it can under-cover at small n.
  2. A design of one bootstrapped factor (at least ten levels) reads percentile or BCa
     bounds off its resamples, as the one-factor bootstrap always has (BCa undefined: the
     percentile interval, and the method says so).
  3. Any other design (users and prompts crossed, annotators, a factor of fewer than ten
     levels) adds its parts' variances (the cells' with a minus sign: Cameron, Gelbach and
     Miller 2011; a negative sum falls back to the larger one-way variance; the annotators'
     net variance is a variance component, truncated at zero) and reads a t interval whose
     degrees of freedom are the fewest levels of any random factor less one (``levels -
     strata`` within strata: Cameron, Gelbach and Miller's ``min(G) - 1``); with people,
     Satterthwaite's for the rows' variance and the annotators' own jackknife variance
     (whose ``m - 1`` degrees of freedom carry the noise of the people's net part however
     small it is), between ``m - 1`` for ``m`` annotators and the rows' fewest levels less
     one; for a group mean of pairwise statistics whose people's net is positive,
     Satterthwaite's over every term of that net (its rater pairs' jackknife subtracts a
     variance as noisy as the annotators'), never fewer than 3. The interval is clipped to
     the values the statistic can take (``Statistic.limits``: a kappa's -1 to 1), where a
     symmetric interval would reach past them. A share instead gets Korn and Graubard's
     (1998) interval: Clopper-Pearson on its effective number of units, scaled by
     ``(z / t)^2`` for the same degrees of freedom, which follows its skew near 0 or 1.
  4. Undefined resamples are dropped and counted; fewer than half defined, or no spread at
     all (a constant rater's kappa is 0 on every resample), and the record states its value
     as "not estimable" instead of printing an interval of width zero.
  5. A value fixed by the rule that made it, not estimated from a sample (the recall of the
     rule that marks every item relevant is 1 on any items: ``Statistic.by_construction``
     says why), gets no interval at all: the method says it is not estimated and why, so no
     reader takes a Clopper-Pearson interval for uncertainty the value does not have.

* **p-value** from the same resamples or the same variance as the interval: the inverted
  percentile interval (floored at ``1/B``, and then an upper bound: printed ``< 1/B``), or
  the t test of the interval's variance; adjusted within its declared family
  (``stats.families``) by ``stats.multiple_comparisons``, and an adjusted value that rests on
  a floored p-value is an upper bound too (``< m/B`` after Holm over m tests).
* **Method sentence**: what was computed; the design; the interval; the test.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy import stats as scipy_stats
from scipy.special import ndtr, ndtri

from analysis import resamples as kept
from analysis.provenance import Record
from analysis.stats.bootstrap import BootstrapResult, redrawn_digests
from analysis.stats.intervals import Interval, clopper_pearson, finite_or_none
from analysis.stats.resampling import DesignInfo, Resamples
from analysis.stats.settings import StatsSettings

__all__ = [
    "MIN_UNITS",
    "SHARE",
    "AGREEMENT",
    "NONNEGATIVE",
    "NullTest",
    "Statistic",
    "make_records",
    "part_variance",
    "read_interval",
    "exact_share",
    "percentile_bounds",
    "resample_p_value",
    "key_part",
    "NOT_ESTIMABLE",
    "BY_CONSTRUCTION",
    "paired_change",
    "pair_resamples",
    "Paired",
    "stored",
]

#: a share on fewer units of its design gets the exact interval
MIN_UNITS = 30
#: the values a share, a precision, recall, F1 or AUROC can take
SHARE = (0.0, 1.0)
#: the values a kappa or a rank correlation can take
AGREEMENT = (-1.0, 1.0)
#: the values a ratio of counts can take
NONNEGATIVE = (0.0, math.inf)
#: what a record states instead of a value whose resamples do not move
NOT_ESTIMABLE = "not estimable"
#: the interval method of a value fixed by the rule that made it (no interval)
BY_CONSTRUCTION = "by construction"
CORRECTIONS = {"holm": "Holm", "fdr_bh": "Benjamini-Hochberg"}
#: the words a method uses where its p-value and interval come from different methods and
#: may disagree (the consistency test of p-values and intervals accepts a record that says so)
DISAGREEMENT_EXPLAINED = "can disagree"


# --------------------------------------------------------------------------------------
# What a statistic hands the record maker
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NullTest:
    """A test of ``null`` on the statistic's own resamples or variance, in a declared family.

    The family is adjusted within ``scope`` (e.g. one stage-2 round); every family name is
    declared in ``stats.families``.
    """

    null: float
    family: str
    scope: str = ""


@dataclass(frozen=True)
class Statistic:
    """One statistic before its interval: the record maker does the rest.

    ``estimate``: its resamples under its design, or an analytic interval (whose own
    ``p_value`` a test then reports). ``what``: the method sentence's first part (what was
    computed, on which items). ``units``: for a share, the design's units behind its
    denominator (the exact-interval rule reads it); None for anything else.
    """

    key: str
    estimate: Resamples | Interval
    fmt: str
    what: str
    code: str
    n: int
    extra: Mapping[str, Any] = field(default_factory=dict)
    test: NullTest | None = None
    units: int | None = None
    #: the design an analytic interval stands for (resampled statistics carry their own)
    design: DesignInfo | None = None
    #: what ``n`` counts (``items``, ``judgments``, ``slots``, ...; the record's ``unit``)
    unit: str = ""
    #: the values the statistic can take (a t interval is clipped to them): :data:`SHARE`
    #: for an F1 or AUROC, :data:`AGREEMENT` for kappas and rank correlations,
    #: :data:`NONNEGATIVE` for ratios; None: unbounded (a share, ``units`` given, needs none:
    #: its Korn-Graubard interval stays inside 0 to 1)
    limits: tuple[float, float] | None = None
    #: why the value is fixed by construction (not estimated: no interval, no test); empty
    #: for every estimated statistic
    by_construction: str = ""


# --------------------------------------------------------------------------------------
# Resamples -> interval
# --------------------------------------------------------------------------------------


def percentile_bounds(
    part: BootstrapResult, level: float, method: str
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile or BCa bounds of every component of a bootstrap part (NaN: undefined).

    BCa (Efron 1987; DiCiccio and Efron 1996): acceleration from the leave-one-cluster-out
    jackknife, bias correction ``z0 = Phi^-1((#{theta* < theta} + #{theta* == theta} / 2) / B)``
    (ties count half, which matters for discrete statistics). Undefined resamples are dropped.
    """
    alpha = 1.0 - level
    est = np.asarray(part.estimate, dtype=np.float64)
    reps = part.replicates.reshape(part.n_boot, -1)
    lows = np.full(reps.shape[1], np.nan)
    highs = np.full(reps.shape[1], np.nan)
    if method == "bca" and part.jackknife is None:
        raise ValueError("BCa needs the leave-one-cluster-out jackknife of the resamples")
    jack = None if part.jackknife is None else part.jackknife.reshape(part.jackknife.shape[0], -1)
    flat = est.reshape(-1)
    for j in range(reps.shape[1]):
        if method == "bca":
            assert jack is not None
            lows[j], highs[j] = _bca_bounds(reps[:, j], flat[j], jack[:, j], alpha)
        else:
            r = reps[:, j][np.isfinite(reps[:, j])]
            if r.size:
                lows[j], highs[j] = np.quantile(r, [alpha / 2, 1 - alpha / 2])
    return lows.reshape(est.shape), highs.reshape(est.shape)


def _bca_bounds(
    reps: np.ndarray, estimate: float, jack: np.ndarray, alpha: float
) -> tuple[float, float]:
    """BCa bounds of one scalar statistic (NaN when the correction is undefined)."""
    reps = reps[np.isfinite(reps)]
    jack = jack[np.isfinite(jack)]
    if not reps.size or not np.isfinite(estimate) or jack.size < 2:
        return np.nan, np.nan
    p0 = (np.sum(reps < estimate) + 0.5 * np.sum(reps == estimate)) / reps.size
    if p0 <= 0.0 or p0 >= 1.0:  # every replicate on one side: z0 is infinite
        return np.nan, np.nan
    z0 = ndtri(p0)
    d = jack.mean() - jack
    denom = 6.0 * np.sum(d**2) ** 1.5
    a = np.sum(d**3) / denom if denom > 0 else 0.0
    bounds = []
    for z in (ndtri(alpha / 2), ndtri(1 - alpha / 2)):
        adj = ndtr(z0 + (z0 + z) / (1.0 - a * (z0 + z)))
        bounds.append(float(np.quantile(reps, adj)))
    return bounds[0], bounds[1]


def resample_p_value(part: BootstrapResult, null: float) -> float:
    """Two-sided p-value of ``null`` from the resamples that give a percentile interval.

    ``p = 2 * min(share of resamples with theta* <= null, share with theta* >= null)``,
    floored at ``1 / B`` (no resample can show a smaller p: at the floor it is an upper
    bound) and capped at 1; ``B`` counts the resamples on which the statistic is defined, as
    the interval does. It inverts the percentile interval: at level ``1 - alpha`` the interval
    excludes ``null`` exactly when ``p < alpha`` (up to the quantile interpolation), so a
    record's p-value and interval cannot tell different stories. NaN when no resample is
    defined.
    """
    reps = np.asarray(part.replicates, dtype=np.float64).reshape(-1)
    reps = reps[np.isfinite(reps)]
    if not reps.size or not np.isfinite(null):
        return float("nan")
    low_share = float(np.mean(reps <= null))
    high_share = float(np.mean(reps >= null))
    return float(min(1.0, max(2.0 * min(low_share, high_share), 1.0 / reps.size)))


@dataclass(frozen=True)
class Reading:
    """An interval read off a statistic's resamples, and how to test a value on the same."""

    interval: Interval
    #: the percentile part a resample test reads, or the variance and df of a t test
    part: BootstrapResult | None = None
    variance: float | None = None
    df: float | None = None
    seed: int | None = None

    def test(self, null: float) -> tuple[float, bool, str] | None:
        """(p, whether p is an upper bound, the test's sentence), or None (no test here)."""
        if self.part is not None:
            p = resample_p_value(self.part, null)
            if not math.isfinite(p):
                return None
            n_valid = int(self.part.n_valid)
            text = (
                f"test of {null:g}: two-sided p = 2 x the smaller share of the {n_valid} "
                f"resamples on either side of {null:g}, from the same resamples as the "
                f"interval (at the floor 1/B it is an upper bound, printed < 1/B)"
            )
            if self.interval.method == "bca":
                text += (
                    "; the p-value inverts the percentile interval, so with the BCa interval "
                    f"printed here the two {DISAGREEMENT_EXPLAINED} near the boundary"
                )
            return p, p <= 1.0 / n_valid, text
        if self.variance is not None and self.variance > 0 and self.df is not None:
            z = abs(self.interval.value - null) / math.sqrt(self.variance)
            p = float(min(1.0, 2.0 * scipy_stats.t.sf(z, self.df)))
            text = (
                f"test of {null:g}: two-sided t test with the interval's variance and degrees "
                "of freedom"
            )
            return p, False, text
        return None


def part_variance(part: BootstrapResult) -> tuple[float, int]:
    """(variance, levels or resamples it rests on) of a part: the bootstrap variance of its
    defined replicates, or the delete-one jackknife variance of its defined values (within
    strata where its clusters lie in strata: the sum over strata of
    ``(g_h - 1) / g_h * sum (theta_i - mean_h)^2``)."""
    if part.is_jackknife:
        values = np.asarray(part.jackknife, dtype=np.float64).reshape(-1)
        strata = (
            np.zeros(values.size, dtype=np.int64)
            if part.cluster_strata is None
            else np.asarray(part.cluster_strata)
        )
        ok = np.isfinite(values)
        values, strata = values[ok], strata[ok]
        if values.size < 2:
            return float("nan"), int(values.size)
        total = 0.0
        for h in np.unique(strata):
            v = values[strata == h]
            if v.size >= 2:
                total += (v.size - 1) / v.size * float(np.sum((v - v.mean()) ** 2))
        return total, int(values.size)
    reps = np.asarray(part.replicates, dtype=np.float64).reshape(-1)
    reps = reps[np.isfinite(reps)]
    if reps.size < 2:
        return float("nan"), int(reps.size)
    return float(np.var(reps, ddof=1)), int(reps.size)


def _df_of(part: BootstrapResult) -> float:
    """Degrees of freedom of one factor: levels - 1, or levels - strata within strata."""
    return float(max(1, part.n_clusters - (part.n_strata if part.stratified_by else 1)))


def _undefined(value: float, level: float, why: str) -> Interval:
    return Interval(value, None, None, level, NOT_ESTIMABLE, f"{NOT_ESTIMABLE}: {why}")


def _single_bootstrap(res: Resamples) -> BootstrapResult | None:
    """The one bootstrapped factor a percentile interval is read from, if the design has
    just one (a one-way design, or a declared design with a single random factor)."""
    if len(res.parts) == 1 and not res.parts[0].is_jackknife:
        return res.parts[0]
    return None


def read_interval(
    res: Resamples,
    settings: StatsSettings,
    units: int | None,
    n: int,
    limits: tuple[float, float] | None = None,
) -> Reading:
    """The interval of a scalar statistic under its design (the rule of the module docstring);
    a t interval is clipped to ``limits``; a share (``units`` given) gets Korn-Graubard's."""
    value = float(res.estimate)
    level = settings.ci_level
    single = _single_bootstrap(res)
    # the design's variance (for the exact rule and the t interval)
    if single is not None:
        n_valid = int(single.n_valid)
        if n_valid < max(2, single.n_boot // 2):
            return Reading(
                _undefined(
                    value,
                    level,
                    f"the statistic is undefined on {single.n_boot - n_valid} of the "
                    f"{single.n_boot} resamples",
                ),
                seed=settings.seed,
            )
        variance, df = part_variance(single)[0], None
    else:
        variance, df, note = _combined_variance(res)
    if units is not None and (value in (0.0, 1.0) or units < MIN_UNITS):
        return Reading(_exact_share(value, variance, units, n, level), seed=settings.seed)
    if not (math.isfinite(variance) and variance > 0):
        return Reading(
            _undefined(
                value,
                level,
                "the statistic takes the same value on every resample of its design (a "
                "rater who gives one label, say), so no interval can be read",
            ),
            seed=settings.seed,
        )
    if single is not None:
        return _percentile_reading(single, value, settings)
    assert df is not None
    if units is not None:
        return Reading(
            _design_share(value, variance, df, n, level, note),
            variance=variance,
            df=df,
            seed=settings.seed,
        )
    half = float(scipy_stats.t.ppf(1 - (1 - level) / 2, df)) * math.sqrt(variance)
    low, high = value - half, value + half
    text = (
        f"{level:.0%} CI: t interval ({df:.1f} degrees of freedom) from the design's variance, "
        f"{note}"
    )
    if limits is not None and (low < limits[0] or high > limits[1]):
        low, high = max(low, limits[0]), min(high, limits[1])
        text += f"; clipped to the statistic's range [{limits[0]:g}, {limits[1]:g}]"
    return Reading(
        Interval(value, low, high, level, "t", text),
        variance=variance,
        df=df,
        seed=settings.seed,
    )


def _combined_variance(res: Resamples) -> tuple[float, float, str]:
    """(variance, degrees of freedom, sentence) of a design of several parts.

    Row factors add (the cells subtract: Cameron, Gelbach and Miller); a negative sum of a
    crossed design falls back to its larger one-way variance; the annotators' net variance
    (the inclusion-exclusion of their clusterings and, for a group mean of pairwise
    statistics, of the rater pairs their deletions count twice: a variance component
    truncated at zero) adds on top. The degrees of freedom are the fewest levels of any
    random factor less one (:func:`_df_of`), except that with people they are
    Satterthwaite's for the rows' and the people's parts (:func:`_people_df`): never fewer
    than the fewest levels less one nor more than the rows' fewest levels less one; for a
    group mean of pairwise statistics with a positive people's net, Satterthwaite's over the
    net's own terms (:func:`_pairwise_people_df`).
    """
    rows = [p for p in res.parts if not _people(p)]
    people = [p for p in res.parts if _people(p)]
    # the random factors resampled on their own: the row factors' positive parts, and the
    # annotators (the factor with the fewest levels among them sets the t interval's df)
    positive_rows = [p for p in rows if p.sign > 0]
    annotators = next((p for p in people if p.cluster == "annotators"), None)
    fewest = min(positive_rows + ([annotators] if annotators else []), key=_df_of)
    pieces = []
    v_rows = 0.0
    for p in rows:
        v, b = part_variance(p)
        v_rows += p.sign * v
        how = (
            f"delete-one jackknife over {p.n_clusters} {p.cluster}"
            if p.is_jackknife
            else f"cluster bootstrap over {p.n_clusters} {p.cluster}{p.strata_phrase()} "
            f"(B={p.n_boot}{_dropped(p)})"
        )
        pieces.append(("minus " if p.sign < 0 else "") + how)
    crossed = any(p.sign < 0 for p in rows)
    note = ""
    if crossed:
        one_way = max(part_variance(p)[0] for p in positive_rows)
        note = " (two-way cluster variance, Cameron-Gelbach-Miller)"
        if not v_rows > 0:
            v_rows = one_way
            note = " (the two-way variance was not positive: the larger one-way variance)"
    text = "; ".join(pieces) + note
    total = v_rows
    v_annotators = 0.0
    v_people = 0.0
    if people:
        words = []
        for p in people:
            v, _ = part_variance(p)
            v_people += p.sign * v
            if p is annotators:
                v_annotators = v
            words.append(("minus " if p.sign < 0 else "") + f"{p.n_clusters} {p.cluster}")
        text += (
            "; plus the annotators' variance net of the item noise their deletions also carry "
            "(Cameron-Gelbach-Miller inclusion-exclusion of delete-one jackknife variances: "
            + ", ".join(words)
            + (
                "; a rater pair, deleted with either of its annotators, enters with the "
                "opposite sign"
                if any(_pairs(p) for p in people)
                else ""
            )
            + "; a variance component, truncated at zero"
            + (", here zero)" if v_people <= 0 else ")")
        )
        total += max(v_people, 0.0)
    if not total > 0:  # every part's variance was zero or undefined
        total = max(part_variance(p)[0] for p in res.parts if p.sign > 0)
        text += " (the combined variance was not positive: the largest one-way variance)"
    df = _df_of(fewest)
    if annotators is None or not positive_rows:
        return total, df, f"{text}; {_df_phrase(fewest)}"
    rows_fewest = min(positive_rows, key=_df_of)
    if v_people > 0 and any(_pairs(p) for p in people):
        floor = min(PAIRWISE_MIN_DF, df)
        pairwise_df = _pairwise_people_df(total, v_rows, rows_fewest, people, floor, df)
        return total, pairwise_df, f"{text}; {_pairwise_phrase(pairwise_df, floor, rows_fewest)}"
    people_df = _people_df(total, v_rows, rows_fewest, v_annotators, annotators, df)
    if people_df == df:
        return total, df, f"{text}; {_df_phrase(fewest)}"
    return total, people_df, f"{text}; {_satterthwaite_phrase(people_df, annotators, rows_fewest)}"


def _people_df(
    total: float,
    v_rows: float,
    rows_fewest: BootstrapResult,
    v_annotators: float,
    annotators: BootstrapResult,
    fewest_df: float,
) -> float:
    """Satterthwaite's degrees of freedom of the rows' variance plus the people's.

    The people's net variance is the annotators' delete-one jackknife variance less the
    item noise its deletions carry (parts with hundreds of levels, known well); its noise is
    that of the annotators' jackknife, on ``m - 1`` degrees of freedom, however small the
    net. So each term enters Satterthwaite's sum with the variance that carries its noise:
    the rows' variance on the rows' fewest levels less one, the annotators' own jackknife
    variance on ``m - 1``. Where the people's part is large, this comes close to ``m - 1``
    (below it where the net is small beside the annotators' jackknife: then the interval
    keeps ``fewest_df``, the fewest levels less one, as Cameron, Gelbach and Miller read a
    cluster variance). Where the rows carry nearly all of the variance and the annotators'
    jackknife is small beside them, a t quantile of ``m - 1`` would make the interval wider
    than the rows' many levels warrant: the df move towards the rows', never past them.
    """
    df_rows = _df_of(rows_fewest)
    noise = v_rows**2 / df_rows + v_annotators**2 / _df_of(annotators)
    if not (math.isfinite(noise) and noise > 0 and total > 0):
        return fewest_df
    return float(min(max(total**2 / noise, fewest_df), max(df_rows, fewest_df)))


#: the fewest degrees of freedom a pairwise group mean's people's net is read with
PAIRWISE_MIN_DF = 3.0


def _pairwise_people_df(
    total: float,
    v_rows: float,
    rows_fewest: BootstrapResult,
    people: Sequence[BootstrapResult],
    floor: float,
    fewest_df: float,
) -> float:
    """Satterthwaite's degrees of freedom of the rows' variance plus a pairwise group mean's
    people's net, each of the net's jackknife variances on its own levels less one.

    For a group mean of pairwise statistics the people's net is the annotators' jackknife
    variance less the rater pairs' (a pair deleted with either of its annotators), two
    variances of about the same size on few levels (``m - 1`` and ``m (m - 1) / 2 - 1``),
    so the net is much noisier than the annotators' jackknife alone: the ``m - 1`` floor of
    :func:`_people_df` made these intervals under-cover in the coverage study, whose widths
    varied across worlds like a variance on about 3 degrees of freedom
    (``benchmarks/bench_people_parts.py``). Satterthwaite's sum over a linear combination
    with negative coefficients (Satterthwaite 1946) counts each term's noise whatever its
    sign; it is floored at ``floor``, :data:`PAIRWISE_MIN_DF` (or the design's fewest
    levels less one, ``fewest_df``, if fewer), below which a t quantile grows without
    bound while the widths the study saw do not call for it, and capped at the rows' fewest
    levels less one.
    """
    df_rows = _df_of(rows_fewest)
    noise = v_rows**2 / df_rows + sum(part_variance(p)[0] ** 2 / _df_of(p) for p in people)
    if not (math.isfinite(noise) and noise > 0 and total > 0):
        return fewest_df
    return float(min(max(total**2 / noise, floor), max(df_rows, floor)))


def _pairwise_phrase(df: float, floor: float, rows: BootstrapResult) -> str:
    """Why a pairwise group mean with people has the degrees of freedom it has."""
    return (
        f"degrees of freedom: Satterthwaite's for the rows' variance (its fewest levels: "
        f"{rows.n_clusters} {rows.cluster}) and each of the people's jackknife variances on "
        f"its levels less one (the rater pairs' jackknife, subtracted, is about as noisy as "
        f"the annotators'), {df:.1f}, at least {floor:g}"
    )


def _satterthwaite_phrase(df: float, annotators: BootstrapResult, rows: BootstrapResult) -> str:
    """Why a design with people has the degrees of freedom it has (:func:`_people_df`)."""
    return (
        f"degrees of freedom: Satterthwaite's for the rows' variance (its fewest levels: "
        f"{rows.n_clusters} {rows.cluster}) and the people's ({annotators.n_clusters} "
        f"annotators, whose jackknife variance carries its noise), {df:.1f}, between the "
        "annotators' and the rows' fewest levels less one"
    )


def _df_phrase(part: BootstrapResult) -> str:
    """Why a t interval has the degrees of freedom it has (the design's fewest levels)."""
    within = f" in {part.n_strata} strata" if part.stratified_by and part.n_strata > 1 else ""
    less = "less its strata" if part.stratified_by and part.n_strata > 1 else "less one"
    return (
        f"degrees of freedom: the fewest levels of a random factor, {part.n_clusters} "
        f"{part.cluster}{within}, {less} (Cameron, Gelbach and Miller 2011)"
    )


def _dropped(part: BootstrapResult) -> str:
    n_valid = int(part.n_valid)
    left = part.n_boot - n_valid
    return f", {left} resamples where it is undefined dropped" if left else ""


def _percentile_reading(part: BootstrapResult, value: float, settings: StatsSettings) -> Reading:
    """Percentile or BCa bounds of the one bootstrapped factor (BCa undefined: percentile)."""
    level = settings.ci_level
    method = settings.ci_method
    note = ""
    low, high = percentile_bounds(part, level, method)
    if method == "bca" and not (np.isfinite(low) and np.isfinite(high)):
        low, high = percentile_bounds(part, level, "percentile")
        note = " (BCa undefined here: all resamples on one side or no jackknife; percentile)"
    used = "bca" if method == "bca" and not note else "percentile"
    lo, hi = finite_or_none(float(low)), finite_or_none(float(high))
    if lo is None or hi is None:
        return Reading(
            _undefined(value, level, "the interval's bounds are undefined"), seed=part.seed
        )
    if lo == hi:
        return Reading(
            _undefined(
                value,
                level,
                "the resamples' quantiles coincide (the statistic barely moves across "
                "resamples), so no interval of positive width can be read",
            ),
            seed=part.seed,
        )
    text = (
        f"{level:.0%} CI: cluster bootstrap over {part.cluster} ({part.n_clusters})"
        f"{part.strata_phrase()}, B={part.n_boot}, {'BCa' if used == 'bca' else 'percentile'}"
        f"{note}{_dropped(part)}"
    )
    return Reading(Interval(value, lo, hi, level, used, text), part=part, seed=part.seed)


def exact_share(successes: int, n: int, level: float) -> Interval:
    """Clopper-Pearson interval of ``successes / n`` independent units (exact)."""
    low, high = clopper_pearson(successes, n, level)
    text = f"{level:.0%} CI: Clopper-Pearson (exact) on {n} independent units"
    return Interval(successes / n, low, high, level, "exact", text, n=n, exact=True)


def _exact_share(value: float, variance: float, units: int, n: int, level: float) -> Interval:
    """Clopper-Pearson on the design's effective number of units (Korn-Graubard)."""
    if value in (0.0, 1.0) or not (math.isfinite(variance) and variance > 0):
        n_eff = float(units)
        how = f"the design's {units} units"
    else:
        n_eff = min(float(n), value * (1.0 - value) / variance)
        how = (
            f"{n_eff:.1f} effective units (Korn-Graubard: p(1-p) over the design's variance, "
            f"{units} units of the design)"
        )
    low, high = clopper_pearson(value * n_eff, n_eff, level)
    why = "a share at 0 or 1" if value in (0.0, 1.0) else f"a share on fewer than {MIN_UNITS} units"
    text = f"{level:.0%} CI: Clopper-Pearson (exact) on {how}, {why}"
    return Interval(value, low, high, level, "exact", text, exact=True)


def _design_share(
    value: float, variance: float, df: float, n: int, level: float, note: str
) -> Interval:
    """Korn and Graubard's (1998) interval of a share under a design of several parts:
    Clopper-Pearson on the design's effective number of units ``p (1 - p) / v`` (at most the
    observations), scaled by ``(z / t_df)^2`` so that its width carries the design's degrees
    of freedom as the t interval's does. Unlike a symmetric t interval it follows a share's
    skew near 0 or 1, where the coverage worlds showed the t interval missing on the side
    away from the boundary (the standard interval for design-based proportions in the
    National Center for Health Statistics' presentation standards, Parker et al. 2017)."""
    alpha = (1 - level) / 2
    scale = (float(ndtri(1 - alpha)) / float(scipy_stats.t.ppf(1 - alpha, df))) ** 2
    n_eff = min(float(n), value * (1.0 - value) / variance)
    units = n_eff * scale
    low, high = clopper_pearson(value * units, units, level)
    text = (
        f"{level:.0%} CI: Korn-Graubard (Clopper-Pearson on {units:.1f} effective units: "
        f"p(1-p) over the design's variance, {n_eff:.1f} units, scaled by (z/t)^2 for "
        f"{df:.1f} degrees of freedom) from the design's variance, {note}"
    )
    return Interval(value, low, high, level, "korn-graubard", text)


# --------------------------------------------------------------------------------------
# Families of tests
# --------------------------------------------------------------------------------------


def adjusted_p_values(p: np.ndarray, method: str) -> np.ndarray:
    """Holm's step-down or Benjamini-Hochberg's step-up adjusted p-values (as statsmodels'
    ``multipletests``, which a test checks; written out because that call also runs the
    garbage collector, twice a family)."""
    p = np.asarray(p, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        stepped = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ranked))
    elif method == "fdr_bh":
        stepped = np.minimum.accumulate((m * ranked / np.arange(1, m + 1))[::-1])[::-1]
        stepped = np.minimum(1.0, stepped)
    else:
        raise ValueError(f"unknown correction {method!r}")
    out = np.empty(m)
    out[order] = stepped
    return out


def _adjust(
    pvalues: Mapping[str, tuple[float, bool]], method: str
) -> dict[str, tuple[float, bool]]:
    """Adjusted p-values and whether each is an upper bound.

    An adjusted value is a bound when it depends on a floored p-value: adjusting again with
    the floored values at their infimum (0) changes it.
    """
    keys = sorted(k for k, (p, _) in pvalues.items() if math.isfinite(p))
    if not keys:
        return {}
    p = np.array([pvalues[k][0] for k in keys])
    bound = np.array([pvalues[k][1] for k in keys])
    adjusted = adjusted_p_values(p, method)
    lowest = adjusted_p_values(np.where(bound, 0.0, p), method)
    return {k: (float(a), bool(a != b)) for k, a, b in zip(keys, adjusted, lowest, strict=True)}


# --------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------


def key_part(name: Any) -> str:
    """A rater, model or source id as a key component (whitespace is not allowed in keys)."""
    text = str(name).strip()
    if not text:
        raise ValueError("an empty rater/model/source id cannot name a record key")
    return "_".join(text.split())


def _plain(obj: Any) -> Any:
    """JSON-safe copy: numpy scalars to Python, non-finite floats to None, sorted dicts."""
    if isinstance(obj, Mapping):
        return {str(k): _plain(obj[k]) for k in sorted(obj, key=str)}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def make_records(statistics: Sequence[Statistic | None], settings: StatsSettings) -> list[Record]:
    """The records of ``statistics`` (absent ones dropped), sorted by key.

    A statistic whose value is undefined (NaN) is absent: no record, never 0 or NaN. Tests
    are adjusted within each declared family (and scope) of this call, so a family is made
    in one call.
    """
    made: list[tuple[Statistic, Reading, DesignInfo | None]] = []
    for s in statistics:
        if s is None:
            continue
        if s.by_construction:
            made.append((s, _fixed(s, settings), None))
        elif isinstance(s.estimate, Interval):
            if not math.isfinite(s.estimate.value):
                continue
            made.append((s, Reading(s.estimate), s.design))
        else:
            if np.ndim(s.estimate.estimate) != 0:
                raise ValueError(f"{s.key}: a record is a scalar (use component(i) first)")
            if not math.isfinite(float(s.estimate.estimate)):
                continue
            reading = read_interval(s.estimate, settings, s.units, s.n, s.limits)
            made.append((s, reading, s.estimate.design))
    tests: dict[str, tuple[float, bool, str]] = {}
    families: dict[tuple[str, str], dict[str, tuple[float, bool]]] = {}
    for s, reading, _ in made:
        if s.test is None:
            continue
        settings.family(s.test.family)  # declared, or an error naming the families
        if isinstance(s.estimate, Interval):
            result = None
            if s.estimate.p_value is not None:
                result = (float(s.estimate.p_value), False, str(s.extra.get("test", "")))
        else:
            if reading.interval.exact:
                raise ValueError(
                    f"{s.key}: a test needs the design's resamples, not an exact share"
                )
            result = reading.test(s.test.null)
        if result is None:
            continue
        tests[s.key] = result
        families.setdefault((s.test.family, s.test.scope), {})[s.key] = result[:2]
    adjusted: dict[str, tuple[float, bool]] = {}
    members: dict[str, list[str]] = {}
    for pvalues in families.values():
        adjusted.update(_adjust(pvalues, settings.multiple_comparisons))
        for k in pvalues:
            members[k] = sorted(pvalues)
    records = [_record(s, r, d, tests, adjusted, members, settings) for s, r, d in made]
    return sorted(records, key=lambda r: r.key)


def _fixed(s: Statistic, settings: StatsSettings) -> Reading:
    """The reading of a value fixed by construction: the value, no interval, and why."""
    if s.test is not None:
        raise ValueError(f"{s.key}: a value fixed by construction has nothing to test")
    value = s.estimate.value if isinstance(s.estimate, Interval) else s.estimate.estimate
    text = f"not estimated: {s.by_construction}, so it has no sampling error and no interval"
    return Reading(
        Interval(float(value), None, None, settings.ci_level, BY_CONSTRUCTION, text),
        seed=settings.seed,
    )


def _record(
    s: Statistic,
    reading: Reading,
    design: DesignInfo | None,
    tests: Mapping[str, tuple[float, bool, str]],
    adjusted: Mapping[str, tuple[float, bool]],
    members: Mapping[str, list[str]],
    settings: StatsSettings,
) -> Record:
    iv = reading.interval
    parts = [s.what]
    if design is not None:
        parts.append(design.sentence())
    parts.append(iv.text)
    extra: dict[str, Any] = dict(s.extra)
    if design is not None:
        extra["design"] = design.name
    if iv.exact:
        extra["exact"] = True
    if iv.method == BY_CONSTRUCTION:
        extra["by_construction"] = True
    if s.test is not None and s.key in tests:
        p, bound, text = tests[s.key]
        family = members[s.key]
        extra.update({"null": float(s.test.null), "p_value": p, "family": s.test.family})
        if text and not isinstance(s.estimate, Interval):
            extra["test"] = text
        if bound:
            extra["p_value_is_upper_bound"] = True
        if text and not isinstance(s.estimate, Interval):
            parts.append(text)
        if len(family) > 1:
            p_adj, adj_bound = adjusted[s.key]
            correction = CORRECTIONS[settings.multiple_comparisons]
            extra.update(
                {
                    "p_adjusted": p_adj,
                    "correction": settings.multiple_comparisons,
                    "family_members": family,
                }
            )
            if adj_bound:
                extra["p_adjusted_is_upper_bound"] = True
            parts.append(
                f"{correction}-adjusted within family {s.test.family} "
                f"({settings.family(s.test.family)}; {len(family)} tests)"
            )
    estimable = iv.method != NOT_ESTIMABLE
    # the parts the interval was read from, kept for paired differences between builds
    # (``recenter diff``, :func:`paired_change`); an analytic interval has none, a record that
    # states "not estimable" has no value to difference, and a value fixed by construction
    # has no sampling error to pair (it keeps no resamples and no interval)
    keeps = estimable and iv.method != BY_CONSTRUCTION and isinstance(s.estimate, Resamples)
    return Record(
        key=s.key,
        value=float(iv.value),
        fmt=s.fmt,
        method="; ".join(p for p in parts if p),
        code=s.code,
        ci_low=iv.low if estimable else None,
        ci_level=iv.level,
        ci_high=iv.high if estimable else None,
        n=int(s.n),
        unit=s.unit,
        seed=reading.seed,
        extra=_plain(extra),
        text=None if estimable else NOT_ESTIMABLE,
        resamples=stored(s.estimate) if keeps else None,
    )


# --------------------------------------------------------------------------------------
# Kept resamples and the paired difference of two builds' records
# --------------------------------------------------------------------------------------


def stored(res: Resamples) -> kept.Resamples:
    """A scalar statistic's resamples as its record keeps them (:mod:`analysis.resamples`)."""
    return kept.Resamples(
        float(res.estimate),
        tuple(
            kept.Part(
                cluster=p.cluster,
                digest=p.weights_digest,
                replicates=np.asarray(p.replicates, dtype=np.float64).reshape(-1),
                jackknife=None
                if p.jackknife is None
                else np.asarray(p.jackknife, dtype=np.float64).reshape(-1),
                n_clusters=int(p.n_clusters),
                sign=int(p.sign),
                stratified_by=p.stratified_by,
                n_strata=int(p.n_strata),
                seed=p.seed,
                cluster_strata=None if p.cluster_strata is None else np.asarray(p.cluster_strata),
                levels=p.levels,
            )
            for p in res.parts
        ),
    )


#: the streams a design's factors draw on (:data:`analysis.stats.resampling.STREAMS`)
_STREAMS = (0, 1, 2)


def _people(part: kept.Part | BootstrapResult) -> bool:
    """An annotator clustering (annotators, or their cells with users or prompts, or rater
    pairs): a jackknife whose deleted levels are named. A rater pair's deletions (the dyadic
    correction of a pairwise statistic's group mean) belong with the people: they undo the
    pair counted twice by its two annotators' deletions, not a part of the rows' variance."""
    return "annotator" in part.cluster or _pairs(part)


def _pairs(part: kept.Part | BootstrapResult) -> bool:
    """A rater-pair clustering (the dyadic correction of a pairwise statistic's group mean,
    :func:`analysis.stats.resampling.pairwise_kappa`)."""
    return "rater-pair" in part.cluster


def shared_prefix(a: kept.Part, b: kept.Part) -> int | None:
    """How many resamples two bootstrap parts with other numbers of resamples share: the
    shorter one's, when both digests are reproduced by one seed's stream (the same seed,
    stream, clusters and strata: :func:`analysis.stats.bootstrap.redrawn_digests`), so that
    the shorter side's draws are provably the longer side's first; None when they are not."""
    if a.seed is None or a.seed != b.seed or a.n_clusters != b.n_clusters:
        return None
    strata_a, strata_b = a.cluster_strata, b.cluster_strata
    if (strata_a is None) != (strata_b is None) or (
        strata_a is not None and not np.array_equal(strata_a, strata_b)
    ):
        return None
    for stream in _STREAMS:
        digests = redrawn_digests(a.n_clusters, (a.n_boot, b.n_boot), a.seed, stream, strata_a)
        if digests == [a.digest, b.digest]:
            return min(a.n_boot, b.n_boot)
    return None


@dataclass(frozen=True)
class Paired:
    """Two records' parts matched resample by resample and deleted level by deleted level:
    the change's parts, the resamples they use and what the matching did."""

    change: Resamples
    n_boot: int
    notes: tuple[str, ...]


def _row_change(a: kept.Part, b: kept.Part) -> tuple[kept.Part, str] | str:
    """The change on a row factor's resamples (users, prompts, cells: bootstrapped, or a
    few-level factor's jackknife), with a note, or why the two are not the same draws."""
    if a.n_clusters != b.n_clusters or a.n_deleted != b.n_deleted:
        return (
            f"other levels of {a.cluster} ({a.n_clusters} vs {b.n_clusters}, {a.n_deleted} vs "
            f"{b.n_deleted} deleted: other data, or a statistic over other {a.cluster})"
        )
    if (a.n_boot == 0) != (b.n_boot == 0):
        return f"another design ({a.n_boot} vs {b.n_boot} resamples of {a.cluster})"
    m, note = a.n_boot, ""
    if a.n_boot != b.n_boot:
        found = shared_prefix(a, b)
        if found is None:
            return (
                f"other draws of {a.cluster} ({a.n_boot} vs {b.n_boot} resamples that are not "
                "the first ones of one seed's stream: another seed, other clusters or strata)"
            )
        m = found
        note = (
            f"{a.cluster}: the first {m} of {a.n_boot} vs {b.n_boot} resamples (one seed's "
            "stream: the shorter side's draws are the longer side's first)"
        )
    elif a.digest != b.digest:
        return (
            f"other draws of {a.cluster} (resample-weight digests {a.digest[:10]} and "
            f"{b.digest[:10]}: other data, clusters or seed)"
        )
    jack = None if a.jackknife is None or b.jackknife is None else b.jackknife - a.jackknife
    part = kept.Part(
        cluster=a.cluster,
        digest=a.digest if m == a.n_boot else b.digest,
        replicates=b.replicates[:m] - a.replicates[:m],
        jackknife=jack,
        n_clusters=a.n_clusters,
        sign=a.sign,
        stratified_by=a.stratified_by,
        n_strata=a.n_strata,
        seed=a.seed,
        cluster_strata=a.cluster_strata,
    )
    return part, note


def _people_change(
    name: str, a: kept.Part | None, b: kept.Part | None, est_a: float, est_b: float
) -> tuple[kept.Part, str] | str:
    """The change on an annotator clustering's deletions, matched by the deleted levels'
    names, or why they cannot be matched.

    A level only one side deletes (an annotator, a rater pair or their part of a user that
    enters one side's statistic only: another rater-pair subset) leaves the other side's
    statistic as it is, so that side's value there is its estimate; a side without the
    clustering at all deletes nothing that moves it. The change's jackknife is then over the
    levels whose deletion moves either side, the same rule each side's own variance follows.
    """
    present = [p for p in (a, b) if p is not None]
    if any(p.levels is None for p in present):
        if a is not None and b is not None and a.n_deleted == b.n_deleted:
            # an older build: the same number of deletions of the same clustering, in the
            # record maker's order, is all there is to go by; the digest ties them to the
            # same row draws
            if a.digest == b.digest:
                jack = b.jackknife - a.jackknife  # type: ignore[operator]
                return replace(a, jackknife=jack), ""
        return (
            f"the annotators' deletions of {name} cannot be matched ("
            + " vs ".join(str(p.n_deleted) for p in present)
            + " deleted levels, not named in a build from before the deleted levels were kept)"
        )
    if a is not None and b is not None and a.sign != b.sign:
        return f"another design ({name} enters with signs {a.sign} and {b.sign})"
    order: dict[str, None] = {}
    for p in present:
        order.update(dict.fromkeys(p.levels or ()))
    names = list(order)

    def values(p: kept.Part | None, estimate: float) -> np.ndarray:
        out = np.full(len(names), estimate, dtype=np.float64)
        if p is not None and p.jackknife is not None:
            index = {n: i for i, n in enumerate(names)}
            out[[index[n] for n in p.levels or ()]] = p.jackknife
        return out

    strata = None
    if any(p.cluster_strata is not None for p in present):
        strata = np.zeros(len(names), dtype=np.int64)
        for p in present:
            if p.cluster_strata is not None:
                index = {n: i for i, n in enumerate(names)}
                strata[[index[n] for n in p.levels or ()]] = p.cluster_strata
    first = present[0]
    part = kept.Part(
        cluster=name,
        digest=first.digest,
        replicates=np.zeros(0),
        jackknife=values(b, est_b) - values(a, est_a),
        n_clusters=len(names),
        sign=first.sign,
        cluster_strata=strata,
        levels=tuple(names),
    )
    set_a = set(a.levels or ()) if a is not None else set()
    set_b = set(b.levels or ()) if b is not None else set()
    note = ""
    if set_a != set_b:
        note = (
            f"{name}: {len(names)} deleted levels matched by name ({len(set_a - set_b)} only "
            f"in A, {len(set_b - set_a)} only in B: a deletion that does not touch one side "
            "leaves its value there)"
        )
    return part, note


def pair_resamples(a: kept.Resamples, b: kept.Resamples) -> Paired | str:
    """``B - A`` on the same resamples of one design, or why the two records are not that.

    Two records pair when they are statistics of the same resampled data: the same row
    factors (users, prompts, their cells) with the same levels, each drawn with the same
    resample weights (equal digests), or with other numbers of resamples whose draws are
    provably one seed's stream (the first ``min(B)`` are shared: :func:`shared_prefix`); and
    annotator deletions matched by name (:func:`_people_change`). Whether the two statistics
    are the same function (another rater-pair subset, another prompt's votes) does not
    matter: on each shared resample both are evaluated on the same draw of the same units,
    so their difference there is one resample of the difference statistic. Whether both
    hold the same *data* the digests cannot say (they count clusters and draws): the caller
    checks that (``recenter diff`` compares the builds' ``data`` config).
    """
    rows_a = [p for p in a.parts if not _people(p)]
    rows_b = [p for p in b.parts if not _people(p)]
    if [p.cluster for p in rows_a] != [p.cluster for p in rows_b]:
        return (
            f"another design (factors {', '.join(p.cluster for p in rows_a) or 'none'} vs "
            f"{', '.join(p.cluster for p in rows_b) or 'none'})"
        )
    parts, notes, n_boot = [], [], []
    for pa, pb in zip(rows_a, rows_b, strict=True):
        found = _row_change(pa, pb)
        if isinstance(found, str):
            return found
        parts.append(found[0])
        n_boot.append(found[0].n_boot)
        notes.append(found[1])
    people_a = {p.cluster: p for p in a.parts if _people(p)}
    people_b = {p.cluster: p for p in b.parts if _people(p)}
    for name in dict.fromkeys([*people_a, *people_b]):
        found = _people_change(name, people_a.get(name), people_b.get(name), a.estimate, b.estimate)
        if isinstance(found, str):
            return found
        parts.append(found[0])
        notes.append(found[1])
    change = kept.Resamples(b.estimate - a.estimate, tuple(parts))
    return Paired(_restored(change), max(n_boot, default=0), tuple(n for n in notes if n))


def _restored(res: kept.Resamples) -> Resamples:
    """Kept resamples as the interval reader reads them (their design is not restated)."""
    return Resamples(
        np.asarray(res.estimate),
        tuple(
            BootstrapResult(
                estimate=np.asarray(res.estimate),
                replicates=p.replicates,
                jackknife=p.jackknife,
                n_clusters=p.n_clusters,
                cluster=p.cluster,
                seed=p.seed,
                weights_digest=p.digest,
                stratified_by=p.stratified_by,
                n_strata=p.n_strata,
                sign=p.sign,
                cluster_strata=p.cluster_strata,
                levels=p.levels,
            )
            for p in res.parts
        ),
        None,
    )


def paired_change(paired: Paired, settings: StatsSettings) -> Reading:
    """The interval of ``B - A`` from two records' parts matched by :func:`pair_resamples`.

    The change's parts (each shared bootstrap resample, each deleted level) are read by
    :func:`read_interval`, the reader of every record, so the change of two variants that
    share the data and the design gets the interval the same statistic computed on the
    differenced data would get. A change that is the same on every resample where both are
    defined (a build against itself: 0 everywhere) has no spread to read: its interval is
    that change at both ends.
    """
    diff = paired.change
    change = float(diff.estimate)
    values = [
        v[np.isfinite(v)] for p in diff.parts for v in (p.replicates, p.jackknife) if v is not None
    ]
    if any(v.size for v in values) and all(np.all(v == change) for v in values):
        single = _single_bootstrap(diff)
        text = (
            f"{settings.ci_level:.0%} CI: the change is {change:g} on every resample of the "
            "design, so its interval is that value at both ends"
        )
        return Reading(
            Interval(change, change, change, settings.ci_level, "constant", text),
            part=single,
            seed=settings.seed,
        )
    return read_interval(diff, settings, None, 0)
