"""Inter-rater agreement on long-format ratings: the coefficients the study reports.

Every function takes a long DataFrame with columns ``item``, ``rater`` and ``label`` (one row
per rating; a missing rating is an absent row, never a NaN label) and returns the point
estimate as a float. Humans and models are simply raters; the caller decides who is who.

Categories
    The category set of a computation is, unless ``categories`` is given, every label that
    occurs anywhere in ``df``, sorted. It matters in two places: the position-based weights of
    weighted kappa (``linear``: ``|i - j|``, ``quadratic``: ``(i - j)**2`` over positions in
    that list, as Cohen 1968 and scikit-learn define them) and the number of categories ``q``
    in Gwet's AC1. Pass ``categories`` to fix the scale (e.g. ``[1, 2, 3, 4, 5]`` when a
    rating is never used).

Edge cases (the same rule everywhere; no coefficient silently turns into 0 or 1)
    * input that cannot define an agreement at all raises :class:`AgreementError`: a rater
      that is not in the data, a rater paired with itself, two raters without a shared item,
      data in which no item has two ratings (a single rater), an empty frame;
    * malformed input raises :class:`RatingsInputError` naming the row and field (missing
      column, NaN label, the same rater twice on one item);
    * a coefficient whose chance term makes it 0/0 (every rating in one category: expected
      agreement is 1, or AC1 with fewer than two categories) is ``nan``, with an
      :class:`UndefinedAgreementWarning` from the scalar functions. Matrix functions
      (:func:`pairwise_cohen_kappa`) put ``nan`` in such cells (and in pairs that share no
      item) without a warning, and :func:`group_mean_kappa` averages only defined cells.

References (the tests reproduce their worked examples)
    * Cohen, J. (1960). A coefficient of agreement for nominal scales. *Educ. Psychol. Meas.*
      20, 37-46; Cohen, J. (1968). Weighted kappa. *Psychol. Bull.* 70, 213-220.
    * Scott, W. A. (1955). Reliability of content analysis: the case of nominal scale coding.
      *Public Opinion Quarterly* 19, 321-325.
    * Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. *Psychol.
      Bull.* 76, 378-382.
    * Gwet, K. L. (2008). Computing inter-rater reliability and its variance in the presence
      of high agreement. *Br. J. Math. Stat. Psychol.* 61, 29-48; Gwet, K. L. (2014).
      *Handbook of Inter-Rater Reliability*, 4th ed., Advanced Analytics (ch. 2 and 5: the
      coefficients with missing ratings, i.e. a varying number of raters per item).
    * Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Annenberg School
      for Communication, University of Pennsylvania.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal

import krippendorff
import numpy as np
import pandas as pd

__all__ = [
    "AgreementError",
    "RatingsInputError",
    "UndefinedAgreementWarning",
    "RatingMatrix",
    "AdditiveForm",
    "rating_matrix",
    "LongCodes",
    "long_codes",
    "percent_agreement",
    "cohen_kappa",
    "scott_pi",
    "fleiss_kappa",
    "krippendorff_alpha",
    "gwet_ac1",
    "pairwise_cohen_kappa",
    "group_pairs",
    "group_mean_kappa",
    "kappa_from_tables",
    "disagreement_weights",
    "additive_form",
    "validate_ratings",
    "pairwise_tables",
    "group_key",
    "LONG_COLUMNS",
]

#: the columns of the long format every function takes
LONG_COLUMNS = ("item", "rater", "label")
Weights = Literal["linear", "quadratic"] | None
Level = Literal["nominal", "ordinal", "interval", "ratio"]
#: expected agreement this close to 1 (or expected disagreement this close to 0) is "1"
_TOL = 1e-12


class AgreementError(ValueError):
    """The data cannot define the requested agreement (unknown rater, no shared items, ...)."""


class RatingsInputError(ValueError):
    """The long-format ratings are malformed; the message names the row and the field."""


class UndefinedAgreementWarning(RuntimeWarning):
    """A coefficient is 0/0 (all ratings in one category) and was returned as NaN."""


# --------------------------------------------------------------------------------------
# Input: long format -> an item x rater matrix of category codes
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RatingMatrix:
    """Ratings as an ``items x raters`` matrix of category codes (``-1`` = not rated).

    This is the one internal representation every coefficient and the bootstrap work on, so
    a point estimate and its bootstrap replicates cannot disagree about the data.
    """

    items: np.ndarray  # (n,) item ids, sorted
    raters: tuple[Any, ...]  # (R,) rater ids
    categories: tuple[Any, ...]  # (q,) labels; codes index into this
    codes: np.ndarray  # (n, R) int, -1 where the rater did not rate the item

    @property
    def observed(self) -> np.ndarray:
        """(n, R) bool: which rater rated which item."""
        return self.codes >= 0

    def onehot(self, dtype: type = np.float64) -> np.ndarray:
        """(n, R, q) indicator of rater r giving item i label k (all zero when missing)."""
        q = len(self.categories)
        return (self.codes[:, :, None] == np.arange(q)[None, None, :]).astype(dtype)

    def category_counts(self) -> np.ndarray:
        """(n, q): how many raters put item i into category k (Fleiss's ``n_ij``).

        Counted from the observed codes, not summed over :meth:`onehot`: a crowd's
        ``(n, R, q)`` indicator array grows as items x raters.
        """
        n, q = self.codes.shape[0], len(self.categories)
        item, _ = np.nonzero(self.codes >= 0)
        cell = item * q + self.codes[self.codes >= 0]
        return np.bincount(cell, minlength=n * q).reshape(n, q).astype(np.float64)

    def rater_index(self, rater: Any) -> int:
        try:
            return self.raters.index(rater)
        except ValueError:
            raise AgreementError(
                f"rater {rater!r} has no ratings in the data; raters present: "
                f"{', '.join(map(repr, self.raters))}"
            ) from None


def _sorted_unique(values: Sequence[Any], what: str) -> list[Any]:
    uniq = pd.unique(pd.Series(values, dtype=object))
    try:
        return sorted(uniq)
    except TypeError as exc:
        kinds = sorted({type(v).__name__ for v in uniq})
        raise RatingsInputError(
            f"{what} values cannot be ordered (mixed types: {', '.join(kinds)}); "
            f"pass them in one type or give the order explicitly"
        ) from exc


def validate_ratings(df: pd.DataFrame) -> pd.DataFrame:
    """Check the long format; return the three columns. Errors name the row and the field."""
    if not isinstance(df, pd.DataFrame):
        raise RatingsInputError(f"ratings must be a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in LONG_COLUMNS if c not in df.columns]
    if missing:
        raise RatingsInputError(
            f"ratings lack column(s) {missing}; expected {list(LONG_COLUMNS)} "
            f"(got {list(df.columns)})"
        )
    out = df.loc[:, list(LONG_COLUMNS)]
    for col in LONG_COLUMNS:
        null = out[col].isna().to_numpy()
        if null.any():
            row = out.index[np.flatnonzero(null)[0]]
            hint = "; a missing rating is an absent row, not a NaN label" if col == "label" else ""
            raise RatingsInputError(
                f"ratings row {row!r}: field {col!r} is missing ({int(null.sum())} such rows)"
                + hint
            )
    dup = out.duplicated(subset=["item", "rater"], keep=False).to_numpy()
    if dup.any():
        first = out.loc[dup].iloc[0]
        rows = out.index[
            dup & (out["item"] == first["item"]).to_numpy() & (out["rater"] == first["rater"])
        ]
        raise RatingsInputError(
            f"ratings rows {list(rows)}: rater {first['rater']!r} rated item "
            f"{first['item']!r} more than once (fields 'item', 'rater'); "
            "keep one rating per (item, rater)"
        )
    return out


@dataclass(frozen=True)
class LongCodes:
    """Long-format ratings as integer codes, one entry per rating (no items x raters array).

    The sparse form of :class:`RatingMatrix`: the same item, rater and category orders, so
    a coefficient computed from either agrees. What grows with raters and items at scale
    (hundreds of crowd annotators, most pairs sharing few items) is built from these codes.
    """

    items: np.ndarray  # (n,) item ids, sorted
    raters: tuple[Any, ...]  # (R,) rater ids
    categories: tuple[Any, ...]  # (q,) labels
    item: np.ndarray  # (N,) item code of each rating
    rater: np.ndarray  # (N,) rater code of each rating
    label: np.ndarray  # (N,) category code of each rating


def long_codes(
    df: pd.DataFrame,
    *,
    categories: Sequence[Any] | None = None,
    raters: Sequence[Any] | None = None,
) -> LongCodes:
    """Validate long-format ratings and code them (the orders :func:`rating_matrix` uses)."""
    data = validate_ratings(df)
    if data.empty:
        raise AgreementError("no ratings: the frame is empty")
    cats = list(categories) if categories is not None else _sorted_unique(data["label"], "label")
    if len(set(cats)) != len(cats):
        raise RatingsInputError(f"categories contain duplicates: {cats}")
    rater_ids = list(raters) if raters is not None else _sorted_unique(data["rater"], "rater")
    items = np.asarray(_sorted_unique(data["item"], "item"), dtype=object)

    cat_index = {c: k for k, c in enumerate(cats)}
    label_codes = data["label"].map(cat_index)
    if label_codes.isna().any():
        bad = data.loc[label_codes.isna()].iloc[0]
        row = data.index[label_codes.isna().to_numpy()][0]
        raise RatingsInputError(
            f"ratings row {row!r}: field 'label' = {bad['label']!r} is not one of the "
            f"categories {cats}"
        )
    rater_index = {r: j for j, r in enumerate(rater_ids)}
    rcodes = data["rater"].map(rater_index)
    if rcodes.isna().any():
        extra = sorted(map(str, set(data.loc[rcodes.isna(), "rater"])))
        raise AgreementError(f"ratings by raters not in the given `raters` list: {extra}")
    return LongCodes(
        items=items,
        raters=tuple(rater_ids),
        categories=tuple(cats),
        item=pd.Index(items).get_indexer(data["item"]).astype(np.int64),
        rater=rcodes.to_numpy(dtype=np.int64),
        label=label_codes.to_numpy(dtype=np.int64),
    )


def rating_matrix(
    df: pd.DataFrame,
    *,
    categories: Sequence[Any] | None = None,
    raters: Sequence[Any] | None = None,
) -> RatingMatrix:
    """Turn long-format ratings into a :class:`RatingMatrix`.

    ``raters`` fixes the rater order (default: sorted ids) and may name raters the data lack
    only if they are absent on purpose; they then have no ratings. ``categories`` fixes the
    category list (default: the sorted labels present); a label outside it is an error.
    """
    lc = long_codes(df, categories=categories, raters=raters)
    codes = np.full((len(lc.items), len(lc.raters)), -1, dtype=np.int64)
    codes[lc.item, lc.rater] = lc.label
    return RatingMatrix(items=lc.items, raters=lc.raters, categories=lc.categories, codes=codes)


def _warn_undefined(what: str) -> None:
    warnings.warn(
        f"{what} is undefined (0/0): all ratings fall into one category, so chance "
        "agreement is 1; returning NaN",
        UndefinedAgreementWarning,
        stacklevel=3,
    )


# --------------------------------------------------------------------------------------
# Two raters: contingency tables
# --------------------------------------------------------------------------------------


def disagreement_weights(q: int, weights: Weights = None) -> np.ndarray:
    """(q, q) disagreement weights over category positions (0 on the diagonal).

    ``None``: 1 off the diagonal (Cohen 1960); ``"linear"``: ``|i - j|``; ``"quadratic"``:
    ``(i - j)**2`` (Cohen 1968). Any positive rescaling gives the same kappa.
    """
    pos = np.arange(q, dtype=np.float64)
    diff = np.abs(pos[:, None] - pos[None, :])
    if weights is None:
        return (diff > 0).astype(np.float64)
    if weights == "linear":
        return diff
    if weights == "quadratic":
        return diff**2
    raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")


def kappa_from_tables(
    tables: np.ndarray, weights: Weights = None, *, pooled: bool = False
) -> np.ndarray:
    """Cohen's kappa (or Scott's pi with ``pooled=True``) of contingency tables.

    ``tables`` has shape ``(..., q, q)`` (rows: first rater, columns: second rater) and may
    hold many tables at once: every bootstrap resample of every rater pair in one call.
    Kappa is ``1 - sum(w * p_obs) / sum(w * p_chance)`` with disagreement weights ``w``;
    chance is the product of the two raters' marginals (Cohen) or of their pooled marginal
    (Scott). Tables with no items, or with zero expected disagreement (one category), give NaN.
    """
    t = np.asarray(tables, dtype=np.float64)
    lead, q = t.shape[:-2], t.shape[-1]
    w = disagreement_weights(q, weights)
    # Categories first, tables last: each sum below runs over long contiguous rows, which is
    # what makes millions of tiny (2x2) tables fast.
    c = np.ascontiguousarray(np.moveaxis(t.reshape(-1, q, q), 0, -1))  # (q, q, M)
    n = c.sum(axis=(0, 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        row = c.sum(axis=1) / n
        col = c.sum(axis=0) / n
        if pooled:
            row = col = (row + col) / 2.0
        observed = np.tensordot(w, c, axes=([0, 1], [0, 1])) / n
        expected = np.einsum("kM,kl,lM->M", row, w, col)
        value = 1.0 - observed / expected
    value = np.where((n > 0) & (expected > _TOL), value, np.nan)
    return value.reshape(lead)


def _pair_table(m: RatingMatrix, rater_a: Any, rater_b: Any) -> np.ndarray:
    a, b = m.rater_index(rater_a), m.rater_index(rater_b)
    if a == b:
        raise AgreementError(f"agreement of rater {rater_a!r} with itself is not a statistic")
    shared = m.observed[:, a] & m.observed[:, b]
    if not shared.any():
        raise AgreementError(f"raters {rater_a!r} and {rater_b!r} share no rated item")
    q = len(m.categories)
    table = np.zeros((q, q), dtype=np.float64)
    np.add.at(table, (m.codes[shared, a], m.codes[shared, b]), 1.0)
    return table


def cohen_kappa(
    df: pd.DataFrame,
    rater_a: Any,
    rater_b: Any,
    weights: Weights = None,
    *,
    categories: Sequence[Any] | None = None,
) -> float:
    """Cohen's kappa of two raters on the items both rated (weighted: Cohen 1968).

    Raises :class:`AgreementError` for an unknown rater or no shared item; NaN (with a
    warning) when both raters use a single category on the shared items.
    """
    m = rating_matrix(df, categories=categories)
    value = float(kappa_from_tables(_pair_table(m, rater_a, rater_b), weights))
    if np.isnan(value):
        _warn_undefined(f"Cohen's kappa of {rater_a!r} and {rater_b!r}")
    return value


def scott_pi(
    df: pd.DataFrame, rater_a: Any, rater_b: Any, *, categories: Sequence[Any] | None = None
) -> float:
    """Scott's pi (1955) of two raters on their shared items: chance from pooled marginals."""
    m = rating_matrix(df, categories=categories)
    value = float(kappa_from_tables(_pair_table(m, rater_a, rater_b), pooled=True))
    if np.isnan(value):
        _warn_undefined(f"Scott's pi of {rater_a!r} and {rater_b!r}")
    return value


# --------------------------------------------------------------------------------------
# Many raters: coefficients as functions of per-item sums ("additive forms")
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AdditiveForm:
    """A coefficient written as ``finish(contributions.sum(axis=0))``.

    ``contributions`` has one row per item. Fleiss' kappa, Gwet's AC1, percent agreement and
    Krippendorff's alpha are all functions of per-item sums, so a cluster bootstrap only
    needs the per-cluster sums and one matrix product (see :mod:`analysis.stats.bootstrap`).
    ``finish`` accepts totals of shape ``(..., k)`` and returns ``(...)``.
    """

    contributions: np.ndarray  # (n_items, k)
    finish: Callable[[np.ndarray], np.ndarray]
    items: np.ndarray  # (n_items,) ids aligned with the rows


def _multi_rater_parts(m: RatingMatrix) -> tuple[np.ndarray, int]:
    """Per-item columns ``[has2, agree, 1, pi_1..pi_q]`` used by Fleiss, AC1 and pa.

    ``agree_i = sum_k r_ik (r_ik - 1) / (r_i (r_i - 1))`` is the share of agreeing rater pairs
    on item i (defined when ``r_i >= 2``); ``pi_ik = r_ik / r_i`` is item i's distribution.
    """
    if len(m.raters) < 2:
        raise AgreementError(
            f"agreement needs at least two raters; the data have one ({m.raters[0]!r})"
        )
    counts = m.category_counts()
    r = counts.sum(axis=1)
    rated = r > 0
    counts, r = counts[rated], r[rated]
    has2 = r >= 2
    if not has2.any():
        raise AgreementError(
            "no item has ratings from two raters, so agreement is undefined "
            "(each item was rated once)"
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        agree = np.where(has2, (counts * (counts - 1)).sum(axis=1) / (r * (r - 1)), 0.0)
    parts = np.column_stack([has2.astype(np.float64), agree, np.ones_like(r), counts / r[:, None]])
    return parts, int(rated.sum())


def _multi_rater_form(m: RatingMatrix, chance: Literal["fleiss", "gwet", "none"]) -> AdditiveForm:
    parts, _ = _multi_rater_parts(m)
    q = len(m.categories)
    rated = m.observed.any(axis=1)

    def finish(totals: np.ndarray) -> np.ndarray:
        t = np.asarray(totals, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            pa = t[..., 1] / t[..., 0]
            if chance == "none":
                return pa
            pi = t[..., 3:] / t[..., 2:3]
            if chance == "fleiss":
                pe = (pi**2).sum(axis=-1)
                value = (pa - pe) / (1.0 - pe)
                return np.where(1.0 - pe > _TOL, value, np.nan)
            if q < 2:
                return np.full(pa.shape, np.nan)
            pe = (pi * (1.0 - pi)).sum(axis=-1) / (q - 1)
            return (pa - pe) / (1.0 - pe)

    return AdditiveForm(contributions=parts, finish=finish, items=m.items[rated])


def percent_agreement(
    df: pd.DataFrame, rater_a: Any | None = None, rater_b: Any | None = None
) -> float:
    """Share of agreeing ratings: of two given raters on their shared items, or of all raters.

    Without raters it is the multi-rater form (Fleiss 1971 ``P-bar``; Gwet 2014 with missing
    ratings): for each item with at least two ratings the share of rater pairs that agree,
    averaged over those items. Items rated once do not count.
    """
    if (rater_a is None) != (rater_b is None):
        raise AgreementError("give both rater_a and rater_b, or neither")
    m = rating_matrix(df)
    if rater_a is not None:
        table = _pair_table(m, rater_a, rater_b)
        return float(np.trace(table) / table.sum())
    form = _multi_rater_form(m, "none")
    return float(form.finish(form.contributions.sum(axis=0)))


def fleiss_kappa(df: pd.DataFrame, *, categories: Sequence[Any] | None = None) -> float:
    """Fleiss' kappa, generalized to a varying number of raters per item.

    With ``r_ik`` raters putting item ``i`` in category ``k`` and ``r_i = sum_k r_ik``:

    * ``p_a = mean over items with r_i >= 2 of sum_k r_ik (r_ik - 1) / (r_i (r_i - 1))``
    * ``pi_k = mean over rated items of r_ik / r_i``; ``p_e = sum_k pi_k ** 2``
    * ``kappa = (p_a - p_e) / (1 - p_e)``

    This is Gwet's (2014, *Handbook of Inter-Rater Reliability*, 4th ed., ch. 2) form of
    Fleiss' generalized kappa for missing ratings (irrCAC's ``fleiss.kappa.raw``). With the
    same number of raters on every item it is exactly Fleiss (1971). The naive use of the
    fixed-``n`` formula (``P_i = (sum_k r_ik**2 - n) / (n (n - 1))`` with one ``n`` for all
    items) is wrong as soon as items have different numbers of raters. Fleiss & Cuzick (1979)
    give another unequal-raters estimator for two categories that pools over ratings rather
    than averaging over items; it is not what is computed here.
    """
    m = rating_matrix(df, categories=categories)
    form = _multi_rater_form(m, "fleiss")
    value = float(form.finish(form.contributions.sum(axis=0)))
    if np.isnan(value):
        _warn_undefined("Fleiss' kappa")
    return value


def gwet_ac1(df: pd.DataFrame, *, categories: Sequence[Any] | None = None) -> float:
    """Gwet's AC1 for any number of raters, missing ratings allowed (Gwet 2008; 2014 ch. 5).

    ``p_a`` as in :func:`fleiss_kappa`; ``p_e = sum_k pi_k (1 - pi_k) / (q - 1)`` with the
    same ``pi_k`` and ``q`` = the number of categories (observed labels unless
    ``categories`` is given: AC1 depends on ``q``). NaN with a warning when ``q < 2``.
    With two raters and no missing data this is Gwet's two-rater AC1. Note that, by Gwet's
    definition, when ``categories`` names two or more categories but every rating falls in
    one, ``p_e = 0`` and AC1 equals the raw agreement (1): that is the coefficient's
    published behaviour, not a fallback value.
    """
    m = rating_matrix(df, categories=categories)
    form = _multi_rater_form(m, "gwet")
    value = float(form.finish(form.contributions.sum(axis=0)))
    if np.isnan(value):
        _warn_undefined("Gwet's AC1 (fewer than two categories)")
    return value


def _alpha_value_domain(m: RatingMatrix, level: Level) -> np.ndarray:
    if level in ("interval", "ratio"):
        try:
            return np.asarray(m.categories, dtype=np.float64)
        except (TypeError, ValueError):
            raise RatingsInputError(
                f"Krippendorff's alpha at the {level} level needs numeric labels; got "
                f"{list(m.categories)}"
            ) from None
    # nominal and ordinal only use the order of the categories
    return np.arange(len(m.categories), dtype=np.float64)


def krippendorff_alpha(
    df: pd.DataFrame,
    level: Level = "nominal",
    *,
    categories: Sequence[Any] | None = None,
) -> float:
    """Krippendorff's alpha (2011) with missing ratings, via the ``krippendorff`` package.

    ``level`` is the metric: ``nominal`` (any labels), ``ordinal`` (order = ``categories``,
    default the sorted labels), ``interval`` and ``ratio`` (numeric labels; the differences
    are the label values'). Items with one rating are not pairable and drop out, as in
    Krippendorff's definition. NaN with a warning when only one value occurs.
    """
    if level not in ("nominal", "ordinal", "interval", "ratio"):
        raise ValueError(f"level must be nominal, ordinal, interval or ratio, got {level!r}")
    m = rating_matrix(df, categories=categories)
    if len(m.raters) < 2:
        raise AgreementError(
            f"agreement needs at least two raters; the data have one ({m.raters[0]!r})"
        )
    counts = m.category_counts()
    counts = counts[counts.sum(axis=1) >= 2]  # units with one value are not pairable
    if not len(counts):
        raise AgreementError("no item has ratings from two raters (nothing is pairable)")
    if (counts.sum(axis=0) > 0).sum() < 2:
        _warn_undefined(f"Krippendorff's alpha ({level})")
        return float("nan")
    return float(
        krippendorff.alpha(
            value_counts=counts,
            value_domain=_alpha_value_domain(m, level),
            level_of_measurement=level,
        )
    )


def _coincidences(counts: np.ndarray) -> np.ndarray:
    """(n, q * q) each unit's contribution to the coincidence matrix (0 when not pairable).

    Unit ``u`` with ``m_u >= 2`` values adds ``(n_uc n_uk - [c == k] n_uc) / (m_u - 1)``.
    """
    q = counts.shape[1]
    mu = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        o = (counts[:, :, None] * counts[:, None, :] - np.eye(q)[None] * counts[:, :, None]) / (
            mu - 1
        )[:, None, None]
    o = np.where((mu >= 2)[:, None, None], o, 0.0)
    return o.reshape(len(mu), q * q)


def _alpha_form(m: RatingMatrix, level: Level) -> AdditiveForm:
    """Krippendorff's alpha as a function of the summed coincidence matrix.

    Each unit adds :func:`_coincidences` to the coincidence matrix ``o``; then ``alpha = 1 -
    (n - 1) sum o d / sum n_c n_k d`` with ``n_c = sum_k o_ck`` and the level's squared
    distance ``d`` (the ordinal distance is a function of the ``n_c``, so it is recomputed
    from the totals of every resample).
    """
    q = len(m.categories)
    values = _alpha_value_domain(m, level)

    def finish(totals: np.ndarray) -> np.ndarray:
        oo = np.asarray(totals, dtype=np.float64).reshape(*np.shape(totals)[:-1], q, q)
        nc = oo.sum(axis=-1)
        n = nc.sum(axis=-1)
        if level == "nominal":
            d = np.broadcast_to(1.0 - np.eye(q), oo.shape)
        elif level == "interval":
            d = np.broadcast_to((values[:, None] - values[None, :]) ** 2, oo.shape)
        elif level == "ratio":
            with np.errstate(invalid="ignore", divide="ignore"):
                ratio = (values[:, None] - values[None, :]) / (values[:, None] + values[None, :])
            d = np.broadcast_to(np.nan_to_num(ratio) ** 2, oo.shape)
        else:  # ordinal: (sum_{g=c}^{k} n_g - (n_c + n_k) / 2) ** 2
            cum = np.cumsum(nc, axis=-1)
            lo = np.minimum(np.arange(q)[:, None], np.arange(q)[None, :])
            hi = np.maximum(np.arange(q)[:, None], np.arange(q)[None, :])
            between = cum[..., hi] - cum[..., lo] + nc[..., lo]
            d = (between - (nc[..., :, None] + nc[..., None, :]) / 2.0) ** 2
        with np.errstate(invalid="ignore", divide="ignore"):
            observed = (oo * d).sum(axis=(-2, -1))
            expected = (nc[..., :, None] * nc[..., None, :] * d).sum(axis=(-2, -1))
            value = 1.0 - (n - 1.0) * observed / expected
        return np.where(expected > _TOL, value, np.nan)

    return AdditiveForm(
        contributions=_coincidences(m.category_counts()), finish=finish, items=m.items
    )


def rater_deletion_changes(
    df: pd.DataFrame,
    coefficient: str,
    *,
    level: Level = "nominal",
    categories: Sequence[Any] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What deleting each rating changes in Krippendorff's alpha's additive form.

    Returns, per rating: the item's row in :func:`additive_form`'s contributions, the rater,
    and the change of the coincidence totals when the rating is deleted (the item's
    contribution without that value minus its contribution with it; an item left with one
    value is no longer pairable). The coefficient with a set of ratings deleted is the
    form's ``finish`` of the totals plus their changes: one vectorized pass over the
    ratings, so a crowd of raters costs what its ratings cost (the delete-one jackknife of a
    design that treats the raters as a sample, :mod:`analysis.stats.resampling`).
    """
    if coefficient != "krippendorff_alpha":
        raise ValueError(
            f"rater_deletion_changes is defined for krippendorff_alpha, not {coefficient!r}"
        )
    m = rating_matrix(df, categories=categories)
    counts = m.category_counts()
    item, rater = np.nonzero(m.codes >= 0)
    label = m.codes[item, rater]
    with_value = counts[item]
    without = with_value - np.eye(len(m.categories))[label]
    change = _coincidences(without) - _coincidences(with_value)
    return item, np.asarray(m.raters, dtype=object)[rater], change


def additive_form(
    df: pd.DataFrame | RatingMatrix,
    coefficient: Literal["percent_agreement", "fleiss_kappa", "gwet_ac1", "krippendorff_alpha"],
    *,
    level: Level = "nominal",
    categories: Sequence[Any] | None = None,
) -> AdditiveForm:
    """The per-item contributions and the finishing function of a multi-rater coefficient.

    ``form.finish(form.contributions.sum(axis=0))`` equals the point estimate (the tests
    check this against :func:`krippendorff_alpha`, i.e. the ``krippendorff`` package).
    """
    m = df if isinstance(df, RatingMatrix) else rating_matrix(df, categories=categories)
    if coefficient == "percent_agreement":
        return _multi_rater_form(m, "none")
    if coefficient == "fleiss_kappa":
        return _multi_rater_form(m, "fleiss")
    if coefficient == "gwet_ac1":
        return _multi_rater_form(m, "gwet")
    if coefficient == "krippendorff_alpha":
        _multi_rater_parts(m)  # same input checks as the other coefficients
        return _alpha_form(m, level)
    raise ValueError(f"no additive form for coefficient {coefficient!r}")


# --------------------------------------------------------------------------------------
# The study's view: all pairs of raters, and group means of the pairwise matrix
# --------------------------------------------------------------------------------------


def pairwise_tables(m: RatingMatrix) -> np.ndarray:
    """(R, R, q, q) contingency tables of every ordered rater pair on its shared items."""
    x = m.onehot()
    return np.einsum("iak,ibl->abkl", x, x, optimize=True)


def pairwise_cohen_kappa(
    df: pd.DataFrame,
    *,
    raters: Sequence[Any] | None = None,
    weights: Weights = None,
    categories: Sequence[Any] | None = None,
    diagonal: float = np.nan,
) -> pd.DataFrame:
    """Square, symmetric DataFrame of Cohen's kappa for every pair of raters.

    Each cell uses only the items that pair shares. A pair with no shared item, or whose
    shared ratings all fall into one category, is NaN. The diagonal (a rater with itself) is
    not a measurement and is ``diagonal`` (NaN by default; pass 1.0 for a heat map).
    Rows and columns follow ``raters`` (default: sorted rater ids).
    """
    m = rating_matrix(df, categories=categories, raters=raters)
    if len(m.raters) < 2:
        raise AgreementError(f"a pairwise matrix needs two raters; the data have {m.raters}")
    kappa = kappa_from_tables(pairwise_tables(m), weights)
    np.fill_diagonal(kappa, diagonal)
    index = pd.Index(m.raters, name="rater_a")
    return pd.DataFrame(kappa, index=index, columns=pd.Index(m.raters, name="rater_b"))


def group_key(group_a: str, group_b: str) -> str:
    """``human_model`` for (``model``, ``human``): the two group names, sorted, joined by ``_``."""
    a, b = sorted((str(group_a), str(group_b)))
    return f"{a}_{b}"


def group_pairs(
    raters: Sequence[Any], groups: Mapping[Any, str]
) -> dict[str, list[tuple[int, int]]]:
    """Unordered pairs of distinct raters (as positions in ``raters``) per group key.

    Keys are :func:`group_key` of the two raters' groups (``human_human``, ``human_model``,
    ``model_model`` for the study's two kinds), sorted. A key without any pair (a group with
    one rater has no within-group pair) is absent.
    """
    raters = list(raters)
    unassigned = [r for r in raters if r not in groups]
    if unassigned:
        raise AgreementError(
            f"raters without a group: {unassigned}; `groups` must map every rater "
            "(e.g. to 'human' or 'model')"
        )
    out: dict[str, list[tuple[int, int]]] = {}
    for i, j in combinations(range(len(raters)), 2):
        out.setdefault(group_key(groups[raters[i]], groups[raters[j]]), []).append((i, j))
    return dict(sorted(out.items()))


def group_mean_kappa(
    df_or_matrix: pd.DataFrame,
    groups: Mapping[Any, str],
    *,
    weights: Weights = None,
    categories: Sequence[Any] | None = None,
) -> dict[str, float]:
    """Mean pairwise Cohen's kappa within and across rater groups, as the study reports it.

    ``df_or_matrix`` is long-format ratings (the matrix is computed with
    :func:`pairwise_cohen_kappa`) or an already computed square matrix. ``groups`` maps every
    rater to a group name, e.g. ``{"Tal": "human", "gpt-5.4": "model"}``; extra entries are
    ignored. The result maps :func:`group_key` names (``human_human``, ``human_model``,
    ``model_model``) to the plain mean over the pairs of distinct raters in that block.
    Undefined (NaN) pairs are left out of the mean; a block whose pairs are all undefined is
    NaN; a block without any pair (fewer than two raters of a group) is absent.
    """
    if set(LONG_COLUMNS) <= set(df_or_matrix.columns):
        matrix = pairwise_cohen_kappa(df_or_matrix, weights=weights, categories=categories)
    else:
        matrix = df_or_matrix
        if list(matrix.index) != list(matrix.columns):
            raise AgreementError(
                "a kappa matrix must be square with the same raters on rows and columns "
                f"(rows {list(matrix.index)}, columns {list(matrix.columns)})"
            )
    values = matrix.to_numpy(dtype=np.float64)
    out: dict[str, float] = {}
    for key, pairs in group_pairs(list(matrix.index), groups).items():
        cells = np.array([values[i, j] for i, j in pairs])
        finite = cells[np.isfinite(cells)]
        out[key] = float(finite.mean()) if finite.size else float("nan")
    return out
