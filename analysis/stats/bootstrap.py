"""Cluster bootstrap confidence intervals, vectorized: resample counts, not loops.

Why this shape
    The study's items are not independent: one user's attributes are judged together, and
    one prompt is paired with several users. Intervals therefore resample *clusters* (users
    or prompts; each item its own cluster if none is given) with replacement. A resample is a
    vector of counts (how often each cluster was drawn), so every statistic that is a
    function of sums over items (rates, differences of means, precision/recall/F1, Cohen's
    kappa of a 2x2 or qxq table, Fleiss' kappa, AC1, Krippendorff's alpha) is evaluated for
    all ``B`` resamples at once as ``counts (B x C) @ per-cluster sums (C x k)``. For the
    study's pairwise kappa matrix this is one matrix product giving every resample's
    contingency table of every rater pair (:func:`bootstrap_pairwise_kappa`).

Resamples and seeds
    ``seed`` (an int, or a ``numpy.random.Generator``) is split with ``SeedSequence.spawn``
    into an item stream and a rater stream. For a given seed and number of clusters the
    cluster counts are identical in every function here, whatever else is computed, so two
    results with the same :attr:`BootstrapResult.weights_digest` come from the same
    resamples and :func:`paired_difference` of them is a paired bootstrap. Counts are drawn
    as ``C`` uniform cluster indices per resample (``Generator.integers``) and tallied; the
    draw is chunked over resamples without changing the stream.

Strata
    Where the design fixed how many clusters come from each group (the study took a set
    number of users from each source: chat logs and each synthetic benchmark), a resample
    keeps those numbers: ``strata`` gives each observation's stratum, and the clusters of
    each stratum are drawn with replacement within it (Rao and Wu's rescaling bootstrap:
    ``n_h - 1`` draws of the stratum's ``n_h`` clusters, each weighing ``n_h / (n_h - 1)``,
    which keeps small strata's variance unbiased; :func:`_draw_counts`). An unstratified
    resample lets the mix of groups vary, so a statistic pooled over groups that differ gets
    an interval wider than its sampling spread. One stratum is the unstratified draw, and so
    is a set of strata of which one has a single cluster (nothing to resample within it: it
    would add no spread at all); a result's sentence says which draw it had.

Intervals
    :meth:`BootstrapResult.interval` gives percentile intervals or BCa intervals (Efron
    1987; DiCiccio & Efron 1996), with the acceleration from the leave-one-cluster-out
    jackknife and the bias correction ``z0 = Phi^-1((#{theta* < theta} + #{theta* ==
    theta} / 2) / B)`` (ties counted half, which matters for discrete statistics).
    Resamples on which the statistic is undefined (NaN, e.g. a kappa with one category) are
    dropped from the quantiles and counted in ``n_valid``; it is never imputed.

Tests
    :func:`resample_p_value` gives a record's two-sided p-value of a null value from the
    same resamples as its interval (the inverted percentile interval), so a p-value never
    treats clustered items as independent while the interval resamples users.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.special import ndtr, ndtri

from analysis.stats.agreement import (
    AgreementError,
    Level,
    LongCodes,
    RatingMatrix,
    Weights,
    additive_form,
    group_key,
    kappa_from_tables,
    long_codes,
    rating_matrix,
)
from analysis.stats.interval import Interval, finite_or_none

__all__ = [
    "BootstrapResult",
    "bootstrap_sentence",
    "PairwiseKappaBootstrap",
    "resample_counts",
    "bootstrap_statistic",
    "bootstrap_proportion",
    "bootstrap_mean",
    "bootstrap_ratio",
    "bootstrap_paired_difference",
    "bootstrap_precision_recall_f1",
    "bootstrap_agreement",
    "bootstrap_pairwise_kappa",
    "paired_difference",
    "resample_p_value",
]

SeedLike = int | np.random.Generator
Method = Literal["percentile", "bca"]
#: upper bound on the cells of one chunk of resample counts (memory, not results)
_MAX_CELLS = 4_000_000


# --------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------


def bootstrap_sentence(result: BootstrapResult, level: float, method: str) -> str:
    """How a percentile/BCa interval of a scalar ``result`` was obtained, as a record states it."""
    unit = "items" if result.cluster == "item" else f"clusters of {result.cluster}"
    kind = "BCa" if method == "bca" else "percentile"
    n_valid = int(result.n_valid)
    dropped = (
        f"; {result.n_boot - n_valid} undefined resamples dropped"
        if n_valid < result.n_boot
        else ""
    )
    return (
        f"{level:.0%} {kind} bootstrap interval, {result.n_boot} resamples of "
        f"{result.n_clusters} {unit}{result.strata_phrase()}, seed {result.seed}{dropped}"
    )


@dataclass(frozen=True)
class BootstrapResult:
    """Point estimate, bootstrap replicates and jackknife values of a statistic.

    ``estimate`` has the statistic's shape ``S`` (``()`` for a scalar), ``replicates`` is
    ``(B, *S)`` and ``jackknife`` (leave one cluster out, for BCa) is ``(C, *S)`` or None
    when it is not defined (e.g. when raters were resampled too).
    """

    estimate: np.ndarray
    replicates: np.ndarray
    jackknife: np.ndarray | None
    n_clusters: int
    cluster: str
    seed: int | None
    weights_digest: str
    resampled_raters: bool = False
    weights: np.ndarray | None = field(default=None, repr=False)  # (B, C) when kept
    #: name of the stratifying column and its number of strata (None: not stratified)
    stratified_by: str | None = None
    n_strata: int = 1

    def strata_phrase(self) -> str:
        """', within the 4 strata of source (Rao-Wu)' where resamples keep each stratum's
        clusters (:func:`_draw_counts`); empty for an unstratified draw."""
        if self.stratified_by is None:
            return ""
        return f" within the {self.n_strata} strata of {self.stratified_by} (Rao-Wu)"

    @property
    def n_boot(self) -> int:
        return int(self.replicates.shape[0])

    @property
    def n_valid(self) -> np.ndarray:
        """Resamples on which the statistic is defined (per component)."""
        return np.isfinite(self.replicates).sum(axis=0)

    def component(self, index: Any) -> BootstrapResult:
        """One component of a vector-valued statistic, as its own result."""
        return replace(
            self,
            estimate=np.asarray(self.estimate)[index],
            replicates=self.replicates[(slice(None), *np.atleast_1d(index))],
            jackknife=None
            if self.jackknife is None
            else self.jackknife[(slice(None), *np.atleast_1d(index))],
        )

    def interval(
        self, level: float = 0.95, method: Method = "percentile"
    ) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds (each of the statistic's shape)."""
        if not 0.0 < level < 1.0:
            raise ValueError(f"level must be in (0, 1), got {level}")
        alpha = 1.0 - level
        est = np.asarray(self.estimate, dtype=np.float64)
        reps = self.replicates.reshape(self.n_boot, -1)
        lows = np.full(reps.shape[1], np.nan)
        highs = np.full(reps.shape[1], np.nan)
        if method == "percentile":
            for j in range(reps.shape[1]):
                r = reps[:, j][np.isfinite(reps[:, j])]
                if r.size:
                    lows[j], highs[j] = np.quantile(r, [alpha / 2, 1 - alpha / 2])
        elif method == "bca":
            if self.jackknife is None:
                raise ValueError(
                    "BCa needs the leave-one-cluster-out jackknife, which is not defined for "
                    "this result (raters were resampled, or it was not computed); use "
                    "method='percentile'"
                )
            jack = self.jackknife.reshape(self.jackknife.shape[0], -1)
            flat_est = est.reshape(-1)
            for j in range(reps.shape[1]):
                lows[j], highs[j] = _bca_bounds(reps[:, j], flat_est[j], jack[:, j], alpha)
        else:
            raise ValueError(f"method must be 'percentile' or 'bca', got {method!r}")
        shape = est.shape
        return lows.reshape(shape), highs.reshape(shape)

    def ci(self, level: float = 0.95, method: Method = "percentile") -> Interval:
        """The interval of a scalar statistic, keeping these resamples for its tests.

        Bounds that are undefined (BCa with all resamples on one side, no defined resample)
        are ``None``; ``text`` is :func:`bootstrap_sentence`.
        """
        if np.ndim(self.estimate) != 0:
            raise ValueError(
                f"ci() is for a scalar statistic; this one has shape "
                f"{np.shape(self.estimate)} (use component(i) first)"
            )
        low, high = self.interval(level, method)
        return Interval(
            value=float(self.estimate),
            low=finite_or_none(float(low)),
            high=finite_or_none(float(high)),
            level=level,
            method=method,
            text=bootstrap_sentence(self, level, method),
            resamples=self,
        )


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


def resample_p_value(result: BootstrapResult, null: float) -> float:
    """Two-sided p-value of ``null`` from the same resamples that give the interval.

    ``p = 2 * min(share of resamples with theta* <= null, share with theta* >= null)``,
    floored at ``1 / B`` (no resample can show a smaller p) and capped at 1; ``B`` counts the
    resamples on which the statistic is defined, as the interval does. This is the test that
    inverts the percentile interval: at level ``1 - alpha`` the interval excludes ``null``
    exactly when ``p < alpha`` (up to the quantile interpolation at the boundary), so a
    record's p-value and interval cannot tell different stories, and both respect the
    resampling unit (users), unlike an item-level test. NaN when no resample is defined.
    """
    if np.ndim(result.estimate) != 0:
        raise ValueError(
            f"resample_p_value is for a scalar statistic; this one has shape "
            f"{np.shape(result.estimate)} (use component(i) first)"
        )
    reps = np.asarray(result.replicates, dtype=np.float64).reshape(-1)
    reps = reps[np.isfinite(reps)]
    if not reps.size or not np.isfinite(null):
        return float("nan")
    low_share = float(np.mean(reps <= null))
    high_share = float(np.mean(reps >= null))
    return float(min(1.0, max(2.0 * min(low_share, high_share), 1.0 / reps.size)))


def paired_difference(a: BootstrapResult, b: BootstrapResult) -> BootstrapResult:
    """``a - b`` on the same resamples: a paired bootstrap of a difference of statistics.

    Both must come from the same resamples (same seed and clusters: equal
    ``weights_digest``), e.g. two group means of one :func:`bootstrap_pairwise_kappa`.
    """
    if a.weights_digest != b.weights_digest or a.n_boot != b.n_boot:
        raise ValueError(
            "paired_difference needs two results from the same resamples (same seed, "
            f"clusters and B); digests {a.weights_digest[:12]} and {b.weights_digest[:12]}"
        )
    jack = None
    if a.jackknife is not None and b.jackknife is not None:
        jack = a.jackknife - b.jackknife
    return replace(
        a,
        estimate=np.asarray(a.estimate) - np.asarray(b.estimate),
        replicates=a.replicates - b.replicates,
        jackknife=jack,
        resampled_raters=a.resampled_raters or b.resampled_raters,
    )


# --------------------------------------------------------------------------------------
# Resampling
# --------------------------------------------------------------------------------------


def _streams(seed: SeedLike) -> tuple[np.random.Generator, np.random.Generator, int | None]:
    """Independent generators for clusters and raters, and the seed to record."""
    if isinstance(seed, np.random.Generator):
        item, rater = seed.spawn(2)
        return item, rater, None
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise TypeError(f"seed must be an int or a numpy Generator, got {seed!r}")
    item_ss, rater_ss = np.random.SeedSequence(int(seed)).spawn(2)
    return np.random.default_rng(item_ss), np.random.default_rng(rater_ss), int(seed)


def _draw_counts(
    rng: np.random.Generator, n_units: int, n_rows: int, strata: np.ndarray | None = None
) -> np.ndarray:
    """(n_rows, n_units) resample weights: each row tallies ``n_units`` uniform draws of a unit.

    With ``strata`` (a stratum code per unit, two or more strata, each of two or more units)
    the weights are Rao and Wu's (1988) rescaling bootstrap: ``n_h - 1`` of a stratum's
    ``n_h`` units are drawn with replacement among themselves and each draw weighs
    ``n_h / (n_h - 1)``, so a stratum's weights still sum to ``n_h``. Drawing ``n_h`` would
    shrink the variance by ``(n_h - 1) / n_h`` (a twentieth of the interval's width at ten
    users per source). Draw ``j`` of a row picks within the stratum of the ``j``-th slot in
    stratum order, so a row takes a fixed number of draws from the one stream and chunking
    leaves the draws unchanged.
    """
    if strata is None:
        idx = rng.integers(0, n_units, size=(n_rows, n_units))
        flat = (idx + (np.arange(n_rows) * n_units)[:, None]).ravel()
        return np.bincount(flat, minlength=n_rows * n_units).reshape(n_rows, n_units)
    order = np.argsort(strata, kind="stable")
    sizes = np.bincount(strata)
    starts = np.cumsum(sizes) - sizes
    slot = np.repeat(np.arange(sizes.size), sizes - 1)
    idx = order[starts[slot] + rng.integers(0, sizes[slot], size=(n_rows, slot.size))]
    flat = (idx + (np.arange(n_rows) * n_units)[:, None]).ravel()
    counts = np.bincount(flat, minlength=n_rows * n_units).reshape(n_rows, n_units)
    return counts * (sizes / (sizes - 1.0))[strata]


def _count_chunks(
    rng: np.random.Generator,
    n_units: int,
    n_boot: int,
    max_cells: int = _MAX_CELLS,
    width: int = 0,
    strata: np.ndarray | None = None,
) -> Iterator[np.ndarray]:
    """Resample counts in chunks of rows; ``width`` is the columns of what each chunk yields.

    A chunk's counts (rows x units) and its product with the cluster sums (rows x width)
    both stay under ``max_cells``: with a crowd the columns (rater pairs' cells) outnumber
    the clusters, and an unbounded product would be hundreds of MB per chunk. The draws
    are one stream, so the chunking never changes them.
    """
    step = max(1, max_cells // max(n_units, width, 1))
    for start in range(0, n_boot, step):
        yield _draw_counts(rng, n_units, min(step, n_boot - start), strata)


def resample_counts(n_clusters: int, n_boot: int, seed: SeedLike) -> np.ndarray:
    """(B, C) cluster counts exactly as every bootstrap here draws them for ``seed``."""
    item_rng, _, _ = _streams(seed)
    return np.vstack(list(_count_chunks(item_rng, n_clusters, n_boot)))


def _check_n_boot(n_boot: int) -> None:
    if isinstance(n_boot, bool) or not isinstance(n_boot, int | np.integer) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive int, got {n_boot!r}")


def cluster_membership(codes: np.ndarray, n_clusters: int) -> sparse.csr_matrix:
    """(clusters, observations) 0/1 matrix: ``membership @ values`` sums values per cluster.

    A cluster resample's total of any column is then ``counts @ (membership @ values)``:
    clusters, not observations, set the cost of every resample.
    """
    n_obs = len(codes)
    return sparse.csr_matrix((np.ones(n_obs), (codes, np.arange(n_obs))), shape=(n_clusters, n_obs))


def _label_codes(labels: Any, n_obs: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Codes and sorted distinct values of one label per observation (cluster, stratum).

    A label count other than ``n_obs`` or a missing label is an error naming the observation.
    """
    values = pd.Series(np.asarray(labels, dtype=object))
    if len(values) != n_obs:
        raise ValueError(f"{len(values)} {what} labels for {n_obs} observations")
    if values.isna().any():
        row = int(np.flatnonzero(values.isna().to_numpy())[0])
        raise ValueError(f"observation {row}: {what} label is missing")
    codes, ids = pd.factorize(values, sort=True)
    return codes, np.asarray(ids)


class _Clusters:
    """Cluster codes of observations, their strata, and sums over clusters."""

    def __init__(
        self,
        labels: Sequence[Any] | np.ndarray | None,
        n_obs: int,
        name: str,
        strata: Sequence[Any] | np.ndarray | pd.Series | None = None,
    ):
        if labels is None:
            self.codes = np.arange(n_obs)
            self.ids = np.arange(n_obs)
            self.name = "item"
        else:
            self.codes, self.ids = _label_codes(labels, n_obs, f"cluster ({name!r})")
            self.name = name
        self.n = len(self.ids)
        if self.n == 0:
            raise ValueError("no observations to resample")
        self._g = cluster_membership(self.codes, self.n)
        self.strata, self.stratified_by, self.n_strata = self._strata(strata, n_obs)

    def _strata(
        self, strata: Sequence[Any] | np.ndarray | pd.Series | None, n_obs: int
    ) -> tuple[np.ndarray | None, str | None, int]:
        """Stratum code per cluster (None: unstratified), the strata's name and number.

        A named Series names the strata (``source``); a cluster must lie in one stratum.
        One stratum, or a stratum of one cluster, gives the unstratified draw.
        """
        if strata is None:
            return None, None, 1
        name = str(strata.name) if isinstance(strata, pd.Series) and strata.name else "stratum"
        codes, ids = _label_codes(strata, n_obs, f"stratum ({name!r})")
        _, first = np.unique(self.codes, return_index=True)
        per_cluster = codes[first]  # the stratum of each cluster's first observation
        split = np.flatnonzero(per_cluster[self.codes] != codes)
        if split.size:
            row = int(split[0])
            raise ValueError(
                f"observation {row}: cluster {self.ids[self.codes[row]]!r} ({self.name!r}) "
                f"lies in two strata of {name!r} ({ids[per_cluster[self.codes[row]]]!r} and "
                f"{ids[codes[row]]!r}); a cluster must lie in one stratum"
            )
        if len(ids) < 2 or np.bincount(per_cluster).min() < 2:
            return None, None, 1
        return per_cluster, name, len(ids)

    def describe(self) -> dict[str, Any]:
        """The resampling fields of a :class:`BootstrapResult` drawn over these clusters."""
        return {
            "n_clusters": self.n,
            "cluster": self.name,
            "stratified_by": self.stratified_by,
            "n_strata": self.n_strata,
        }

    def sums(self, values: np.ndarray | sparse.csr_matrix) -> np.ndarray | sparse.csr_matrix:
        """(C, k) sums of (n, k) values over each cluster's observations, sparse if they are.

        A crowd's per-rater columns stay sparse: each rater's cells are non-zero in the few
        clusters it voted in, so dense sums would grow as clusters x raters.
        """
        out = self._g @ values
        return sparse.csr_matrix(out) if sparse.issparse(out) else np.asarray(out)


def _resample_digest(n_clusters: int, n_boot: int, strata: np.ndarray | None) -> Any:
    """The running hash of a set of resamples (clusters, B, strata, then the counts)."""
    digest = hashlib.sha256(f"C={n_clusters};B={n_boot};".encode())
    if strata is not None:
        digest.update(b"strata=" + strata.astype(np.int64).tobytes())
    return digest


def _replicate_totals(
    cluster_sums: np.ndarray | sparse.csr_matrix,
    n_boot: int,
    seed: SeedLike,
    finish: Callable[[np.ndarray], np.ndarray],
    keep_weights: bool,
    strata: np.ndarray | None = None,
) -> tuple[np.ndarray, str, np.ndarray | None, int | None]:
    """finish(counts @ cluster_sums) for all resamples; chunked, one product per chunk."""
    item_rng, _, seed_int = _streams(seed)
    n_clusters = cluster_sums.shape[0]
    digest = _resample_digest(n_clusters, n_boot, strata)
    out, kept = [], []
    chunks = _count_chunks(item_rng, n_clusters, n_boot, width=cluster_sums.shape[1], strata=strata)
    for w in chunks:
        digest.update(w.tobytes())
        out.append(finish(np.asarray(w.astype(np.float64) @ cluster_sums)))
        if keep_weights:
            kept.append(w)
    return (
        np.concatenate(out, axis=0),
        digest.hexdigest(),
        np.vstack(kept) if keep_weights else None,
        seed_int,
    )


# --------------------------------------------------------------------------------------
# Generic statistics
# --------------------------------------------------------------------------------------


def bootstrap_statistic(
    values: Any,
    statistic: Callable[[np.ndarray], Any],
    *,
    clusters: Sequence[Any] | np.ndarray | None = None,
    cluster_name: str = "cluster",
    n_boot: int = 2000,
    seed: SeedLike = 0,
    statistic_of: Literal["totals", "rows"] = "totals",
    keep_weights: bool = False,
    jackknife: bool = True,
    strata: Sequence[Any] | np.ndarray | pd.Series | None = None,
) -> BootstrapResult:
    """Cluster bootstrap of any statistic of per-observation values.

    ``values`` is ``(n,)``, ``(n, k)`` or a DataFrame (its columns, in order), or, for the
    totals path, a scipy sparse ``(n, k)`` matrix: with hundreds of raters most per-item
    columns (one rater's cells) are zero almost everywhere, and only the ``(C, k)`` cluster
    sums need to be dense. ``clusters`` gives each observation's cluster (default: every
    observation its own).

    * ``statistic_of="totals"`` (vectorized): ``statistic`` maps column *totals* of shape
      ``(b, k)`` to ``(b,)`` or ``(b, m)``; it is called once per chunk of resamples on
      ``counts @ cluster_sums``. Rates, means, ratios, differences, F1 and kappas are
      totals statistics, e.g. a rate of ``[successes, ones]`` is ``t[:, 0] / t[:, 1]``.
    * ``statistic_of="rows"``: ``statistic`` maps the resampled rows (``(n', k)``, or
      ``(n',)`` for 1-d input) to a number or vector, in a Python loop over resamples (for
      statistics that are not functions of sums, e.g. a rank correlation). Slow; same
      resamples as the totals path.

    ``jackknife=False`` skips the leave-one-cluster-out values, which only BCa reads and
    which are clusters x columns (or clusters x rows) in size. ``strata`` (per observation,
    constant within a cluster; a named Series names them) resamples clusters within strata.
    """
    _check_n_boot(n_boot)
    if sparse.issparse(values):
        if statistic_of != "totals":
            raise ValueError("sparse values are only supported with statistic_of='totals'")
        arr = arr2 = sparse.csr_matrix(values, dtype=np.float64)
        one_d = False
    else:
        frame = isinstance(values, pd.DataFrame)
        arr = np.asarray(values.to_numpy(dtype=np.float64) if frame else values, dtype=np.float64)
        one_d = arr.ndim == 1
        arr2 = arr[:, None] if one_d else arr
    if arr2.ndim != 2 or arr2.shape[0] == 0:
        raise ValueError(f"values must be (n,) or (n, k) with n > 0, got shape {arr.shape}")
    cl = _Clusters(clusters, arr2.shape[0], cluster_name, strata)

    if statistic_of == "totals":
        sums = cl.sums(arr2)

        def finish(totals: np.ndarray) -> np.ndarray:
            return np.asarray(statistic(totals), dtype=np.float64)

        total = np.asarray(sums.sum(axis=0)).reshape(1, -1)
        estimate = finish(total)[0]
        reps, digest, kept, seed_int = _replicate_totals(
            sums, n_boot, seed, finish, keep_weights, cl.strata
        )
        jack = finish(np.asarray(total - sums)) if jackknife and cl.n > 1 else None
    elif statistic_of == "rows":
        if cl.strata is not None:
            raise ValueError(
                "statistic_of='rows' repeats whole rows, and stratified resamples weigh "
                "clusters by n/(n-1): use statistic_of='totals' with strata"
            )
        order = np.argsort(cl.codes, kind="stable")
        starts = np.searchsorted(cl.codes[order], np.arange(cl.n + 1))
        members = [order[starts[c] : starts[c + 1]] for c in range(cl.n)]
        data = arr if one_d else arr2

        def on_rows(idx: np.ndarray) -> np.ndarray:
            return np.asarray(statistic(data[idx]), dtype=np.float64)

        estimate = on_rows(np.arange(arr2.shape[0]))
        item_rng, _, seed_int = _streams(seed)
        digest_h = _resample_digest(cl.n, n_boot, None)
        rep_list, kept_list = [], []
        for w in _count_chunks(item_rng, cl.n, n_boot):
            digest_h.update(w.tobytes())
            if keep_weights:
                kept_list.append(w)
            for row in w:
                idx = np.concatenate([np.repeat(members[c], row[c]) for c in np.flatnonzero(row)])
                rep_list.append(on_rows(idx))
        reps, digest = np.asarray(rep_list), digest_h.hexdigest()
        kept = np.vstack(kept_list) if keep_weights else None
        jack = (
            np.asarray(
                [on_rows(np.concatenate(members[:c] + members[c + 1 :])) for c in range(cl.n)]
            )
            if jackknife and cl.n > 1
            else None
        )
    else:
        raise ValueError(f"statistic_of must be 'totals' or 'rows', got {statistic_of!r}")
    return BootstrapResult(
        estimate=np.asarray(estimate),
        replicates=reps,
        jackknife=jack,
        seed=seed_int,
        weights_digest=digest,
        weights=kept,
        **cl.describe(),
    )


def _as_float(values: Any, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        row = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(f"{name}[{row}] is missing or infinite; drop the row first")
    return arr


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def bootstrap_proportion(
    successes: Any, *, clusters: Any = None, cluster_name: str = "cluster", **kw: Any
) -> BootstrapResult:
    """Share of true values (e.g. the human-majority relevance rate), cluster bootstrap."""
    x = _as_float(successes, "successes")
    return bootstrap_statistic(
        np.column_stack([x, np.ones_like(x)]),
        lambda t: _ratio(t[:, 0], t[:, 1]),
        clusters=clusters,
        cluster_name=cluster_name,
        **kw,
    )


def bootstrap_mean(
    values: Any, *, clusters: Any = None, cluster_name: str = "cluster", **kw: Any
) -> BootstrapResult:
    """Mean of values (e.g. a mean preference rating), cluster bootstrap."""
    return bootstrap_proportion(values, clusters=clusters, cluster_name=cluster_name, **kw)


def bootstrap_ratio(
    numerator: Any,
    denominator: Any,
    *,
    clusters: Any = None,
    cluster_name: str = "cluster",
    **kw: Any,
) -> BootstrapResult:
    """``sum(numerator) / sum(denominator)`` over the same rows, e.g. over-selection.

    Over-selection of a model is its YES count over the human-majority YES count on the same
    items (= ratio of the two rates); resampling both together keeps the pairing.
    """
    num, den = _as_float(numerator, "numerator"), _as_float(denominator, "denominator")
    if num.shape != den.shape:
        raise ValueError(f"numerator {num.shape} and denominator {den.shape} differ in length")
    return bootstrap_statistic(
        np.column_stack([num, den]),
        lambda t: _ratio(t[:, 0], t[:, 1]),
        clusters=clusters,
        cluster_name=cluster_name,
        **kw,
    )


def bootstrap_paired_difference(
    x: Any, y: Any, *, clusters: Any = None, cluster_name: str = "cluster", **kw: Any
) -> BootstrapResult:
    """``mean(x) - mean(y)`` over paired rows (e.g. judge minus human rating of a response).

    Rows are resampled together, so the interval reflects the pairing.
    """
    a, b = _as_float(x, "x"), _as_float(y, "y")
    if a.shape != b.shape:
        raise ValueError(f"x {a.shape} and y {b.shape} must be paired (same length)")
    return bootstrap_statistic(
        np.column_stack([a - b, np.ones_like(a)]),
        lambda t: _ratio(t[:, 0], t[:, 1]),
        clusters=clusters,
        cluster_name=cluster_name,
        **kw,
    )


def bootstrap_precision_recall_f1(
    predicted: Any,
    reference: Any,
    *,
    clusters: Any = None,
    cluster_name: str = "cluster",
    **kw: Any,
) -> dict[str, BootstrapResult]:
    """Precision, recall and F1 of binary predictions against a reference, same resamples.

    Each is a function of the totals ``tp, fp, fn``; undefined values (no predicted or no
    reference positives in a resample) are NaN and dropped from that interval.
    """
    p = _as_float(predicted, "predicted").astype(bool)
    r = _as_float(reference, "reference").astype(bool)
    if p.shape != r.shape:
        raise ValueError(f"predicted {p.shape} and reference {r.shape} differ in length")
    cols = np.column_stack([p & r, p & ~r, ~p & r]).astype(np.float64)

    def prf(t: np.ndarray) -> np.ndarray:
        tp, fp, fn = t[:, 0], t[:, 1], t[:, 2]
        return np.column_stack(
            [_ratio(tp, tp + fp), _ratio(tp, tp + fn), _ratio(2 * tp, 2 * tp + fp + fn)]
        )

    res = bootstrap_statistic(cols, prf, clusters=clusters, cluster_name=cluster_name, **kw)
    return {name: res.component(i) for i, name in enumerate(("precision", "recall", "f1"))}


# --------------------------------------------------------------------------------------
# Agreement
# --------------------------------------------------------------------------------------


def _per_item(df: pd.DataFrame, column: str, what: str) -> pd.Series:
    """item -> the value of ``column``, which must be constant within an item."""
    if column not in df.columns:
        raise ValueError(
            f"{what} column {column!r} is not in the ratings (columns {list(df.columns)})"
        )
    per_item = df.groupby("item", sort=True)[column].nunique(dropna=False)
    bad = per_item[per_item > 1]
    if len(bad):
        raise ValueError(
            f"item {bad.index[0]!r} has {int(bad.iloc[0])} different values of the "
            f"{what} column {column!r}; an item must belong to one {what}"
        )
    return df.groupby("item", sort=True)[column].first()


def _item_strata(df: pd.DataFrame, items: Sequence[Any], strata: str | None) -> pd.Series | None:
    """The stratum of every item of ``items``, named for its column (None: unstratified)."""
    if strata is None:
        return None
    labels = _per_item(df, strata, "stratum").reindex(items)
    if labels.isna().any():
        raise ValueError(f"item {labels.index[labels.isna()][0]!r} has no stratum ({strata!r})")
    return pd.Series(labels.to_numpy(dtype=object), name=strata)


def _item_clusters(
    df: pd.DataFrame, m: RatingMatrix | LongCodes, cluster: str | Mapping[Any, Any] | None
) -> tuple[np.ndarray | None, str]:
    """Cluster label of every item of ``m`` (None: items are their own clusters)."""
    if cluster is None:
        return None, "item"
    if isinstance(cluster, str):
        mapping = _per_item(df, cluster, "cluster")
        name = cluster
    else:
        mapping = pd.Series(dict(cluster))
        name = "cluster"
    labels = mapping.reindex(m.items)
    if labels.isna().any():
        raise ValueError(f"item {labels.index[labels.isna()][0]!r} has no cluster")
    return labels.to_numpy(dtype=object), name


def bootstrap_agreement(
    df: pd.DataFrame,
    coefficient: Literal["percent_agreement", "fleiss_kappa", "gwet_ac1", "krippendorff_alpha"],
    *,
    cluster: str | Mapping[Any, Any] | None = None,
    level: Level = "nominal",
    categories: Sequence[Any] | None = None,
    n_boot: int = 2000,
    seed: SeedLike = 0,
    keep_weights: bool = False,
    strata: str | None = None,
) -> BootstrapResult:
    """Cluster bootstrap of a multi-rater coefficient, vectorized through its additive form.

    ``cluster`` is a column of ``df`` constant within an item (``"user_id"``), a mapping
    item -> cluster, or None (resample items); ``strata`` a column constant within a
    cluster (``"source"``) whose strata keep their number of clusters in every resample.
    The category set and ``q`` are fixed from the
    full data, so a resample that misses a category is not a different coefficient.

    Raters are not resampled here: in a multi-rater coefficient a rater drawn twice would be
    paired with an identical copy of itself and inflate agreement. Rater resampling is offered
    where it is well defined, for the group means of pairwise kappas
    (:func:`bootstrap_pairwise_kappa` with ``resample_raters=True``).
    """
    m = rating_matrix(df, categories=categories)
    form = additive_form(m, coefficient, level=level)
    labels, name = _item_clusters(df, m, cluster)
    if labels is not None:  # additive forms keep rated items only, all of them here
        labels = pd.Series(labels, index=m.items).reindex(form.items).to_numpy(dtype=object)
    return bootstrap_statistic(
        form.contributions,
        form.finish,
        clusters=labels,
        cluster_name=name,
        n_boot=n_boot,
        seed=seed,
        keep_weights=keep_weights,
        strata=_item_strata(df, form.items, strata),
    )


@dataclass(frozen=True)
class PairwiseKappaBootstrap:
    """Bootstrap of the pairwise Cohen's kappa matrix and its group means.

    ``matrix`` holds the upper-triangle pairs ``pairs[p] = (rater_a, rater_b)`` as the
    components of one result (estimate ``(P,)``, replicates ``(B, P)``); ``group_means``
    maps ``human_human``-style keys to scalar results on the same resamples, so their
    differences are paired (:func:`paired_difference`). ``n_shared[p]`` is the number of
    items pair ``p`` shares.
    """

    raters: tuple[Any, ...]
    pairs: tuple[tuple[Any, Any], ...]
    matrix: BootstrapResult
    group_means: dict[str, BootstrapResult]
    n_shared: np.ndarray

    def pair(self, rater_a: Any, rater_b: Any) -> BootstrapResult:
        """The result of one pair (in either order)."""
        for p, (a, b) in enumerate(self.pairs):
            if {a, b} == {rater_a, rater_b} and a != b:
                return self.matrix.component(p)
        raise AgreementError(f"no pair ({rater_a!r}, {rater_b!r}) in this bootstrap")

    def matrix_frame(
        self,
        what: Literal["estimate", "ci_low", "ci_high"] = "estimate",
        *,
        level: float = 0.95,
        method: Method = "percentile",
        diagonal: float = np.nan,
    ) -> pd.DataFrame:
        """A square rater x rater DataFrame of the estimates or of one interval bound."""
        if what == "estimate":
            vals = np.asarray(self.matrix.estimate)
        elif what in ("ci_low", "ci_high"):
            low, high = self.matrix.interval(level, method)
            vals = low if what == "ci_low" else high
        else:
            raise ValueError(f"what must be estimate, ci_low or ci_high, got {what!r}")
        r = len(self.raters)
        out = np.full((r, r), diagonal, dtype=np.float64)
        index = {x: i for i, x in enumerate(self.raters)}
        for p, (a, b) in enumerate(self.pairs):
            out[index[a], index[b]] = out[index[b], index[a]] = vals[p]
        return pd.DataFrame(
            out,
            index=pd.Index(self.raters, name="rater_a"),
            columns=pd.Index(self.raters, name="rater_b"),
        )


def _shared_items(lc: LongCodes) -> np.ndarray:
    """(R, R) number of items each rater pair shares (a raters x raters count, no clusters)."""
    n_raters = len(lc.raters)
    rated = sparse.csr_matrix(
        (np.ones(len(lc.item)), (lc.item, lc.rater)), shape=(len(lc.items), n_raters)
    )
    return np.asarray((rated.T @ rated).toarray())


def _per_cluster_pair_tables(
    lc: LongCodes, pair_index: np.ndarray, n_pairs: int, clusters: _Clusters
) -> sparse.csr_matrix:
    """(C, P * q * q) sparse: every kept pair's contingency table within every cluster.

    One sparse product ``X' Xc`` of the (items x rater-category) indicator with its copy
    split by cluster gives, per cluster, the table of every pair that co-rated an item
    there; only pairs with ``pair_index[a, b] >= 0`` are kept. Its size follows the ratings
    (each cluster holds the few pairs that met in it), never raters x raters x clusters.
    """
    q, n_raters = len(lc.categories), len(lc.raters)
    n_items = len(lc.items)
    col = lc.rater * q + lc.label
    ones = np.ones(len(col))
    x = sparse.csr_matrix((ones, (lc.item, col)), shape=(n_items, n_raters * q))
    cl = clusters.codes[lc.item]
    xc = sparse.csr_matrix(
        (ones, (lc.item, cl * (n_raters * q) + col)), shape=(n_items, clusters.n * n_raters * q)
    )
    z = (x.T @ xc).tocoo()
    a, k = np.divmod(z.row.astype(np.int64), q)
    c, rest = np.divmod(z.col.astype(np.int64), n_raters * q)
    b, l_ = np.divmod(rest, q)
    p = pair_index[a, b]
    keep = p >= 0
    return sparse.csr_matrix(
        (z.data[keep], (c[keep], p[keep] * q * q + k[keep] * q + l_[keep])),
        shape=(clusters.n, n_pairs * q * q),
    )


def _pair_blocks(
    pairs: Sequence[tuple[Any, Any]], raters: Sequence[Any], groups: Mapping[Any, str]
) -> dict[str, np.ndarray]:
    """Positions of the computed pairs per group key (as :func:`group_pairs`, on them only)."""
    unassigned = [r for r in raters if r not in groups]
    if unassigned:
        raise AgreementError(
            f"raters without a group: {unassigned}; `groups` must map every rater "
            "(e.g. to 'human' or 'model')"
        )
    out: dict[str, list[int]] = {}
    for p, (a, b) in enumerate(pairs):
        out.setdefault(group_key(groups[a], groups[b]), []).append(p)
    return {key: np.array(out[key]) for key in sorted(out)}


def bootstrap_pairwise_kappa(
    df: pd.DataFrame,
    *,
    groups: Mapping[Any, str] | None = None,
    cluster: str | Mapping[Any, Any] | None = None,
    raters: Sequence[Any] | None = None,
    weights: Weights = None,
    categories: Sequence[Any] | None = None,
    n_boot: int = 2000,
    seed: SeedLike = 0,
    resample_raters: bool = False,
    keep_weights: bool = False,
    min_shared: int = 0,
    jackknife: bool = True,
    strata: str | None = None,
) -> PairwiseKappaBootstrap:
    """Cluster bootstrap of the pairwise Cohen's kappas and of their group means.

    All resamples' contingency tables of all pairs come from one matrix product,
    ``counts (B x C) @ tables (C x P q^2)`` (``tables`` sparse); kappa is then evaluated on
    the ``(B, P, q, q)`` tables at once (:func:`analysis.stats.agreement.kappa_from_tables`),
    the same function that gives the point estimate. Binary labels are the study's case
    (``q = 2``); any number of categories and weighted kappa work the same way.

    Only pairs sharing at least ``min_shared`` items are computed (0: every pair, NaN where
    none is shared): with hundreds of crowd annotators most pairs share a handful of items,
    whose kappa is noise, and listing all of them would grow as raters x raters x clusters.
    ``pairs`` and ``n_shared`` list the computed pairs; group means are over them.

    Group means (``groups`` maps every rater to a group) are, per resample, the mean over the
    block's pairs whose kappa is defined in that resample. With ``resample_raters=True``,
    raters are also resampled with replacement *within* each group (a two-way bootstrap, so
    the interval covers the choice of annotators as well); a group mean is then the mean over
    pairs of distinct drawn raters weighted by how often each was drawn (a rater drawn twice
    is not paired with itself), and is NaN when a group drew a single rater. The matrix cells
    themselves only resample clusters. BCa needs the jackknife, which exists only without
    rater resampling; ``jackknife=False`` skips it (clusters x pairs kappas, which grow as the
    square of the study's size) where the intervals are percentile ones. ``strata`` (a column
    constant within a cluster) resamples clusters within strata (as :func:`bootstrap_agreement`).
    """
    _check_n_boot(n_boot)
    lc = long_codes(df, categories=categories, raters=raters)
    if len(lc.raters) < 2:
        raise AgreementError(f"a pairwise matrix needs two raters; the data have {lc.raters}")
    r = len(lc.raters)
    a_idx, b_idx = np.triu_indices(r, k=1)
    shared = _shared_items(lc)
    kept = shared[a_idx, b_idx] >= min_shared
    a_idx, b_idx = a_idx[kept], b_idx[kept]
    n_pairs = len(a_idx)
    pairs = tuple((lc.raters[a], lc.raters[b]) for a, b in zip(a_idx, b_idx, strict=True))
    pair_index = np.full((r, r), -1, dtype=np.int64)
    pair_index[a_idx, b_idx] = np.arange(n_pairs)
    labels, name = _item_clusters(df, lc, cluster)
    cl = _Clusters(labels, len(lc.items), name, _item_strata(df, lc.items, strata))
    q = len(lc.categories)

    tables_c = _per_cluster_pair_tables(lc, pair_index, n_pairs, cl)  # (C, P q q), sparse
    total = np.asarray(tables_c.sum(axis=0)).ravel()

    def kappas(t: np.ndarray) -> np.ndarray:
        return kappa_from_tables(t.reshape(t.shape[0], n_pairs, q, q), weights)

    reps, digest, kept_w, seed_int = _replicate_totals(
        tables_c, n_boot, seed, kappas, keep_weights, cl.strata
    )
    estimate = kappas(total[None, :])[0]
    jack = _jackknife(tables_c, total, kappas) if jackknife and cl.n > 1 else None
    n_shared = shared[a_idx, b_idx]
    matrix = BootstrapResult(
        estimate=estimate,
        replicates=reps,
        jackknife=jack,
        seed=seed_int,
        weights_digest=digest,
        weights=kept_w,
        **cl.describe(),
    )

    group_means: dict[str, BootstrapResult] = {}
    if groups is not None:
        blocks = _pair_blocks(pairs, lc.raters, groups)
        if resample_raters:
            _, rater_rng, _ = _streams(seed)
            draws = np.zeros((n_boot, r), dtype=np.float64)
            for g in sorted({str(groups[x]) for x in lc.raters}):
                members = [i for i, x in enumerate(lc.raters) if str(groups[x]) == g]
                draws[:, members] = _draw_counts(rater_rng, len(members), n_boot)
            pair_w = draws[:, a_idx] * draws[:, b_idx]  # (B, P)
            rater_digest = hashlib.sha256(digest.encode())
            rater_digest.update(draws.tobytes())
            digest = rater_digest.hexdigest()
        else:
            pair_w = np.ones((1, n_pairs))
        for key, cols in blocks.items():
            group_means[key] = BootstrapResult(
                estimate=np.asarray(
                    _weighted_mean(estimate[None, cols], np.ones((1, len(cols))))[0]
                ),
                replicates=_weighted_mean(reps[:, cols], pair_w[:, cols]),
                jackknife=None
                if (jack is None or resample_raters)
                else _weighted_mean(jack[:, cols], np.ones((1, len(cols)))),
                seed=seed_int,
                weights_digest=digest,
                resampled_raters=resample_raters,
                **cl.describe(),
            )
    return PairwiseKappaBootstrap(
        raters=lc.raters,
        pairs=pairs,
        matrix=matrix,
        group_means=group_means,
        n_shared=n_shared.astype(np.int64),
    )


def _jackknife(
    tables_c: sparse.csr_matrix, total: np.ndarray, finish: Callable[[np.ndarray], np.ndarray]
) -> np.ndarray:
    """finish(total - cluster c's tables) for every cluster, in chunks of dense rows."""
    step = max(1, _MAX_CELLS // max(tables_c.shape[1], 1))
    return np.concatenate(
        [
            finish(total[None, :] - tables_c[s : s + step].toarray())
            for s in range(0, tables_c.shape[0], step)
        ]
    )


def _weighted_mean(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Row-wise mean of the finite values, weighted; NaN where no weight is left."""
    w = np.where(np.isfinite(values), np.broadcast_to(weights, values.shape), 0.0)
    num = np.where(w > 0, values, 0.0) * w
    den = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num.sum(axis=1) / den, np.nan)
