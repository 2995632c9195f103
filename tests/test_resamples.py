"""Each record's resamples beside its records (analysis/resamples.py): its design's parts
(bootstrap replicates, jackknife values, strata), written by ``write_records``, byte-stable,
read back exactly, merged per build."""

from __future__ import annotations

import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from analysis.provenance import Record, write_records
from analysis.resamples import (
    Part,
    ResampleError,
    Resamples,
    merge_resample_files,
    read_resamples,
    resamples_path,
    write_resamples,
)
from analysis.stats.records import Statistic, make_records, pair_resamples
from analysis.stats.resampling import Units, plan, totals
from tests.settings_defaults import stats_settings


def _res(seed: int, n: int = 50) -> Resamples:
    """A crossed design's parts: users (stratified, with jackknife values for BCa), the cells
    (sign -1) and an annotator clustering (jackknife only)."""
    rng = np.random.default_rng(seed)
    return Resamples(
        0.5 + seed,
        (
            Part("users", f"u-{n}", rng.normal(size=n), rng.normal(size=12), 12, 1, "source",
                 3, 7, np.repeat(np.arange(3), 4)),
            Part("user-prompt cells", f"c-{n}", rng.normal(size=n), None, 40, -1, seed=7),
            Part("annotators", "a", np.zeros(0), rng.normal(size=5), 5),
        ),
    )  # fmt: skip


def _same(a: Part, b: Part) -> bool:
    arrays = ("replicates", "jackknife", "cluster_strata")
    fields = ("cluster", "digest", "n_clusters", "sign", "stratified_by", "n_strata", "seed")
    return all(getattr(a, f) == getattr(b, f) for f in fields) and all(
        (getattr(a, f) is None and getattr(b, f) is None)
        or np.array_equal(getattr(a, f), getattr(b, f))
        for f in arrays
    )


def test_round_trip_is_exact_and_byte_stable(tmp_path: Path) -> None:
    kept = {"b.key": _res(1), "a.key": _res(2, 30)}
    write_resamples(kept, tmp_path / "one.npz")
    write_resamples(dict(reversed(kept.items())), tmp_path / "two.npz")
    assert (tmp_path / "one.npz").read_bytes() == (tmp_path / "two.npz").read_bytes()
    back = read_resamples(tmp_path / "one.npz")
    assert sorted(back) == ["a.key", "b.key"]
    for key, res in kept.items():
        assert back[key].estimate == res.estimate and len(back[key].parts) == 3
        assert all(_same(a, b) for a, b in zip(back[key].parts, res.parts, strict=True)), key
    # numpy reads the file as an ordinary .npz
    with np.load(tmp_path / "one.npz") as data:
        assert list(data["keys"]) == ["a.key", "b.key"]


def test_two_records_pair_only_on_the_same_parts_and_draws() -> None:
    a = _res(1)
    assert not isinstance(pair_resamples(a, _res(3)), str)  # other values, same design and draws
    fewer = Resamples(a.estimate, a.parts[:1])
    assert "another design (factors users, user-prompt cells vs users)" in str(
        pair_resamples(a, fewer)
    )
    # other numbers of resamples whose digests no seed's stream reproduces (made-up digests)
    assert "other draws of users (50 vs 30 resamples that are not the first ones" in str(
        pair_resamples(a, _res(1, 30))
    )
    other = Resamples(a.estimate, (replace(a.parts[0], digest="x"), *a.parts[1:]))
    assert "other draws of users" in str(pair_resamples(a, other))
    smaller = Resamples(a.estimate, (*a.parts[:2], replace(a.parts[2], n_clusters=4)))
    assert not isinstance(pair_resamples(a, smaller), str)  # the same 5 deletions, in order
    fewer_deleted = replace(a.parts[2], jackknife=a.parts[2].jackknife[:4], n_clusters=4)
    assert "the annotators' deletions of annotators cannot be matched (5 vs 4 deleted" in str(
        pair_resamples(a, Resamples(a.estimate, (*a.parts[:2], fewer_deleted)))
    )


def test_deleted_levels_keep_their_names_and_an_older_file_reads_without(tmp_path: Path) -> None:
    named = _res(1)
    names = tuple(f"h{i}" for i in range(5))
    named = Resamples(named.estimate, (*named.parts[:2], replace(named.parts[2], levels=names)))
    write_resamples({"k": named, "j": _res(2)}, tmp_path / "new.npz")
    back = read_resamples(tmp_path / "new.npz")
    assert back["k"].parts[2].levels == names and back["j"].parts[2].levels is None
    assert [p.levels for p in back["k"].parts[:2]] == [None, None]
    # a file written before the names were kept: the same arrays without their members
    with (
        zipfile.ZipFile(tmp_path / "new.npz") as src,
        zipfile.ZipFile(tmp_path / "old.npz", "w") as dst,
    ):
        for info in src.infolist():
            if not info.filename.startswith("level_"):
                dst.writestr(info, src.read(info))
    old = read_resamples(tmp_path / "old.npz")
    assert old["k"].parts[2].levels is None
    assert np.array_equal(old["k"].parts[2].jackknife, named.parts[2].jackknife)


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


def test_the_record_maker_keeps_every_part_of_a_crossed_design(tmp_path: Path) -> None:
    """A t interval of a crossed design's variance keeps its parts too (they pair), written
    beside the JSON by ``write_records``; an analytic record keeps none."""
    rng = np.random.default_rng(4)
    users = np.repeat([f"u{i}" for i in range(20)], 6)
    prompts = np.array([f"p{(i * 7 + j) % 15}" for i in range(20) for j in range(6)])
    y = (rng.random(users.size) < 0.4).astype(float)
    settings = stats_settings(n_boot=60, seed=3)
    design = plan(settings, "relevance_items", Units(users.size, users, prompts))
    rate = totals(design, {"y": y, "n": np.ones(y.size)}, y.size).stat(lambda g: g("y") / g("n"))
    stat = Statistic("x.rate", rate, ".3f", "a rate", "m:f", n=y.size)
    (rec,) = make_records([stat], settings)
    assert rec.extra["design"] == "relevance_items" and "t interval" in rec.method
    analytic = Record(key="x.count", value=20, fmt="d", method="m", code="m:f")
    out = tmp_path / "records" / "rule.json"
    written = write_records([rec, analytic], out, rule="rule", inputs=[])
    assert "resamples" not in written["x.rate"]  # never in the JSON
    kept = read_resamples(resamples_path(out))
    assert sorted(kept) == ["x.rate"]
    assert [(p.cluster, p.sign, p.n_boot) for p in kept["x.rate"].parts] == [
        ("users", 1, 60),
        ("prompts", 1, 60),
        ("user-prompt cells", -1, 60),
    ]
    for part, made in zip(kept["x.rate"].parts, rate.parts, strict=True):
        assert part.digest == made.weights_digest
        np.testing.assert_array_equal(part.replicates, made.replicates)
    assert kept["x.rate"].estimate == float(rate.estimate)
