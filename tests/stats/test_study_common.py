"""What the stages share: the one leave-one-rater-out reference and the 2x2 cells of a pair."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import cohen_kappa_score, f1_score

from analysis.stats.study_common import (
    leave_one_out_majority,
    loo_majority_from_counts,
    pair_cells,
    pair_kappa,
    pair_prf,
)


def test_leave_one_out_from_counts_is_the_matrix_definition() -> None:
    """The reference from per-item counts (no items x raters matrix) is the dense one."""
    rng = np.random.default_rng(6)
    votes = rng.integers(0, 2, (200, 7)).astype(float)
    votes[rng.random(votes.shape) < 0.6] = np.nan
    n_voted, n_yes = np.isfinite(votes).sum(axis=1), np.nansum(votes, axis=1)
    for rater in range(votes.shape[1]):
        label, tie = leave_one_out_majority(votes, rater)
        rows = np.flatnonzero(np.isfinite(votes[:, rater]))
        l2, t2 = loo_majority_from_counts(votes[rows, rater], n_voted[rows], n_yes[rows])
        assert np.array_equal(label[rows], l2, equal_nan=True) and np.array_equal(tie[rows], t2)
        off = np.setdiff1d(np.arange(200), rows)
        assert np.isnan(label[off]).all() and not tie[off].any()


def test_pair_cells_give_kappa_and_f1_of_the_shared_rows() -> None:
    rng = np.random.default_rng(2)
    a = rng.integers(0, 2, 120).astype(float)
    b = np.where(rng.random(120) < 0.7, a, 1 - a)
    a[rng.random(120) < 0.1] = np.nan
    cells = {f"x|y|{k}": v.sum(keepdims=True) for k, v in pair_cells(a, b).items()}
    both = np.isfinite(a) & np.isfinite(b)
    assert sum(float(v[0]) for v in cells.values()) == both.sum()
    get = cells.__getitem__
    assert (
        pair_kappa(get, "x", "y")[0]
        == np.float64(cohen_kappa_score(a[both].astype(int), b[both].astype(int)))
        or abs(
            pair_kappa(get, "x", "y")[0]
            - cohen_kappa_score(a[both].astype(int), b[both].astype(int))
        )
        < 1e-12
    )
    assert abs(pair_prf(get, "x", "y")["f1"][0] - f1_score(b[both], a[both])) < 1e-12
