"""Standardization fit a block of rows at a time, so its memory does not grow with the rows.

``StandardScaler.fit`` centres all its rows at once in float64 (``X - mean``): for the
classifiers' float32 features that temporary is twice the size of the rows themselves. At
100 times the study one fold's training rows are about a gigabyte, so each fit briefly held
two more, and with folds fit side by side the relevance classifier passed 8 GB. Fitting
block by block with scikit-learn's own ``partial_fit`` (its out-of-core path) bounds the
temporary to one block. Up to one block of rows (every dataset of the study's size) the fit
is ``StandardScaler.fit`` itself, bit for bit; beyond, the blocks' means and variances are
combined by scikit-learn's incremental update, equal to the one-shot values to rounding.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse
from sklearn.preprocessing import StandardScaler

#: rows per block (the fit's, and learners._transformed_over's when it writes standardized rows
#: in place): a block's float64 temporary is then about 200 MB at 780 features
BLOCK_ROWS = 1 << 15


class RowBlockScaler(StandardScaler):
    """``StandardScaler`` whose ``fit`` reads at most ``block_rows`` rows at a time."""

    def __init__(
        self,
        *,
        copy: bool = True,
        with_mean: bool = True,
        with_std: bool = True,
        block_rows: int = BLOCK_ROWS,
    ) -> None:
        super().__init__(copy=copy, with_mean=with_mean, with_std=with_std)
        self.block_rows = block_rows

    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> RowBlockScaler:
        """Fit on the first block, then ``partial_fit`` each further block in row order."""
        if sample_weight is not None or sparse.issparse(X) or not isinstance(X, np.ndarray):
            return super().fit(X, y, sample_weight)
        if self.block_rows < 1:
            raise ValueError(f"block_rows must be at least 1, got {self.block_rows}")
        super().fit(X[: self.block_rows])
        for start in range(self.block_rows, len(X), self.block_rows):
            self.partial_fit(X[start : start + self.block_rows])
        return self
