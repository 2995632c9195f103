"""The bootstrap engine's weighted-row form: statistics that are not sums, on all resamples.

:mod:`analysis.stats.bootstrap` bootstraps statistics that are functions of per-cluster sums;
this module writes any statistic as a function of row weights, which
:func:`analysis.stats.resampling.weighted_rows` evaluates on the *same* resample counts as
the totals path draws for a design (so the two pair). ``analysis.learn`` produces held-out
predictions and scores them with these statistics.

A cluster bootstrap (resample users or prompts with replacement) is the same as giving each
held-out row a weight equal to how often its cluster was drawn. Every metric here is written
for a weight matrix ``W`` of shape (resamples, rows), so all resamples of a chunk are one
numpy expression: AUROC, precision/recall/F1, rates, Spearman's rho and Kendall's tau-b are
exactly the values the resampled data set would give (ties included), without a Python loop
over resamples. The point estimate is the same function at ``W = 1``.

The held-out predictions are fixed while clusters are resampled, so the interval covers the
sampling of evaluation users/prompts, not the variability of retraining (stated in every
record's method sentence).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from analysis.stats.bootstrap import cluster_membership
from analysis.stats.concordance import ConcordancePairs

#: A statistic of weighted rows: (resamples, rows) weights -> (resamples,) values (NaN allowed).
Statistic = Callable[[np.ndarray], np.ndarray]


def _onehot(values: np.ndarray) -> tuple[sparse.csr_matrix, np.ndarray]:
    """Sparse (rows x unique values) indicator in ascending value order, and each row's code."""
    _, codes = np.unique(values, return_inverse=True)
    n_unique = int(codes.max()) + 1 if len(codes) else 0
    mat = sparse.csr_matrix(
        (np.ones(len(codes)), (np.arange(len(codes)), codes)), shape=(len(codes), n_unique)
    )
    return mat, codes


def _per_value(W: np.ndarray, onehot: sparse.csr_matrix) -> np.ndarray:
    """Total weight at each unique value: (resamples, unique values)."""
    return np.asarray((onehot.T @ W.T).T)


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


@dataclass(frozen=True)
class WeightedSums:
    """A statistic of weighted column sums: ``finish(W @ columns)``.

    ``W @ columns`` is ``counts @ (per-cluster sums of columns)`` for a cluster resample, so
    :func:`bootstrap` evaluates it on clusters (B x clusters) rather than on rows (B x rows,
    which grows with the study). The columns here are counts (0/1 cells, judgments), whose
    sums are exact in float64 in either order, so both paths give the same bits.
    """

    columns: np.ndarray  # (rows, m)
    finish: Callable[[np.ndarray], np.ndarray]  # (resamples, m) sums -> (resamples,)

    def __call__(self, W: np.ndarray) -> np.ndarray:
        return self.finish(W @ self.columns)


def _sums(*columns: np.ndarray) -> np.ndarray:
    return np.column_stack([np.asarray(c, dtype=np.float64) for c in columns])


def weighted_ratio(numerator: np.ndarray, denominator: np.ndarray) -> Statistic:
    """Ratio of two weighted sums (e.g. accepted judgments / all judgments over attributes)."""
    return WeightedSums(_sums(numerator, denominator), lambda t: _safe_div(t[:, 0], t[:, 1]))


def weighted_prf(y_true: np.ndarray, y_pred: np.ndarray, which: str) -> Statistic:
    """Precision, recall or F1 of the positive class on weighted rows."""
    if which not in ("precision", "recall", "f1"):
        raise ValueError(f"weighted_prf: unknown metric {which!r}")
    y = np.asarray(y_true, dtype=bool)
    p = np.asarray(y_pred, dtype=bool)

    def finish(t: np.ndarray) -> np.ndarray:
        tp, fp, fn = t[:, 0], t[:, 1], t[:, 2]
        if which == "precision":
            return _safe_div(tp, tp + fp)
        if which == "recall":
            return _safe_div(tp, tp + fn)
        return _safe_div(2 * tp, 2 * tp + fp + fn)

    return WeightedSums(_sums(y & p, ~y & p, y & ~p), finish)


def weighted_kappa(a: np.ndarray, b: np.ndarray) -> Statistic:
    """Cohen's kappa of two binary labelings on weighted rows (NaN where chance agreement is 1).

    The resampled 2x2 table (yes/yes ``t11``, yes/no ``t10``, no/yes ``t01``, no/no ``t00``) is
    four weighted sums, so kappa on every resample is one matrix product; written as
    ``2 (t11 t00 - t10 t01) / ((t11 + t10)(t10 + t00) + (t11 + t01)(t01 + t00))`` it is exactly
    0 (not a rounding residue) when the labelings are independent in the table. It equals
    ``sklearn.metrics.cohen_kappa_score`` on the data set that repeats each row by its weight.
    """
    x = np.asarray(a, dtype=bool)
    y = np.asarray(b, dtype=bool)

    def finish(t: np.ndarray) -> np.ndarray:
        t11, t10, t01, t00 = t.T
        den = (t11 + t10) * (t10 + t00) + (t11 + t01) * (t01 + t00)
        return _safe_div(2.0 * (t11 * t00 - t10 * t01), den) + 0.0  # + 0.0: never "-0"

    return WeightedSums(_sums(x & y, x & ~y, ~x & y, ~x & ~y), finish)


def weighted_difference(first: Statistic, second: Statistic) -> Statistic:
    """``first - second`` on the same weights: a paired difference on the same resamples."""
    if isinstance(first, WeightedSums) and isinstance(second, WeightedSums):
        m = first.columns.shape[1]
        return WeightedSums(
            np.hstack([first.columns, second.columns]),
            lambda t: first.finish(t[:, :m]) - second.finish(t[:, m:]),
        )
    return lambda W: first(W) - second(W)


def weighted_auroc(y_true: np.ndarray, score: np.ndarray) -> Statistic:
    """Area under the ROC curve (ties count one half) on weighted rows."""
    y = np.asarray(y_true, dtype=np.float64)
    onehot, _ = _onehot(np.asarray(score, dtype=np.float64))

    def stat(W: np.ndarray) -> np.ndarray:
        pos = _per_value(W * y, onehot)
        neg = _per_value(W * (1.0 - y), onehot)
        below = np.cumsum(neg, axis=1) - neg
        num = np.sum(pos * (below + 0.5 * neg), axis=1)
        return _safe_div(num, pos.sum(axis=1) * neg.sum(axis=1))

    return stat


def _midranks(W: np.ndarray, onehot: sparse.csr_matrix, codes: np.ndarray) -> np.ndarray:
    """(resamples, rows) mid-ranks of the values of ``onehot``/``codes`` under weights ``W``.

    A value shared by total weight ``w`` after weight ``L`` of smaller values occupies ranks
    ``L+1 .. L+w``; its mid-rank is ``L + (w + 1) / 2``, exactly the rank scipy gives the
    expanded sample.
    """
    g = _per_value(W, onehot)
    mid = np.cumsum(g, axis=1) - g + (g + 1.0) / 2.0
    return mid[:, codes]


def weighted_spearman(x: np.ndarray, y: np.ndarray) -> Statistic:
    """Spearman's rho of the resampled data (average ranks for ties) on weighted rows.

    Equal to ``scipy.stats.spearmanr`` on the sample that repeats each pair by its weight;
    NaN where a variable is constant (variance below rounding) or fewer than two rows remain.
    The project's one weighted Spearman: the held-out metrics of ``analysis.learn`` and the
    study's rating correlations (:func:`analysis.stats.resampling.spearman`) both use it.
    """
    hx, cx = _onehot(np.asarray(x, dtype=np.float64))
    hy, cy = _onehot(np.asarray(y, dtype=np.float64))

    def stat(W: np.ndarray) -> np.ndarray:
        W = np.asarray(W, dtype=np.float64)
        rx, ry = _midranks(W, hx, cx), _midranks(W, hy, cy)
        sw = W.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            mx = (W * rx).sum(axis=1) / sw
            my = (W * ry).sum(axis=1) / sw
            dx, dy = rx - mx[:, None], ry - my[:, None]
            cov = (W * dx * dy).sum(axis=1)
            vx = (W * dx * dx).sum(axis=1)
            vy = (W * dy * dy).sum(axis=1)
        return rank_correlation(cov, vx, vy, sw)

    return stat


def rank_correlation(cov: np.ndarray, vx: np.ndarray, vy: np.ndarray, sw: np.ndarray) -> np.ndarray:
    """Pearson's r of the mid-ranks from their weighted co- and variances (``sw``: the total
    weight): NaN where fewer than two observations weigh or a variable is constant."""
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = cov / np.sqrt(vx * vy)
    scale = np.maximum(sw, 1.0) ** 3
    ok = (sw >= 2) & (vx > 1e-12 * scale) & (vy > 1e-12 * scale)
    return np.where(ok, np.clip(rho, -1.0, 1.0), np.nan)


def weighted_kendall(x: np.ndarray, y: np.ndarray) -> Statistic:
    """Kendall's tau-b of the resampled data on weighted rows.

    Concordant minus discordant pairs come from a weighted merge sort
    (:class:`analysis.stats.concordance.ConcordancePairs`, O(n log n) per resample; copies of
    one row are tied pairs); with integer weights the sum is exact, so tau-b is the value
    scipy gives the expanded sample.
    """
    xv = np.asarray(x, dtype=np.float64)
    yv = np.asarray(y, dtype=np.float64)
    hx, _ = _onehot(xv)
    hy, _ = _onehot(yv)
    net_pairs = ConcordancePairs(xv, yv)

    def stat(W: np.ndarray) -> np.ndarray:
        num = net_pairs(W)
        total = W.sum(axis=1)
        n0 = total * (total - 1.0) / 2.0
        gx, gy = _per_value(W, hx), _per_value(W, hy)
        n1 = np.sum(gx * (gx - 1.0) / 2.0, axis=1)
        n2 = np.sum(gy * (gy - 1.0) / 2.0, axis=1)
        return _safe_div(num, np.sqrt(np.maximum(n0 - n1, 0) * np.maximum(n0 - n2, 0)))

    return stat


def choose_unit(
    frame: pd.DataFrame, units: Sequence[str], min_clusters: int
) -> tuple[str, np.ndarray]:
    """The first resampling unit with at least ``min_clusters`` clusters in ``frame``.

    ``item`` (each row its own cluster) is always available as the last resort. A unit with
    too few clusters (the real pilot-2 test set holds one prompt) would give a degenerate
    interval, so the record says which unit was used instead.
    """
    for unit in units:
        if unit == "item":
            return "item", np.arange(len(frame)).astype(str)
        col = f"{unit}_id"
        if col in frame.columns and frame[col].nunique() >= min_clusters:
            return unit, frame[col].astype(str).to_numpy()
    return "item", np.arange(len(frame)).astype(str)


#: cells (resamples x rows) of one chunk of row weights that a statistic gets at a time
_MAX_WEIGHT_CELLS = 2_000_000


def resamples_per_chunk(n_rows: int) -> int:
    """How many resamples' row weights one call of a statistic gets: at most 200, and at most
    ``_MAX_WEIGHT_CELLS`` weights in all.

    Why bounded by cells: a statistic makes several arrays of the chunk's shape (Kendall's
    merge sort gathers, cumulative sums and products at every level). At the study's size
    200 resamples are a few MB; at 100 times its ratings they were hundreds of MB per array,
    far out of the CPU caches, and the same Kendall bootstrap ran twice as long as in chunks
    of about 20. Each resample's value is computed on its own, so the chunking never changes
    a result.
    """
    return max(1, min(200, _MAX_WEIGHT_CELLS // max(n_rows, 1)))


def evaluate_counts(stat: Statistic, counts: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``stat`` on the row weights of every row of ``counts`` (resamples x clusters).

    A :class:`WeightedSums` statistic is evaluated on clusters (``counts @ cluster sums``),
    anything else on the rows' weights ``counts[:, codes]`` in chunks
    (:func:`resamples_per_chunk`).
    """
    if isinstance(stat, WeightedSums):
        sums = cluster_membership(codes, counts.shape[1]) @ stat.columns
        return stat.finish(counts.astype(np.float64) @ sums)
    chunk = resamples_per_chunk(len(codes))
    parts = [
        stat(counts[s : s + chunk][:, codes].astype(np.float64))
        for s in range(0, len(counts), chunk)
    ]
    return np.concatenate(parts) if parts else np.empty(0)
