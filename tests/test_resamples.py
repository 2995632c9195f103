"""Each record's bootstrap resamples beside its records (analysis/resamples.py): written by
``write_records``, byte-stable, read back exactly (to single precision), merged per build."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from analysis.provenance import Record, write_records
from analysis.resamples import (
    ResampleError,
    Resamples,
    merge_resample_files,
    read_resamples,
    resamples_path,
    write_resamples,
)
from analysis.stats.bootstrap import BootstrapResult


def _res(seed: int, n: int = 50) -> Resamples:
    return Resamples(np.random.default_rng(seed).normal(size=n), f"digest-{n}")


def test_round_trip_is_exact_to_single_precision_and_byte_stable(tmp_path: Path) -> None:
    kept = {"b.key": _res(1), "a.key": _res(2, 30)}
    write_resamples(kept, tmp_path / "one.npz")
    write_resamples(dict(reversed(kept.items())), tmp_path / "two.npz")
    assert (tmp_path / "one.npz").read_bytes() == (tmp_path / "two.npz").read_bytes()
    back = read_resamples(tmp_path / "one.npz")
    assert sorted(back) == ["a.key", "b.key"]
    for key, res in kept.items():
        assert back[key].digest == res.digest
        np.testing.assert_array_equal(back[key].replicates, res.replicates.astype(np.float32))
    # numpy reads the file as an ordinary .npz
    with np.load(tmp_path / "one.npz") as data:
        assert list(data["keys"]) == ["a.key", "b.key"]


def test_an_empty_file_and_a_damaged_one(tmp_path: Path) -> None:
    write_resamples({}, tmp_path / "empty.npz")
    assert read_resamples(tmp_path / "empty.npz") == {}
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(ResampleError, match="bad.npz"):
        read_resamples(tmp_path / "bad.npz")


def test_merging_refuses_a_key_in_two_files(tmp_path: Path) -> None:
    write_resamples({"k": _res(1)}, tmp_path / "a.npz")
    write_resamples({"k": _res(2)}, tmp_path / "b.npz")
    write_resamples({"j": _res(3)}, tmp_path / "c.npz")
    assert sorted(merge_resample_files([tmp_path / "a.npz", tmp_path / "c.npz"])) == ["j", "k"]
    with pytest.raises(ResampleError, match="resamples of k are in"):
        merge_resample_files([tmp_path / "a.npz", tmp_path / "b.npz"])


def test_the_resample_file_sits_beside_its_records() -> None:
    assert (
        resamples_path("results/d/records/stage1.json") == "results/d/records/stage1.resamples.npz"
    )
    assert resamples_path("results/d/numbers.json") == "results/d/resamples.npz"
    with pytest.raises(ValueError, match="not a records file"):
        resamples_path("results/d/records/stage1.parquet")


def test_write_records_keeps_a_bootstrap_records_resamples(tmp_path: Path) -> None:
    boot = BootstrapResult(
        estimate=np.asarray(9.5),
        replicates=np.random.default_rng(3).normal(9.5, 1.0, size=40),
        jackknife=None,
        n_clusters=5,
        cluster="c",
        seed=3,
        weights_digest="d" * 64,
    )
    low, high = np.quantile(boot.replicates, [0.025, 0.975])
    with_resamples = Record(
        key="x.mean",
        value=9.5,
        fmt=".2f",
        method="m",
        code="m:f",
        ci_low=float(low),
        ci_high=float(high),
        resamples=Resamples.of(boot),
    )
    analytic = Record(key="x.count", value=20, fmt="d", method="m", code="m:f")
    out = tmp_path / "records" / "rule.json"
    written = write_records([with_resamples, analytic], out, rule="rule", inputs=[])
    assert "resamples" not in written["x.mean"]  # never in the JSON
    kept = read_resamples(resamples_path(out))
    assert sorted(kept) == ["x.mean"]
    assert kept["x.mean"].digest == boot.weights_digest
    np.testing.assert_allclose(kept["x.mean"].replicates, boot.replicates, rtol=1e-6)
    assert Resamples.of(None) is None
    assert Resamples.of(boot.replicates) is None  # an array has no weight digest
