"""Published worked examples of agreement coefficients, retyped with their sources.

Each dataset is public, small and printed in the cited source together with the coefficient
values the tests check. Helpers turn them into the library's long format
(``item``, ``rater``, ``label``; a missing rating is an absent row).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

# --------------------------------------------------------------------------------------
# Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
# Psychological Bulletin 76(5), 378-382, Table 1: 30 patients, 6 psychiatrists each,
# 5 diagnoses (1 depression, 2 personality disorder, 3 schizophrenia, 4 neurosis,
# 5 other). Fleiss reports kappa = .430. Each row lists the six diagnoses of one patient
# (the same transcription as statsmodels' statsmodels/stats/tests/test_inter_rater.py).
# --------------------------------------------------------------------------------------
FLEISS_1971 = np.array(
    [
        [4, 4, 4, 4, 4, 4],
        [2, 2, 2, 5, 5, 5],
        [2, 3, 3, 3, 3, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 2, 2, 4, 4, 4],
        [1, 1, 3, 3, 3, 3],
        [3, 3, 3, 3, 5, 5],
        [1, 1, 3, 3, 3, 4],
        [1, 1, 4, 4, 4, 4],
        [5, 5, 5, 5, 5, 5],
        [1, 4, 4, 4, 4, 4],
        [1, 2, 4, 4, 4, 4],
        [2, 2, 2, 3, 3, 3],
        [1, 4, 4, 4, 4, 4],
        [2, 2, 4, 4, 4, 5],
        [3, 3, 3, 3, 3, 5],
        [1, 1, 1, 4, 5, 5],
        [1, 1, 1, 1, 1, 2],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 5, 5, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 4, 4, 4, 4, 4],
        [2, 2, 4, 5, 5, 5],
        [1, 1, 4, 4, 4, 4],
        [1, 4, 4, 4, 4, 5],
        [2, 2, 2, 2, 2, 4],
        [1, 1, 1, 1, 5, 5],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 3, 3, 3],
        [5, 5, 5, 5, 5, 5],
    ]
)
FLEISS_1971_KAPPA = 0.430
#: Gwet (2014) / irrCAC README, ``distrib.6raters`` = the first 15 patients of Fleiss 1971:
#: Fleiss' kappa 0.4139265, Gwet's AC1 0.4448007, percent agreement 0.5511111.
FLEISS_1971_FIRST15 = {"fleiss_kappa": 0.4139265, "gwet_ac1": 0.4448007, "pa": 0.5511111}

# --------------------------------------------------------------------------------------
# Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability. Annenberg School for
# Communication, University of Pennsylvania. Example C: 4 observers, 12 units, values 1-5,
# missing data. alpha: nominal .743, ordinal .815, interval .849, ratio .797.
# Gwet (2014, Handbook of Inter-Rater Reliability, 4th ed.) uses the same data
# (irrCAC ``cac.raw4raters``); the irrCAC README prints: percent agreement 0.8181818,
# Gwet's AC1 0.77544, Fleiss' kappa 0.76117, Krippendorff's alpha 0.74342.
# --------------------------------------------------------------------------------------
_ = None
KRIPPENDORFF_2011_C = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3],
    "C": [_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _],
}
KRIPPENDORFF_2011_C_ALPHA = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}
GWET_2014_RAW4RATERS = {
    "pa": 0.8181818,
    "gwet_ac1": 0.77544,
    "fleiss_kappa": 0.76117,
    "krippendorff_alpha": 0.74342,
}

#: Krippendorff (2011), example A: two observers, ten units, binary values; alpha = .095.
KRIPPENDORFF_2011_A = {
    "A": [0, 1, 0, 0, 0, 0, 0, 0, 1, 0],
    "B": [1, 1, 1, 0, 0, 1, 0, 0, 0, 0],
}
KRIPPENDORFF_2011_A_ALPHA = 0.095

# --------------------------------------------------------------------------------------
# Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed.; irrCAC ``cont3x3abstractors``:
# two abstractors classify 100 pregnancies (Ectopic, AIU, NIU). The irrCAC README prints:
# Cohen's kappa 0.7964094, Scott's pi 0.7962397, Gwet's AC1 0.8493305,
# Krippendorff's alpha 0.7972585, percent agreement 0.89.
# Rows: abstractor 1, columns: abstractor 2.
# --------------------------------------------------------------------------------------
ABSTRACTORS_TABLE = np.array([[13, 0, 0], [0, 20, 7], [0, 4, 56]])
ABSTRACTORS_CATEGORIES = ("Ectopic", "AIU", "NIU")
ABSTRACTORS_VALUES = {
    "cohen_kappa": 0.7964094,
    "scott_pi": 0.7962397,
    "gwet_ac1": 0.8493305,
    "krippendorff_alpha": 0.7972585,
    "pa": 0.89,
}

#: The textbook 2x2 example (Wikipedia, "Cohen's kappa", worked example): 50 grant
#: proposals, two readers; yes/yes 20, yes/no 5, no/yes 10, no/no 15: p_o = .7,
#: p_e = .5, kappa = .4.
GRANT_TABLE = np.array([[20, 5], [10, 15]])
GRANT_KAPPA = 0.4


def long_from_columns(columns: Mapping[str, Sequence[Any]]) -> pd.DataFrame:
    """Long ratings from ``rater -> per-unit values`` (None = not rated)."""
    rows = [
        (unit, rater, value)
        for rater, values in columns.items()
        for unit, value in enumerate(values)
        if value is not None
    ]
    return pd.DataFrame(rows, columns=["item", "rater", "label"])


def long_from_rows(matrix: np.ndarray, raters: Sequence[str] | None = None) -> pd.DataFrame:
    """Long ratings from an ``items x raters`` array (NaN or None = not rated)."""
    matrix = np.asarray(matrix, dtype=object)
    names = list(raters) if raters is not None else [f"r{j + 1}" for j in range(matrix.shape[1])]
    rows = [
        (i, names[j], matrix[i, j])
        for i in range(matrix.shape[0])
        for j in range(matrix.shape[1])
        if matrix[i, j] is not None
        and not (isinstance(matrix[i, j], float) and np.isnan(matrix[i, j]))
    ]
    return pd.DataFrame(rows, columns=["item", "rater", "label"])


def long_from_table(
    table: np.ndarray, categories: Sequence[Any], raters: tuple[str, str] = ("A", "B")
) -> pd.DataFrame:
    """Long ratings of two raters from their contingency table (rows: first rater)."""
    rows, item = [], 0
    for i, ci in enumerate(categories):
        for j, cj in enumerate(categories):
            for _ in range(int(table[i, j])):
                rows += [(item, raters[0], ci), (item, raters[1], cj)]
                item += 1
    return pd.DataFrame(rows, columns=["item", "rater", "label"])
