"""The largest Cohen's kappa two raters' marginal rates allow, and the share of it they reach.

Why: in stage 2 people call an attribute relevant about a fifth of the time and the models
two to three times as often. Two raters with such different rates cannot agree on every item,
so their kappa is capped well below one whatever they think about *which* attributes matter:
``kappa_max`` is the kappa of the table with the same marginals and as much agreement as the
marginals allow (Cohen 1960; Umesh, Peterson and Sauber 1989). Comparing raw kappas of
human-model pairs with model-model pairs then restates the difference in rates; the share of
the attainable kappa a pair reaches, ``kappa / kappa_max``, asks how much of the agreement
possible *given the rates* the pair achieves, which is the question about which attributes
matter. (PABAK and Gwet's AC1 correct for prevalence, not for two raters' different
marginals: the over-selection would still lower both, so neither separates the rate from
the choice.)

For a ``q x q`` table with row marginals ``r`` and column marginals ``c`` (shares), chance
agreement ``p_e = sum_k r_k c_k``, the largest attainable observed agreement
``p_max = sum_k min(r_k, c_k)``, and

    kappa_max = (p_max - p_e) / (1 - p_e),    kappa / kappa_max = (p_o - p_e) / (p_max - p_e).

Both take many tables at once (``(..., q, q)``), like
:func:`analysis.stats.agreement.kappa_from_tables`, so a bootstrap's resampled tables of every
rater pair are one call. Undefined (NaN) where the table is empty or the marginals leave no
room above chance (``p_max = p_e``: one rater uses a single category).
"""

from __future__ import annotations

import numpy as np

#: below this, a difference of shares is treated as zero (no room above chance)
_TOL = 1e-12


def _parts(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...]]:
    """``(p_o, p_e, p_max)`` per table (flattened) and the tables' leading shape."""
    t = np.asarray(tables, dtype=np.float64)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError(f"contingency tables must have shape (..., q, q), got {t.shape}")
    lead, q = t.shape[:-2], t.shape[-1]
    flat = t.reshape(-1, q, q)
    n = flat.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        row = flat.sum(axis=2) / n[:, None]
        col = flat.sum(axis=1) / n[:, None]
        p_o = np.einsum("mkk->m", flat) / n
    p_e = np.einsum("mk,mk->m", row, col)
    p_max = np.minimum(row, col).sum(axis=1)
    return p_o, p_e, p_max, lead


def kappa_max_from_tables(tables: np.ndarray) -> np.ndarray:
    """The largest Cohen's kappa the tables' marginals allow (NaN where undefined)."""
    _, p_e, p_max, lead = _parts(tables)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = (p_max - p_e) / (1.0 - p_e)
    ok = np.isfinite(value) & (1.0 - p_e > _TOL) & (p_max - p_e > _TOL)
    return np.where(ok, value, np.nan).reshape(lead)


def kappa_share_of_max_from_tables(tables: np.ndarray) -> np.ndarray:
    """``kappa / kappa_max``: the share of the attainable chance-corrected agreement reached
    (1: as much agreement as the two rates allow; 0: chance; NaN where undefined)."""
    p_o, p_e, p_max, lead = _parts(tables)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = (p_o - p_e) / (p_max - p_e)
    ok = np.isfinite(value) & (p_max - p_e > _TOL)
    return np.where(ok, value, np.nan).reshape(lead)
