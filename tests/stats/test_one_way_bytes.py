"""The engine's one-factor path gives the bytes it gave before resampling designs existed.

``data/one_way_bytes.json`` holds sha256 digests of the replicates and jackknife values, the
resample digests and the interval bounds of every one-way bootstrap of the engine on fixed
inputs, computed with the code of commit c68ba5c (before the declared designs, the crossed
users x prompts resampling and the record maker). A design that resamples one factor must
draw exactly those resamples for the same seed and clusters, so records whose design did not
change keep their intervals to the last bit, and ``stats.design=one_way`` reproduces the
intervals of earlier builds. (The engine's slow resampled-rows path, which only tests used,
is gone, and with it its entry.)

Where the resample weights are not whole numbers (Rao-Wu's within strata), a resample's
totals are a floating-point matrix product, and OpenBLAS sums it in the order of the kernel
it picks for the CPU: the file's bytes are those of the machine it was made on (AVX-512), and
``data/one_way_bytes_by_kernel.json`` holds the entries that differ under another kernel,
made with c68ba5c's code on such a machine (Haswell: the AVX2 kernel, chosen on the AMD EPYC
machines this project also runs on; c68ba5c's tests and today's engine gave the same bytes
there). Under a kernel recorded nowhere, an entry that a recorded kernel shows to depend on
the kernel, and that the file's bytes do not match, is compared up to rounding (the same
resamples, the same numbers to 1e-9, a p-value within 0.01), with a warning that names the
kernel, so a new machine shows what to record; every other entry stays exact everywhere.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_info

from analysis.stats import bootstrap as bs
from analysis.stats.records import percentile_bounds, read_interval
from analysis.stats.records import resample_p_value as p_value
from analysis.stats.resampling import Units, agreement, plan, spearman, weighted_rows
from analysis.stats.settings import StatsSettings
from analysis.stats.weighted_bootstrap import (
    evaluate_counts,
    weighted_difference,
    weighted_prf,
    weighted_spearman,
)
from tests.settings_defaults import stats_settings

DATA = Path(__file__).parent / "data"
#: the bytes of the machine the file was made on
RECORDED = json.loads((DATA / "one_way_bytes.json").read_text())
#: kernel -> the entries that differ under that OpenBLAS kernel
BY_KERNEL = json.loads((DATA / "one_way_bytes_by_kernel.json").read_text())


def blas_kernel() -> str:
    """The core type of NumPy's own OpenBLAS on this CPU (``Haswell``, ``SkylakeX``...)."""
    numpy_blas = [i for i in threadpool_info() if "numpy" in i.get("filepath", "")]
    return str(numpy_blas[0].get("architecture")) if numpy_blas else "unknown"


KERNEL = blas_kernel()
EXPECTED = {**RECORDED, **BY_KERNEL.get(KERNEL, {})}
#: the entries some recorded kernel shows to depend on the kernel (the others are exact on any)
KERNEL_DEPENDENT = {key for entries in BY_KERNEL.values() for key in entries}


def _close(got: Any, want: Any, key: str) -> bool:
    """Equal up to rounding: digests of float arrays aside, the resamples' digest exact."""
    if isinstance(want, dict):
        return want.keys() == got.keys() and all(_close(got[k], want[k], k) for k in want)
    if isinstance(want, list):
        return len(got) == len(want) and all(
            _close(g, w, key) for g, w in zip(got, want, strict=True)
        )
    if key in ("replicates", "jackknife"):
        return True  # digests of the float arrays: their bytes are the kernel's
    if key == "p_value":
        return abs(float(got) - float(want)) <= 0.01
    if key == "weights_digest":
        return got == want
    return bool(np.isclose(float(got), float(want), rtol=1e-9, atol=0.0))


def check(got: Any, key: str) -> None:
    """``got`` is the recorded entry ``key``: its bytes, or, for an entry known to depend on
    the kernel, up to rounding under an OpenBLAS kernel no file records."""
    want = EXPECTED[key]
    if got == want:
        return
    assert KERNEL not in BY_KERNEL and key in KERNEL_DEPENDENT, (
        f"{key}: {got} != {want} (OpenBLAS kernel {KERNEL})"
    )
    warnings.warn(
        f"{key}: no bytes recorded for OpenBLAS kernel {KERNEL}; compared up to rounding",
        stacklevel=2,
    )
    assert _close(got, want, key), f"{key}: {got} != {want} beyond rounding ({KERNEL})"


def digest(*arrays: Any) -> str:
    h = hashlib.sha256()
    for a in arrays:
        if a is None:
            h.update(b"none")
        else:
            h.update(np.ascontiguousarray(np.asarray(a, dtype=np.float64)).tobytes())
    return h.hexdigest()


def bounds(res: Any, method: str = "percentile") -> list[str]:
    return [repr(float(x)) for x in np.ravel(percentile_bounds(res, 0.95, method))]


def one_way(n_boot: int, seed: int, ci_method: str = "percentile") -> StatsSettings:
    return stats_settings(design="one_way", n_boot=n_boot, seed=seed, ci_method=ci_method)


def summary(res: Any) -> dict[str, Any]:
    return {
        "replicates": digest(res.replicates),
        "jackknife": digest(res.jackknife),
        "weights_digest": res.weights_digest,
        "percentile": bounds(res),
    }


def inputs() -> dict[str, Any]:
    """The fixed inputs (drawn in this order from one generator, as when the file was made)."""
    rng = np.random.default_rng(20261127)
    n, n_clusters = 400, 40
    codes = np.sort(rng.integers(0, n_clusters, n))
    clusters = np.array([f"u{c:02d}" for c in codes], dtype=object)
    strata = pd.Series(
        np.array(["s" + str(int(c[1:]) % 4) for c in clusters], dtype=object), name="source"
    )
    values = np.column_stack([rng.random(n) < 0.3, np.ones(n), rng.integers(1, 6, n)]).astype(float)
    items = [f"i{i:03d}" for i in range(240)]
    users = dict(zip(items, (f"u{k:02d}" for k in np.sort(rng.integers(0, 30, 240))), strict=True))
    truth = rng.random(240) < 0.3
    rows = []
    for rater in ["h1", "h2", "h3", "h4", "m1", "m2", "m3"]:
        copy = 0.7 if rater[0] == "h" else 0.5
        vote = np.where(rng.random(240) < copy, truth, rng.random(240) < 0.4)
        for i in np.flatnonzero(rng.random(240) > 0.15):
            user = users[items[i]]
            rows.append((items[i], rater, bool(vote[i]), user, "s" + str(int(user[1:]) % 3)))
    long = pd.DataFrame(rows, columns=["item", "rater", "label", "cluster", "source"])
    y = rng.random(n) < 0.4
    pred = rng.random(n) < 0.5
    score = np.round(rng.random(n) + 0.4 * y, 2)
    return {
        "n": n,
        "clusters": clusters,
        "strata": strata,
        "values": values,
        "long": long,
        "y": y,
        "pred": pred,
        "score": score,
    }


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    return inputs()


def ratio(t: np.ndarray) -> np.ndarray:
    return t[:, 0] / t[:, 1]


def test_totals_path(data: dict[str, Any]) -> None:
    res = bs.bootstrap_statistic(
        data["values"],
        ratio,
        clusters=data["clusters"],
        cluster_name="user_id",
        n_boot=500,
        seed=11,
    )
    check(summary(res), "totals")


def test_stratified_totals_bca_and_p(data: dict[str, Any]) -> None:
    res = bs.bootstrap_statistic(
        data["values"],
        ratio,
        clusters=data["clusters"],
        cluster_name="user_id",
        n_boot=500,
        seed=11,
        strata=data["strata"],
    )
    got = {"bca": bounds(res, "bca"), "p_value": repr(p_value(res, 0.3)), **summary(res)}
    check(got, "totals_strata")


def test_pairwise_kappa_matrix_and_group_means(data: dict[str, Any]) -> None:
    long = data["long"]
    groups = {r: ("human" if r[0] == "h" else "model") for r in long["rater"].unique()}
    common = dict(groups=groups, cluster="cluster", categories=[False, True], n_boot=300, seed=3)
    boot = bs.bootstrap_pairwise_kappa(long, min_shared=10, **common)
    check(summary(boot.matrix), "kappa_matrix")
    for key, res in boot.group_means.items():
        check(summary(res), f"kappa_{key}")
    stratified = bs.bootstrap_pairwise_kappa(long, min_shared=10, strata="source", **common)
    for key, res in stratified.group_means.items():
        check(summary(res), f"kappa_strata_{key}")
    # the one-way plan of a stage-1 design: users within sources, through the additive form
    humans = long[long["rater"].str.startswith("h")].rename(columns={"cluster": "users"})
    units = Units(
        n=len(humans),
        users=humans["users"].to_numpy(dtype=object),
        strata=humans["source"].rename("source").reset_index(drop=True),
    )
    alpha = agreement(
        plan(one_way(300, 3, "bca"), "attribute_judgments", units), humans, "krippendorff_alpha"
    )
    (part,) = alpha.parts
    check(summary(part), "alpha")


@pytest.mark.parametrize("name", ["prf", "spearman", "diff"])
def test_weighted_rows(data: dict[str, Any], name: str) -> None:
    y, pred = data["y"], data["pred"]
    stat = {
        "prf": weighted_prf(y, pred, "f1"),
        "spearman": weighted_spearman(data["score"], data["values"][:, 2]),
        "diff": weighted_difference(weighted_prf(y, pred, "f1"), weighted_prf(y, ~pred, "f1")),
    }[name]
    settings = one_way(400, 9)
    units = Units(n=data["n"], users=data["clusters"])
    res = weighted_rows(plan(settings, "relevance_items", units), stat, data["n"], evaluate_counts)
    (part,) = res.parts
    iv = read_interval(res, settings, None, data["n"]).interval
    got = {
        "replicates": digest(part.replicates),
        "weights_digest": part.weights_digest,
        "ci": [repr(iv.low), repr(iv.high)],
        "value": repr(iv.value),
    }
    check(got, f"weighted_{name}")


def test_cluster_spearman(data: dict[str, Any]) -> None:
    units = Units(n=data["n"], users=data["clusters"])
    design = plan(one_way(300, 4, "bca"), "rating_models", units)
    rows = np.arange(data["n"])
    res = spearman(design, data["values"][:, 2], data["score"], rows, data["n"])
    (part,) = res.parts
    check(summary(part), "cluster_spearman")
