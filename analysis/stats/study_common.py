"""What the three ``study_stage*`` modules share: settings, clusters, intervals, records.

The study's records all follow one recipe: a point estimate computed from the canonical
tables, a 95% interval from a cluster bootstrap (or an analytic interval where one is valid),
a readable method sentence, and the ``module:function`` that computed it. This module holds
that recipe so that every stage states its intervals in the same words and with the same
rules:

* Settings come from the ``stats`` config group plus ``run.seed`` (:class:`StatsSettings`).
* Every statistic of one family (e.g. all stage-2 numbers of one round) is bootstrapped from
  the *same* resamples: one call of :func:`analysis.stats.bootstrap.bootstrap_statistic` on
  the per-item columns gives the resampled column totals (:class:`TotalsBootstrap`), and each
  statistic is a function of those totals. Differences and ratios are therefore paired.
* A rank correlation is not a function of sums;
  :func:`analysis.stats.weighted_bootstrap.weighted_spearman` evaluates it on all
  resamples at once with frequency-weighted mid-ranks, on the same resample counts as the
  bootstrap library draws for the same seed (:func:`analysis.stats.bootstrap.resample_counts`).
* A statistic that cannot be computed is *absent* (no record), never 0 or NaN.
* A p-value comes from the same resamples as the interval beside it
  (:func:`analysis.stats.bootstrap.resample_p_value`), and leave-one-rater-out references
  have one definition (:func:`leave_one_out_majority`).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse
from statsmodels.stats.multitest import multipletests

from analysis.data.vocabulary import FINAL, PILOT
from analysis.provenance import Record
from analysis.settings import StatsConfig, from_params
from analysis.stats.agreement import kappa_from_tables
from analysis.stats.bootstrap import (
    BootstrapResult,
    bootstrap_statistic,
    resample_counts,
    resample_p_value,
)
from analysis.stats.interval import Interval
from analysis.stats.weighted_bootstrap import weighted_spearman

#: the keys of the ``stats`` config group (fields of :class:`analysis.settings.StatsConfig`)
STATS_KEYS = tuple(f.name for f in fields(StatsConfig))
CORRECTIONS = {"holm": "Holm", "fdr_bh": "Benjamini-Hochberg"}

#: plural nouns for the resampling unit in method sentences
_UNIT_NOUNS = {
    "user_id": "users",
    "prompt_id": "prompts",
    "attribute_id": "attributes",
    "response": "responses",
}


class StudyDataError(ValueError):
    """A canonical table given to the study statistics is malformed; names table, row, field."""


# --------------------------------------------------------------------------------------
# Settings
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StatsSettings:
    """The statistics settings of a run (config group ``stats`` plus ``run.seed``).

    No field has a default: the values come from ``config/stats/default.yaml`` through
    :meth:`from_rule_params` (which a rule script calls; the statistics functions take the typed
    settings, never the config tree), and the choice and range checks are those of
    :class:`analysis.settings.StatsConfig` (one copy of each).
    """

    n_boot: int
    ci_level: float
    ci_method: str
    cluster: str
    multiple_comparisons: str
    min_shared_items: int
    seed: int
    #: model -> caveat (config ``stages.caveats``): attached to the model's records, and the
    #: model is left out of aggregates over models (group means, means over models, the
    #: across-model correlation), since a caveat says its numbers mean nothing for the study
    caveats: tuple[tuple[str, str], ...]

    def __post_init__(self) -> None:
        from_params(StatsConfig, self.stats_group(), "stats")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"the seed must be an int, got {self.seed!r}")

    def stats_group(self) -> dict[str, Any]:
        """The ``stats`` config group these settings were made from."""
        return {name: getattr(self, name) for name in STATS_KEYS}

    def caveat(self, rater: str) -> str | None:
        """The configured caveat of a model, or None."""
        return dict(self.caveats).get(rater)

    def in_aggregates(self, rater: str) -> bool:
        """Whether a model enters means and correlations over models (no caveat)."""
        return self.caveat(rater) is None

    def with_caveat(self, rater: str, extra: Mapping[str, Any]) -> dict[str, Any]:
        """``extra`` plus the rater's caveat where it has one (papers must say it)."""
        note = self.caveat(rater)
        return {**extra, "caveat": note} if note else dict(extra)

    @classmethod
    def from_rule_params(cls, cfg: Mapping[str, Any] | StatsSettings) -> StatsSettings:
        """From the rule's ``subtree(CFG, "stats", "run.seed", "stages.caveats")`` or a flat dict.

        Nested: ``{"stats": {...}, "run.seed": 123, "stages.caveats": {model: note}}``.
        Flat: ``{n_boot, ci_level, ci_method, cluster, multiple_comparisons, min_shared_items,
        seed, caveats}``.
        Caveats are optional (none); every other key is required (no defaults here: the YAML
        holds them), and an unknown key is an error (a typo is not a no-op).
        """
        if isinstance(cfg, StatsSettings):
            return cfg
        flat = dict(cfg)
        if "stats" in flat:
            flat = {
                **dict(flat.pop("stats")),
                **{short: flat.pop(key) for key, short in _NESTED_KEYS.items() if key in flat},
                **{f"unknown:{k}": v for k, v in flat.items()},
            }
        known = {*STATS_KEYS, "seed", "caveats"}
        unknown = sorted(k.removeprefix("unknown:") for k in set(flat) - known)
        missing = sorted({*STATS_KEYS, "seed"} - set(flat))
        if unknown or missing:
            raise ValueError(
                f"unknown statistics config keys: {unknown}, missing: {missing} (expected the "
                "rule's subtree 'stats', 'run.seed' and optionally 'stages.caveats')"
            )
        from_params(StatsConfig, {k: flat[k] for k in STATS_KEYS}, "stats")
        caveats = flat.get("caveats") or {}
        if isinstance(caveats, Mapping):
            caveats = tuple(sorted((str(k), str(v)) for k, v in caveats.items()))
        return cls(**{k: flat[k] for k in (*STATS_KEYS, "seed")}, caveats=tuple(caveats))


#: keys of a rule's config subtree beside ``stats`` -> the settings field they fill
_NESTED_KEYS = {"run.seed": "seed", "stages.caveats": "caveats"}


# --------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------


def show(value: Any) -> str:
    """``repr`` of a table value as a person reads it (``6``, not ``np.int64(6)``)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def require_columns(df: pd.DataFrame, table: str, columns: Sequence[str]) -> None:
    """Raise :class:`StudyDataError` naming the table and the missing columns."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise StudyDataError(
            f"table {table}: missing column(s) {missing} (has {list(df.columns)}); "
            "see docs/data.md for the canonical columns"
        )


def require_unique(df: pd.DataFrame, table: str, key: Sequence[str]) -> None:
    """Raise :class:`StudyDataError` naming the first duplicated row of ``key``."""
    dup = df.duplicated(subset=list(key), keep=False)
    if dup.any():
        rows = list(df.index[dup.to_numpy()][:2])
        first = df.loc[dup].iloc[0]
        values = ", ".join(f"{k}={show(first[k])}" for k in key)
        raise StudyDataError(
            f"table {table}: rows {rows} repeat the key ({values}); fields {list(key)} "
            "must identify one row"
        )


def study_round(rounds: Sequence[str], table: str) -> str | None:
    """The round a round-less key (stage 1, stage 3) describes: ``final``, else ``pilot``.

    The study reports its final annotation; a dataset that only has a pilot (the published
    annotation-tool snapshot) reports the pilot, and the record says which round it is.
    Rounds are never pooled.
    """
    present = sorted(set(map(str, rounds)))
    for candidate in (FINAL, PILOT):
        if candidate in present:
            return candidate
    if not present:
        return None
    raise StudyDataError(f"table {table}: no 'final' or 'pilot' round (rounds: {present})")


def cluster_column(settings: StatsSettings, available: Mapping[str, str | None]) -> str | None:
    """The column that names each observation's resampling cluster (None: observations).

    ``available`` maps the config's unit (``item``/``user``/``prompt``) to the column that
    carries it in this table; a unit a table lacks (a stage-1 judgment has no prompt) falls
    back to ``user``.
    """
    unit = settings.cluster if settings.cluster in available else "user"
    return available[unit]


def unit_noun(cluster: str | None, item_noun: str) -> str:
    """Plural noun of a resampling unit for a method sentence."""
    if cluster is None:
        return item_noun
    return _UNIT_NOUNS.get(cluster, f"{cluster} clusters")


def cluster_labels(frame: pd.DataFrame, cluster: str | None) -> np.ndarray | None:
    """Cluster label per row (None: every row its own cluster)."""
    if cluster is None:
        return None
    return frame[cluster].astype(str).to_numpy(dtype=object)


# --------------------------------------------------------------------------------------
# Bootstrap on column totals
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TotalsBootstrap:
    """Resampled column totals of per-observation columns; statistics are derived from them.

    One resampling pass serves every statistic of a family: ``stat(fn)`` evaluates
    ``fn(totals)`` (``totals`` is ``(b, k)``, columns addressed by name through
    ``self.col``) on the point totals, on every resample and on every leave-one-cluster-out
    jackknife total (for BCa), and returns a :class:`BootstrapResult`.
    """

    totals: BootstrapResult
    columns: tuple[str, ...]
    unit: str  # plural noun of the resampling unit, for method sentences

    @cached_property
    def _index(self) -> dict[str, int]:
        # a dict, not tuple.index: a crowd of raters gives tens of thousands of columns
        return {name: i for i, name in enumerate(self.columns)}

    def col(self, name: str) -> int:
        return self._index[name]

    def stat(self, fn: Callable[[Callable[[str], np.ndarray]], np.ndarray]) -> BootstrapResult:
        """``fn(get)`` where ``get(name)`` returns that column's totals, shape ``(b,)``."""

        def apply(t: np.ndarray | None) -> np.ndarray | None:
            if t is None:
                return None
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.asarray(fn(lambda name: t[:, self.col(name)]), dtype=np.float64)

        est = apply(np.asarray(self.totals.estimate)[None, :])
        assert est is not None
        return replace(
            self.totals,
            estimate=np.asarray(est[0]),
            replicates=apply(self.totals.replicates),
            jackknife=apply(self.totals.jackknife),
            weights=None,
        )

    def point(self, name: str) -> float:
        return float(np.asarray(self.totals.estimate)[self.col(name)])


def bootstrap_totals(
    columns: Mapping[str, np.ndarray],
    clusters: np.ndarray | None,
    settings: StatsSettings,
    unit: str,
    seed: int | None = None,
    strata: pd.Series | None = None,
) -> TotalsBootstrap:
    """Cluster bootstrap of the totals of named per-observation columns (one matrix product).

    ``strata`` (per observation, named; constant within a cluster) keeps each stratum's
    number of clusters in every resample (:mod:`analysis.stats.bootstrap`, "Strata").
    """
    names = tuple(columns)
    values = np.column_stack([np.asarray(columns[n], dtype=np.float64) for n in names])
    return _column_totals(values, names, clusters, settings, unit, seed, strata)


def bootstrap_sparse_totals(
    columns: Mapping[str, tuple[np.ndarray, np.ndarray]],
    n_obs: int,
    clusters: np.ndarray | None,
    settings: StatsSettings,
    unit: str,
    strata: pd.Series | None = None,
) -> TotalsBootstrap:
    """:func:`bootstrap_totals` of columns given as ``(rows, values)``: zero on other rows.

    For per-rater columns of a large crowd: a rater's cells are non-zero only on the items
    it voted on, so the ``(n, k)`` matrix is stored sparse (its size grows with the votes,
    not with items x raters). The totals are sums of counts, exactly those of the dense path.
    """
    names = tuple(columns)
    rows = [np.asarray(columns[n][0], dtype=np.int64) for n in names]
    values = [np.asarray(columns[n][1], dtype=np.float64) for n in names]
    col_of = np.repeat(np.arange(len(names)), [r.size for r in rows])
    matrix = sparse.csr_matrix(
        (np.concatenate(values), (np.concatenate(rows), col_of)), shape=(n_obs, len(names))
    )
    return _column_totals(matrix, names, clusters, settings, unit, None, strata)


def _column_totals(
    values: np.ndarray | sparse.csr_matrix,
    names: tuple[str, ...],
    clusters: np.ndarray | None,
    settings: StatsSettings,
    unit: str,
    seed: int | None,
    strata: pd.Series | None,
) -> TotalsBootstrap:
    """The one bootstrap behind both: resampled column totals of an ``(n, k)`` matrix."""
    res = bootstrap_statistic(
        values,
        lambda t: t,
        clusters=clusters,
        cluster_name=unit,
        n_boot=settings.n_boot,
        seed=settings.seed if seed is None else seed,
        jackknife=settings.ci_method == "bca",
        strata=strata,
    )
    return TotalsBootstrap(totals=res, columns=names, unit=unit)


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` with NaN where ``den`` is 0 (an undefined resample, dropped later)."""
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


#: cells of a pair's 2x2 table (first rater, second rater): yes/yes, yes/no, no/yes, no/no
CELLS = ("11", "10", "01", "00")


def pair_cells(a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """Per-observation 2x2 indicators of two 0/1/NaN columns (all zero where either is NaN).

    Summed over observations (and resamples) they are the pair's contingency table, from
    which kappa, precision, recall and F1 follow (:func:`pair_kappa`, :func:`pair_prf`).
    """
    both = np.isfinite(a) & np.isfinite(b)
    a0, b0 = np.nan_to_num(a), np.nan_to_num(b)
    return {
        "11": both * a0 * b0,
        "10": both * a0 * (1 - b0),
        "01": both * (1 - a0) * b0,
        "00": both * (1 - a0) * (1 - b0),
    }


def pair_table(get: Callable[[str], np.ndarray], a: str, b: str) -> np.ndarray:
    """(b, 2, 2) tables of the pair whose cell totals are the columns ``"{a}|{b}|<cell>"``."""
    c = [get(f"{a}|{b}|{cell}") for cell in CELLS]
    return np.stack([np.stack([c[0], c[1]], axis=-1), np.stack([c[2], c[3]], axis=-1)], axis=-2)


def pair_kappa(get: Callable[[str], np.ndarray], a: str, b: str) -> np.ndarray:
    """Cohen's kappa of the pair from its cell totals (NaN where undefined)."""
    return kappa_from_tables(pair_table(get, a, b))


def pair_prf(get: Callable[[str], np.ndarray], a: str, b: str) -> dict[str, np.ndarray]:
    """Precision, recall, F1 of ``a`` (prediction) against ``b`` (reference, 1 = positive)."""
    tp, fp, fn = get(f"{a}|{b}|11"), get(f"{a}|{b}|10"), get(f"{a}|{b}|01")
    return {
        "precision": ratio(tp, tp + fp),
        "recall": ratio(tp, tp + fn),
        "f1": ratio(2 * tp, 2 * tp + fp + fn),
    }


def nanmean_arrays(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """Element-wise mean of equally shaped arrays, skipping NaNs (NaN where all are NaN)."""
    stacked = np.stack(list(arrays), axis=-1)
    ok = np.isfinite(stacked)
    n = ok.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.where(ok, stacked, 0.0).sum(axis=-1) / np.maximum(n, 1), np.nan)


def n_shared(tb: TotalsBootstrap, a: str, b: str) -> int:
    """Observations on which both members of the pair ``(a, b)`` have a label."""
    return int(round(sum(tb.point(f"{a}|{b}|{cell}") for cell in CELLS)))


def point_getter(tb: TotalsBootstrap) -> Callable[[str], np.ndarray]:
    """A ``get(name)`` over the point totals (shape ``(1,)``), for per-rater details."""
    est = np.asarray(tb.totals.estimate)
    return lambda name: est[None, tb.col(name)]


# --------------------------------------------------------------------------------------
# Vectorized Spearman on resamples
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterResamples:
    """The resample counts of a set of clusters, as the bootstrap library draws them."""

    codes: np.ndarray  # (n,) cluster code per observation
    counts: np.ndarray  # (B, C)
    n_clusters: int
    unit: str
    seed: int
    digest: str

    @classmethod
    def draw(
        cls, labels: np.ndarray | None, n_obs: int, settings: StatsSettings, unit: str
    ) -> ClusterResamples:
        if labels is None:
            codes = np.arange(n_obs)
        else:
            codes, _ = pd.factorize(pd.Series(labels, dtype=object), sort=True)
        n_clusters = int(codes.max()) + 1 if n_obs else 0
        counts = resample_counts(n_clusters, settings.n_boot, settings.seed)
        digest = hashlib.sha256(f"C={n_clusters};B={settings.n_boot};".encode())
        digest.update(counts.tobytes())
        return cls(codes, counts, n_clusters, unit, settings.seed, digest.hexdigest())

    def spearman(
        self, x: np.ndarray, y: np.ndarray, rows: np.ndarray, bca: bool
    ) -> BootstrapResult:
        """Bootstrap of Spearman's rho of ``x``/``y`` on the observations ``rows``.

        Ratings take few distinct values, so each cluster's joint frequency table of
        ``(x, y)`` is a sufficient statistic: all resamples' tables are one product
        ``counts (B x C) @ tables (C x Gx*Gy)`` and rho follows from the tables
        (:func:`spearman_from_tables`). With many distinct values the per-observation
        weights are used instead (:func:`weighted_spearman`); both give scipy's rho of the
        expanded resample.
        """
        codes = self.codes[rows]
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        ux, ix = np.unique(x, return_inverse=True)
        uy, iy = np.unique(y, return_inverse=True)
        k = ux.size * uy.size
        jack = None
        if k <= max(64, codes.size):
            flat = codes * k + ix * uy.size + iy
            tables = np.bincount(flat, minlength=self.n_clusters * k).reshape(self.n_clusters, k)
            tables = tables.astype(np.float64)
            total = tables.sum(axis=0)
            shape = (ux.size, uy.size)
            reps = spearman_from_tables((self.counts @ tables).reshape(-1, *shape))
            est = spearman_from_tables(total.reshape(1, *shape))[0]
            if bca and self.n_clusters > 1:
                jack = spearman_from_tables((total[None, :] - tables).reshape(-1, *shape))
        else:
            rho = weighted_spearman(x, y)
            reps = rho(self.counts[:, codes].astype(np.float64))
            est = rho(np.ones((1, codes.size)))[0]
            if bca and self.n_clusters > 1:  # leave each cluster out (absent ones change nothing)
                jw = (codes[None, :] != np.arange(self.n_clusters)[:, None]).astype(np.float64)
                jack = rho(jw)
        return BootstrapResult(
            estimate=np.asarray(est),
            replicates=reps,
            jackknife=jack,
            n_clusters=self.n_clusters,
            cluster=self.unit,
            seed=self.seed,
            weights_digest=self.digest,
        )


def spearman_from_tables(tables: np.ndarray) -> np.ndarray:
    """Spearman's rho of samples given as joint frequency tables ``(b, Gx, Gy)``.

    Rows and columns are the sorted distinct values of x and y; a value with frequency ``w``
    after ``L`` smaller ones has mid-rank ``L + (w + 1) / 2`` (scipy's tie rule). NaN where a
    variable is constant.
    """
    t = np.asarray(tables, dtype=np.float64)
    wx, wy = t.sum(axis=2), t.sum(axis=1)
    rx = np.cumsum(wx, axis=1) - wx + (wx + 1.0) / 2.0
    ry = np.cumsum(wy, axis=1) - wy + (wy + 1.0) / 2.0
    sw = wx.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        dx = rx - ((wx * rx).sum(axis=1) / sw)[:, None]
        dy = ry - ((wy * ry).sum(axis=1) / sw)[:, None]
        cov = np.einsum("bij,bi,bj->b", t, dx, dy)
        vx = (wx * dx * dx).sum(axis=1)
        vy = (wy * dy * dy).sum(axis=1)
        rho = cov / np.sqrt(vx * vy)
    scale = np.maximum(sw, 1.0) ** 3
    ok = (sw >= 2) & (vx > 1e-12 * scale) & (vy > 1e-12 * scale)
    return np.where(ok, np.clip(rho, -1.0, 1.0), np.nan)


def mean_of_results(results: Sequence[BootstrapResult]) -> BootstrapResult:
    """Per-resample mean of several scalar results on the same resamples (NaNs skipped)."""
    if not results:
        raise ValueError("mean_of_results needs at least one result")
    est = np.nanmean([float(r.estimate) for r in results])
    with np.errstate(invalid="ignore"):
        reps = _nanmean_rows(np.column_stack([r.replicates for r in results]))
        jack = None
        if all(r.jackknife is not None for r in results):
            lengths = {len(r.jackknife) for r in results}  # type: ignore[arg-type]
            if len(lengths) == 1:
                jack = _nanmean_rows(np.column_stack([r.jackknife for r in results]))
    return replace(results[0], estimate=np.asarray(est), replicates=reps, jackknife=jack)


def _nanmean_rows(a: np.ndarray) -> np.ndarray:
    ok = np.isfinite(a)
    n = ok.sum(axis=1)
    s = np.where(ok, a, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, s / np.maximum(n, 1), np.nan)


# --------------------------------------------------------------------------------------
# Intervals as records state them
# --------------------------------------------------------------------------------------


def boot_interval(res: BootstrapResult, settings: StatsSettings, unit: str) -> Interval:
    """Interval of a scalar bootstrap result, in the configured method (BCa falls back)."""
    value = float(res.estimate)
    level = settings.ci_level
    method = settings.ci_method
    note = ""
    low, high = res.interval(level, method)  # type: ignore[arg-type]
    if method == "bca" and not (np.isfinite(low) and np.isfinite(high)):
        low, high = res.interval(level, "percentile")
        note = " (BCa undefined here: all resamples on one side or no jackknife; percentile)"
    n_valid = int(res.n_valid)
    dropped = (
        f", {res.n_boot - n_valid} resamples where it is undefined dropped"
        if n_valid < res.n_boot
        else ""
    )
    kind = "BCa" if method == "bca" and not note else "percentile"
    text = (
        f"{level:.0%} CI: cluster bootstrap over {unit} ({res.n_clusters})"
        f"{res.strata_phrase()}, B={res.n_boot}, {kind}{note}{dropped}"
    )
    lo = float(low) if np.isfinite(low) else None
    hi = float(high) if np.isfinite(high) else None
    if lo is None or hi is None:
        lo = hi = None
        text = f"{level:.0%} CI: undefined (the statistic is undefined on every resample)"
    used = "bca" if method == "bca" and not note else "percentile"
    return Interval(value, lo, hi, level, used, text, resamples=res)


def analytic_interval(
    value: float, low: float, high: float, text: str, *, level: float, method: str
) -> Interval:
    """A closed-form interval (both bounds, or neither when one is not finite)."""
    ok = math.isfinite(low) and math.isfinite(high)
    return Interval(
        float(value),
        float(low) if ok else None,
        float(high) if ok else None,
        level,
        method,
        text,
    )


#: the minimum number of *other* raters whose majority is a leave-one-out reference
MIN_OTHERS = 2


def leave_one_out_majority(
    votes: np.ndarray, rater: int, min_others: int = MIN_OTHERS
) -> tuple[np.ndarray, np.ndarray]:
    """The reference of one rater: the majority of the *other* raters on each item it voted on.

    ``votes`` is items x raters (0/1, NaN = no vote). The label is defined where ``rater``
    voted and at least ``min_others`` others did and they do not tie; a tie has no majority
    and is dropped (NaN), never turned into "no". Returns the label and the tie indicator
    (items dropped for a tie), so a record can say how many ties there were. One definition
    for every human ceiling and for every model scored against the same references, so the
    two are comparable by construction.
    """
    return loo_majority_from_counts(
        votes[:, rater],
        np.isfinite(votes).sum(axis=1),
        np.nansum(votes, axis=1),
        min_others,
    )


def loo_majority_from_counts(
    own: np.ndarray, n_voted: np.ndarray, n_yes: np.ndarray, min_others: int = MIN_OTHERS
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`leave_one_out_majority` from per-item vote counts of *all* raters.

    ``own`` is the rater's votes (0/1, NaN = no vote) on some items, ``n_voted`` and
    ``n_yes`` every rater's vote and YES counts on the same items (the rater included). The
    others' counts are the totals minus the rater's own vote, so a crowd of hundreds of
    raters needs no items x raters matrix: each rater costs only the items it voted on.
    """
    voted = np.isfinite(own)
    n_rest = n_voted - voted
    yes = n_yes - np.nan_to_num(own)
    eligible = (n_rest >= min_others) & voted
    tie = eligible & (2 * yes == n_rest)
    label = np.where(eligible & ~tie, (2 * yes > n_rest).astype(np.float64), np.nan)
    return label, tie


def loo_phrase(min_others: int = MIN_OTHERS) -> str:
    """The rule of :func:`leave_one_out_majority` as a method sentence states it."""
    return (
        "the majority of the other human raters of the same item (leave-one-human-out; at "
        f"least {min_others} of them; items where they tie dropped)"
    )


#: the words a method uses where its p-value and interval come from different methods and
#: may disagree (the consistency test of p-values and intervals accepts a record that says so)
DISAGREEMENT_EXPLAINED = "can disagree"
RESAMPLE_TEST = "cluster-bootstrap resample p (two-sided, same resamples as the interval)"


def resample_test(res: BootstrapResult, null: float) -> dict[str, Any]:
    """The ``extra`` fields of a test of ``null`` on the record's own resamples.

    ``p_value`` is :func:`analysis.stats.bootstrap.resample_p_value`; ``null`` says what
    was tested. Empty when the p-value is undefined (no defined resample).
    """
    p = resample_p_value(res, null)
    if not math.isfinite(p):
        return {}
    return {"null": float(null), "p_value": p, "test": RESAMPLE_TEST}


def resample_test_phrase(null: float, settings: StatsSettings, unit: str) -> str:
    """The method sentence of a resample test (and why it may disagree under BCa)."""
    text = (
        f"test of {null:g}: two-sided p = 2 x the smaller share of the {settings.n_boot} "
        f"resamples of {unit} on either side of {null:g} (floored at 1/B), from the same "
        "resamples as the interval"
    )
    if settings.ci_method == "bca":
        text += (
            "; the p-value inverts the percentile interval, so with the BCa interval printed "
            f"here the two {DISAGREEMENT_EXPLAINED} near the boundary"
        )
    return text


def p_interval_disagreement(record: Mapping[str, Any], level: float) -> str | None:
    """Why a record's unadjusted p-value and its interval disagree, or None when they agree.

    For a record (a ``numbers.json`` entry) with an interval and ``extra.p_value`` of
    ``extra.null``: "p < 1 - level" must equal "the interval excludes the null", unless the
    method says the two come from different methods and :data:`DISAGREEMENT_EXPLAINED`.
    A p-value without its null is itself reported (the record must say what it tested).
    """
    extra = record.get("extra") or {}
    p = extra.get("p_value")
    if p is None:
        return None
    if extra.get("null") is None:
        return f"p_value {p} without extra.null"
    low, high = record.get("ci_low"), record.get("ci_high")
    if low is None or high is None:
        return None
    null = float(extra["null"])
    significant = float(p) < 1.0 - level
    excludes = null < float(low) or null > float(high)
    if significant == excludes or DISAGREEMENT_EXPLAINED in str(record.get("method", "")):
        return None
    return (
        f"p = {float(p):.4g} {'<' if significant else '>='} {1.0 - level:.2g} but the interval "
        f"[{float(low):.4g}, {float(high):.4g}] {'excludes' if excludes else 'contains'} {null:g}"
    )


def adjust_pvalues(pvalues: Mapping[str, float], settings: StatsSettings) -> dict[str, float]:
    """Family-wise (Holm) or false-discovery (BH) adjusted p-values via statsmodels."""
    keys = sorted(k for k, p in pvalues.items() if math.isfinite(p))
    if not keys:
        return {}
    _, adj, _, _ = multipletests([pvalues[k] for k in keys], method=settings.multiple_comparisons)
    return {k: float(p) for k, p in zip(keys, adj, strict=True)}


def correction_name(settings: StatsSettings) -> str:
    return CORRECTIONS[settings.multiple_comparisons]


# --------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------


def key_part(name: Any) -> str:
    """A rater, model or source id as a key component (whitespace is not allowed in keys)."""
    text = str(name).strip()
    if not text:
        raise StudyDataError("an empty rater/model/source id cannot name a record key")
    return "_".join(text.split())


def make_record(
    key: str,
    interval: Interval,
    *,
    fmt: str,
    method: str,
    code: str,
    n: int,
    seed: int | None,
    extra: Mapping[str, Any] | None = None,
    unit: str = "",
) -> Record | None:
    """A record, or None when the value is undefined (the key is then absent)."""
    if not math.isfinite(interval.value):
        return None
    return Record(
        key=key,
        value=float(interval.value),
        fmt=fmt,
        method=f"{method}; {interval.text}",
        code=code,
        ci_low=interval.low,
        ci_level=interval.level,
        ci_high=interval.high,
        n=int(n),
        seed=seed,
        unit=unit,
        extra=dict(_plain(extra or {})),
    )


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


def collect(records: Sequence[Record | None]) -> list[Record]:
    """Drop absent records and sort by key (deterministic output)."""
    return sorted((r for r in records if r is not None), key=lambda r: r.key)
