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
    ``seed`` (an int, or a ``numpy.random.Generator``) gives a cluster stream: child ``stream``
    of the seed's ``SeedSequence`` (:func:`_stream`). For a given seed, stream and number of
    clusters the cluster counts are identical in every function here, whatever else is
    computed, so two results with the same :attr:`BootstrapResult.weights_digest` come from
    the same resamples and their difference resample by resample is a paired bootstrap.
    Counts are drawn as ``C`` uniform cluster indices per resample (``Generator.integers``)
    and tallied; the draw is chunked over resamples without changing the stream.

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

Streams and factors
    A design with several random factors (users and prompts crossed, their cells) resamples
    each factor with this engine on a stream of its own; stream 0 is the cluster stream of a
    one-factor bootstrap, so a design's first factor draws exactly the resamples of the
    one-way bootstrap. With
    ``n_boot=0`` only the leave-one-cluster-out jackknife is computed, for a factor with too
    few levels to bootstrap (:mod:`analysis.stats.resampling`).

Intervals and tests
    The engine returns resamples (:class:`BootstrapResult`); the one place that turns them into
    an interval, a p-value and a record is :mod:`analysis.stats.records`. Resamples on which
    the statistic is undefined (NaN, e.g. a kappa with one category) stay NaN here; the
    record maker drops and counts them, never imputes them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from analysis.stats.agreement import (
    AgreementError,
    LongCodes,
    RatingMatrix,
    Weights,
    group_key,
    kappa_from_tables,
    long_codes,
)

__all__ = [
    "BootstrapResult",
    "PairwiseKappaBootstrap",
    "resample_counts",
    "redrawn_digests",
    "bootstrap_statistic",
    "bootstrap_pairwise_kappa",
    "nan_mean_rows",
]

SeedLike = int | np.random.Generator
#: upper bound on the cells of one chunk of resample counts (memory, not results)
_MAX_CELLS = 4_000_000


# --------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BootstrapResult:
    """Point estimate, bootstrap replicates and jackknife values of a statistic.

    ``estimate`` has the statistic's shape ``S`` (``()`` for a scalar), ``replicates`` is
    ``(B, *S)`` and ``jackknife`` (leave one cluster out) is ``(C, *S)`` or None when it was
    not computed. A result with ``B = 0`` is a jackknife of its ``cluster`` factor alone (a
    factor with too few levels to bootstrap, or the annotators of a design). ``sign`` is how
    its variance enters a design's variance: ``-1`` for the user x prompt cells of a crossed
    design (Cameron, Gelbach and Miller's intersection term), ``+1`` otherwise.
    """

    estimate: np.ndarray
    replicates: np.ndarray
    jackknife: np.ndarray | None
    n_clusters: int
    cluster: str
    seed: int | None
    weights_digest: str
    #: name of the stratifying column and its number of strata (None: not stratified)
    stratified_by: str | None = None
    n_strata: int = 1
    sign: int = 1
    #: the stratum code of each cluster (a stratified jackknife reads it), None: unstratified
    cluster_strata: np.ndarray | None = field(default=None, repr=False)
    #: the name of each deleted level of an annotator clustering (``annotator`` or
    #: ``annotator|user``...), in the order of ``jackknife``; None where not named
    levels: tuple[str, ...] | None = field(default=None, repr=False)

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

    @property
    def is_jackknife(self) -> bool:
        """A leave-one-level-out jackknife of its factor, without bootstrap resamples."""
        return self.n_boot == 0

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


# --------------------------------------------------------------------------------------
# Resampling
# --------------------------------------------------------------------------------------


def _stream(seed: SeedLike, stream: int = 0) -> tuple[np.random.Generator, int | None]:
    """The cluster generator of ``stream`` and the seed to record.

    Child ``stream`` of the seed's ``SeedSequence``; stream 0 is every one-factor bootstrap's
    stream. A Generator seed spawns at least two children, as the engine always has, so its
    stream 0 is unchanged.
    """
    if stream < 0:
        raise ValueError(f"stream must be at least 0, got {stream}")
    if isinstance(seed, np.random.Generator):
        return seed.spawn(max(2, stream + 1))[stream], None
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise TypeError(f"seed must be an int or a numpy Generator, got {seed!r}")
    child = np.random.SeedSequence(int(seed)).spawn(max(2, stream + 1))[stream]
    return np.random.default_rng(child), int(seed)


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


def resample_counts(n_clusters: int, n_boot: int, seed: SeedLike, stream: int = 0) -> np.ndarray:
    """(B, C) cluster counts exactly as every bootstrap here draws them for ``seed``."""
    rng, _ = _stream(seed, stream)
    return np.vstack(
        [np.zeros((0, n_clusters), dtype=np.int64), *_count_chunks(rng, n_clusters, n_boot)]
    )


def redrawn_digests(
    n_clusters: int,
    n_boots: Sequence[int],
    seed: int,
    stream: int,
    strata: np.ndarray | None = None,
) -> list[str]:
    """The resample-weight digest of each number of resamples in ``n_boots`` as every bootstrap
    here draws them for ``seed``'s ``stream`` (:attr:`BootstrapResult.weights_digest`).

    The engine draws resamples one after another from the one stream, so ``B`` resamples are
    the first ``B`` of any larger number for the same seed, stream, clusters and strata; a
    digest this reproduces is proof that a result's resamples are those rows (the shorter
    one's draws are then the longer one's first). ``recenter diff`` pairs two builds with
    other ``stats.n_boot`` on that common prefix.
    """
    rng, _ = _stream(seed, stream)
    rows = np.vstack(
        [
            np.zeros((0, n_clusters), dtype=np.float64 if strata is not None else np.int64),
            *_count_chunks(rng, n_clusters, max(n_boots, default=0), strata=strata),
        ]
    )
    out = []
    for b in n_boots:
        digest = _resample_digest(n_clusters, b, strata)
        digest.update(np.ascontiguousarray(rows[:b]).tobytes())
        out.append(digest.hexdigest())
    return out


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
            self.name = name
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
            "cluster_strata": self.strata,
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
    strata: np.ndarray | None = None,
    stream: int = 0,
) -> tuple[np.ndarray, str, int | None]:
    """finish(counts @ cluster_sums) for all resamples; chunked, one product per chunk.

    ``n_boot = 0`` gives no resamples (a jackknife-only result): ``finish`` of an empty chunk.
    """
    rng, seed_int = _stream(seed, stream)
    n_clusters = cluster_sums.shape[0]
    digest = _resample_digest(n_clusters, n_boot, strata)
    out = []
    chunks = _count_chunks(rng, n_clusters, n_boot, width=cluster_sums.shape[1], strata=strata)
    for w in chunks:
        digest.update(w.tobytes())
        out.append(finish(np.asarray(w.astype(np.float64) @ cluster_sums)))
    if not out:
        out.append(finish(np.zeros((0, cluster_sums.shape[1]))))
    return np.concatenate(out, axis=0), digest.hexdigest(), seed_int


# --------------------------------------------------------------------------------------
# Generic statistics
# --------------------------------------------------------------------------------------


def bootstrap_statistic(
    values: Any,
    statistic: Callable[[np.ndarray], Any],
    *,
    clusters: Sequence[Any] | np.ndarray | None,
    cluster_name: str,
    n_boot: int,
    seed: SeedLike,
    stream: int = 0,
    jackknife: bool = True,
    strata: Sequence[Any] | np.ndarray | pd.Series | None = None,
) -> BootstrapResult:
    """Cluster bootstrap of a statistic of column totals, vectorized.

    ``values`` is ``(n,)``, ``(n, k)`` or a DataFrame (its columns, in order), or a scipy
    sparse ``(n, k)`` matrix: with hundreds of raters most per-item columns (one rater's
    cells) are zero almost everywhere, and only the ``(C, k)`` cluster sums need to be dense.
    ``clusters`` gives each observation's cluster (None: every observation its own).
    ``statistic`` maps column *totals* of shape ``(b, k)`` to ``(b,)`` or ``(b, m)``; it is
    called once per chunk of resamples on ``counts @ cluster_sums``. Rates, means, ratios,
    differences, F1 and kappas are totals statistics, e.g. a rate of ``[successes, ones]``
    is ``t[:, 0] / t[:, 1]``; a statistic that is not a function of sums (a rank
    correlation) is bootstrapped on weighted rows (:mod:`analysis.stats.weighted_bootstrap`)
    with the same resample counts.

    ``jackknife=False`` skips the leave-one-cluster-out values (clusters x columns in size),
    which only BCa and a jackknife-only factor read. ``strata`` (per observation, constant
    within a cluster; a named Series names them) resamples clusters within strata.
    """
    if sparse.issparse(values):
        arr2 = sparse.csr_matrix(values, dtype=np.float64)
    else:
        frame = isinstance(values, pd.DataFrame)
        arr = np.asarray(values.to_numpy(dtype=np.float64) if frame else values, dtype=np.float64)
        arr2 = arr[:, None] if arr.ndim == 1 else arr
    if arr2.ndim != 2 or arr2.shape[0] == 0:
        raise ValueError(f"values must be (n,) or (n, k) with n > 0, got shape {arr2.shape}")
    cl = _Clusters(clusters, arr2.shape[0], cluster_name, strata)
    sums = cl.sums(arr2)

    def finish(totals: np.ndarray) -> np.ndarray:
        return np.asarray(statistic(totals), dtype=np.float64)

    total = np.asarray(sums.sum(axis=0)).reshape(1, -1)
    estimate = finish(total)[0]
    reps, digest, seed_int = _replicate_totals(sums, n_boot, seed, finish, cl.strata, stream)
    jack = finish(np.asarray(total - sums)) if jackknife and cl.n > 1 else None
    return BootstrapResult(
        estimate=np.asarray(estimate),
        replicates=reps,
        jackknife=jack,
        seed=seed_int,
        weights_digest=digest,
        **cl.describe(),
    )


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


@dataclass(frozen=True)
class PairwiseKappaBootstrap:
    """Bootstrap of the pairwise Cohen's kappa matrix and its group means.

    ``matrix`` holds the upper-triangle pairs ``pairs[p] = (rater_a, rater_b)`` as the
    components of one result (estimate ``(P,)``, replicates ``(B, P)``); ``group_means``
    maps ``human_human``-style keys to scalar results on the same resamples, so their
    differences are paired. ``n_shared[p]`` is the number of items pair ``p`` shares.
    """

    raters: tuple[Any, ...]
    pairs: tuple[tuple[Any, Any], ...]
    matrix: BootstrapResult
    group_means: dict[str, BootstrapResult]
    n_shared: np.ndarray


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
    n_boot: int,
    seed: SeedLike,
    stream: int = 0,
    min_shared: int = 0,
    jackknife: bool = True,
    strata: str | None = None,
    table_statistic: Callable[[np.ndarray], np.ndarray] | None = None,
) -> PairwiseKappaBootstrap:
    """Cluster bootstrap of the pairwise Cohen's kappas and of their group means.

    ``table_statistic`` replaces Cohen's kappa by another statistic of each pair's
    contingency table (``(..., q, q)`` tables in, one value per table out: the largest kappa
    the pair's marginals allow, or the share of it reached, :mod:`analysis.stats.
    attainable_kappa`), on the same tables, resamples, group means and jackknife.

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
    block's pairs whose kappa is defined in that resample (a design that treats the raters of
    a group as a sample deletes one rater at a time from these means,
    :mod:`analysis.stats.resampling`). ``jackknife=False`` skips the leave-one-cluster-out
    values (clusters x pairs kappas, which grow as the square of the study's size) where no
    interval reads them. ``strata`` (a column constant within a cluster) resamples clusters
    within strata (as :func:`bootstrap_statistic`).
    """
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

    if table_statistic is not None and weights is not None:
        raise ValueError("a table statistic replaces the (weighted) kappa: give one of them")

    def kappas(t: np.ndarray) -> np.ndarray:
        tables = t.reshape(t.shape[0], n_pairs, q, q)
        if table_statistic is not None:
            return table_statistic(tables)
        return kappa_from_tables(tables, weights)

    reps, digest, seed_int = _replicate_totals(tables_c, n_boot, seed, kappas, cl.strata, stream)
    estimate = kappas(total[None, :])[0]
    jack = _jackknife(tables_c, total, kappas) if jackknife and cl.n > 1 else None
    n_shared = shared[a_idx, b_idx]
    matrix = BootstrapResult(
        estimate=estimate,
        replicates=reps,
        jackknife=jack,
        seed=seed_int,
        weights_digest=digest,
        **cl.describe(),
    )

    group_means: dict[str, BootstrapResult] = {}
    if groups is not None:
        for key, cols in _pair_blocks(pairs, lc.raters, groups).items():
            group_means[key] = BootstrapResult(
                estimate=np.asarray(nan_mean_rows(estimate[None, cols])[0]),
                replicates=nan_mean_rows(reps[:, cols]),
                jackknife=None if jack is None else nan_mean_rows(jack[:, cols]),
                seed=seed_int,
                weights_digest=digest,
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


def nan_mean_rows(values: np.ndarray) -> np.ndarray:
    """Row-wise mean of the finite values; NaN where a row has none."""
    ok = np.isfinite(values)
    num = np.where(ok, values, 0.0).sum(axis=1)
    den = ok.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)
