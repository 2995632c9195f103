"""Standardization fit a block of rows at a time: StandardScaler's values, bounded memory."""

from __future__ import annotations

import pickle
import tracemalloc

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.preprocessing import StandardScaler

from analysis.learn.row_block_scaler import RowBlockScaler


def _rows(n: int, d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = (rng.standard_normal((n, d)) * rng.uniform(0.1, 10, d) + rng.uniform(-5, 5, d)).astype(
        np.float32
    )
    X[:, 0] = 3.0  # a constant feature: its scale is 1, as StandardScaler sets it
    return X


def _fitted(scaler: StandardScaler) -> tuple[np.ndarray, ...]:
    return scaler.mean_, scaler.var_, scaler.scale_, np.asarray(scaler.n_samples_seen_)


def test_up_to_one_block_it_is_standard_scaler_bit_for_bit() -> None:
    X = _rows(500, 12)
    ours, theirs = RowBlockScaler(block_rows=500).fit(X), StandardScaler().fit(X)
    for a, b in zip(_fitted(ours), _fitted(theirs), strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert np.array_equal(ours.transform(X), theirs.transform(X))


@pytest.mark.parametrize("block_rows", [1, 7, 64, 499])
def test_blocks_give_the_one_shot_values_to_rounding(block_rows: int) -> None:
    X = _rows(500, 12)
    ours, theirs = RowBlockScaler(block_rows=block_rows).fit(X), StandardScaler().fit(X)
    assert ours.n_samples_seen_ == theirs.n_samples_seen_ == 500
    np.testing.assert_allclose(ours.mean_, theirs.mean_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours.var_, theirs.var_, rtol=1e-10)
    assert ours.scale_[0] == theirs.scale_[0] == 1.0
    np.testing.assert_allclose(ours.transform(X), theirs.transform(X), rtol=1e-5, atol=1e-5)


def test_the_fit_holds_one_block_not_a_float64_copy_of_every_row() -> None:
    X = _rows(40_000, 100)  # 16 MB of float32 rows

    def peak(scaler: StandardScaler) -> int:
        tracemalloc.start()
        try:
            scaler.fit(X)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    assert peak(StandardScaler()) >= 2 * X.nbytes  # what it replaces: X - mean in float64
    assert peak(RowBlockScaler(block_rows=2_000)) < X.nbytes / 4


def test_it_clones_pickles_and_refuses_an_empty_block() -> None:
    X = _rows(50, 4)
    scaler = clone(RowBlockScaler(block_rows=8))
    assert scaler.get_params()["block_rows"] == 8
    again = pickle.loads(pickle.dumps(scaler.fit(X)))
    assert np.array_equal(again.transform(X), scaler.transform(X))
    with pytest.raises(ValueError, match="block_rows"):
        RowBlockScaler(block_rows=0).fit(X)
