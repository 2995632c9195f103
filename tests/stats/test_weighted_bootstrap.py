"""The vectorized weighted metrics equal the metric on the resampled (expanded) data set."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, spearmanr
from sklearn.metrics import (
    cohen_kappa_score,
    f1_score,
    precision_score,
    recall_score,
    roc_auc_score,
)

from analysis.stats import weighted_bootstrap
from analysis.stats.bootstrap import BootstrapResult
from analysis.stats.intervals import Interval
from analysis.stats.records import read_interval
from analysis.stats.resampling import Units, plan, weighted_rows
from analysis.stats.weighted_bootstrap import (
    Statistic,
    choose_unit,
    evaluate_counts,
    resamples_per_chunk,
    weighted_auroc,
    weighted_difference,
    weighted_kappa,
    weighted_kendall,
    weighted_prf,
    weighted_ratio,
    weighted_spearman,
)
from tests.settings_defaults import stats_settings


@pytest.fixture
def data() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    n = 60
    y = rng.random(n) < 0.4
    score = np.round(rng.random(n) + 0.5 * y, 1)  # rounded: ties on purpose
    rating = rng.integers(1, 6, size=n).astype(float)
    pred = score > 0.7
    # two rows of integer weights (0..3): a resample's multiplicities
    W = rng.integers(0, 4, size=(2, n)).astype(float)
    return {"y": y, "score": score, "rating": rating, "pred": pred, "W": W}


def expand(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    return np.repeat(values, weights.astype(int))


def test_point_estimates_match_sklearn_and_scipy(data: dict[str, np.ndarray]) -> None:
    y, s, r, p = data["y"], data["score"], data["rating"], data["pred"]
    one = np.ones((1, len(y)))
    assert weighted_auroc(y, s)(one)[0] == pytest.approx(roc_auc_score(y, s))
    assert weighted_prf(y, p, "precision")(one)[0] == pytest.approx(precision_score(y, p))
    assert weighted_prf(y, p, "recall")(one)[0] == pytest.approx(recall_score(y, p))
    assert weighted_prf(y, p, "f1")(one)[0] == pytest.approx(f1_score(y, p))
    assert weighted_spearman(s, r)(one)[0] == pytest.approx(spearmanr(s, r).statistic)
    assert weighted_kendall(s, r)(one)[0] == pytest.approx(kendalltau(s, r).statistic)


def test_weighted_equals_expanded_data(data: dict[str, np.ndarray]) -> None:
    """Weights are multiplicities: the metric equals the one on the repeated rows."""
    y, s, r, p, W = data["y"], data["score"], data["rating"], data["pred"], data["W"]
    auroc = weighted_auroc(y, s)(W)
    rho = weighted_spearman(s, r)(W)
    tau = weighted_kendall(s, r)(W)
    f1 = weighted_prf(y, p, "f1")(W)
    for b in range(W.shape[0]):
        ye, se, re, pe = (expand(v, W[b]) for v in (y, s, r, p))
        assert auroc[b] == pytest.approx(roc_auc_score(ye, se))
        assert rho[b] == pytest.approx(spearmanr(se, re).statistic)
        assert tau[b] == pytest.approx(kendalltau(se, re).statistic)
        assert f1[b] == pytest.approx(f1_score(ye, pe))


def bootstrap(
    stat: Statistic, clusters: np.ndarray, n_boot: int, seed: int, method: str = "percentile"
) -> tuple[BootstrapResult, Interval]:
    """The one-way bootstrap of a statistic of weighted rows (users), and its interval."""
    settings = stats_settings(design="one_way", n_boot=n_boot, seed=seed, ci_method=method)
    labels = np.asarray(clusters).astype(str).astype(object)
    res = weighted_rows(
        plan(settings, "attribute_labels", Units(n=len(labels), users=labels)),
        stat,
        len(labels),
        evaluate_counts,
    )
    (part,) = res.parts
    return part, read_interval(res, settings, None, len(labels)).interval


def test_undefined_is_nan_not_zero() -> None:
    y = np.array([True, True, False])
    W = np.array([[1.0, 1.0, 0.0]])  # no negatives drawn
    assert np.isnan(weighted_auroc(y, np.array([0.1, 0.2, 0.3]))(W)[0])
    assert np.isnan(weighted_ratio(np.ones(3), np.zeros(3))(np.ones((1, 3)))[0])


def test_bootstrap_is_seeded_and_brackets_the_estimate(data: dict[str, np.ndarray]) -> None:
    y, s = data["y"], data["score"]
    clusters = np.arange(len(y)) // 3
    pa, a = bootstrap(weighted_auroc(y, s), clusters, n_boot=300, seed=5)
    _, b = bootstrap(weighted_auroc(y, s), clusters, n_boot=300, seed=5)
    _, c = bootstrap(weighted_auroc(y, s), clusters, n_boot=300, seed=6)
    assert a == b and a != c
    assert a.low is not None and a.high is not None
    assert a.low <= a.value <= a.high and a.level == 0.95 and a.method == "percentile"
    assert pa.n_clusters == 20
    _, bca = bootstrap(weighted_auroc(y, s), clusters, n_boot=300, seed=5, method="bca")
    assert bca.low is not None and bca.value == a.value


def test_jackknife_only_for_bca(data: dict[str, np.ndarray]) -> None:
    """Percentile intervals skip the G x n leave-one-cluster-out pass; BCa gets it, exact."""
    y, s = data["y"], data["score"]
    clusters = np.arange(len(y)) // 3
    pct, _ = bootstrap(weighted_auroc(y, s), clusters, n_boot=300, seed=5)
    bca, _ = bootstrap(weighted_auroc(y, s), clusters, n_boot=300, seed=5, method="bca")
    assert pct.jackknife is None
    assert np.array_equal(bca.replicates, pct.replicates)
    jack = bca.jackknife
    assert jack is not None and jack.shape == (20,)
    keep = clusters.astype(str) != np.unique(clusters.astype(str))[4]  # clusters sort as text
    assert jack[4] == pytest.approx(roc_auc_score(y[keep], s[keep]))


def test_bootstrap_of_undefined_statistic_is_nan() -> None:
    y = np.zeros(10, dtype=bool)  # no positives: AUROC undefined -> the key stays absent
    part, iv = bootstrap(weighted_auroc(y, np.arange(10.0)), np.arange(10), n_boot=50, seed=1)
    assert np.isnan(part.estimate) and np.isnan(iv.value)


def test_choose_unit_falls_back_when_too_few_clusters() -> None:
    frame = pd.DataFrame({"prompt_id": ["p1"] * 6, "user_id": list("abcdef")})
    unit, clusters = choose_unit(frame, ["prompt", "user", "item"], min_clusters=4)
    assert unit == "user" and list(clusters) == list("abcdef")
    unit, _ = choose_unit(frame, ["prompt", "item"], min_clusters=4)
    assert unit == "item"


def test_spearman_is_undefined_on_a_constant_resample() -> None:
    """A resample that keeps one value of x (or fewer than two rows) has no rank correlation."""
    x = np.array([1.0, 2.0, 3.0, 4.0])
    y = np.array([4.0, 3.0, 1.0, 2.0])
    W = np.array([[3.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    rho = weighted_spearman(x, y)(W)
    assert np.isnan(rho[0]) and np.isnan(rho[1])
    assert rho[2] == pytest.approx(spearmanr(x, y).statistic)


def test_kappa_and_paired_difference_equal_expanded_data(data: dict[str, np.ndarray]) -> None:
    """Cohen's kappa of two binary labelings, and a difference of two statistics, per resample."""
    y, p, W = data["y"], data["pred"], data["W"]
    one = np.ones((1, len(y)))
    assert weighted_kappa(p, y)(one)[0] == pytest.approx(cohen_kappa_score(p, y))
    kappa = weighted_kappa(p, y)(W)
    diff = weighted_difference(weighted_prf(y, p, "f1"), weighted_prf(y, ~p, "f1"))(W)
    for b in range(W.shape[0]):
        ye, pe = expand(y, W[b]), expand(p, W[b])
        assert kappa[b] == pytest.approx(cohen_kappa_score(pe, ye))
        assert diff[b] == pytest.approx(f1_score(ye, pe) - f1_score(ye, ~pe))
    # one labeling constant on both sides: chance agreement is 1, kappa undefined (not 0)
    same = np.ones(len(y), dtype=bool)
    assert np.isnan(weighted_kappa(same, same)(one)[0])


def test_sums_statistics_resample_on_clusters_bit_for_bit_as_on_rows(
    data: dict[str, np.ndarray],
) -> None:
    """P/R/F1, kappa, ratios and their differences bootstrap from cluster sums: same bits."""
    y, pred, rating = data["y"], data["pred"], data["rating"]
    clusters = np.arange(len(y)) // 4
    stats = {
        "f1": weighted_prf(y, pred, "f1"),
        "kappa": weighted_kappa(y, pred),
        "ratio": weighted_ratio(rating * pred, rating),
        "gap": weighted_difference(weighted_prf(y, pred, "recall"), weighted_prf(y, ~pred, "f1")),
    }
    for name, stat in stats.items():
        on_rows = lambda W, stat=stat: stat(W)  # noqa: E731 - the generic row-weight path
        for method in ("percentile", "bca"):
            fast, f = bootstrap(stat, clusters, n_boot=300, seed=4, method=method)
            slow, s_ = bootstrap(on_rows, clusters, n_boot=300, seed=4, method=method)
            assert np.array_equal(fast.replicates, slow.replicates, equal_nan=True), name
            assert (f.value, f.low, f.high) == (s_.value, s_.low, s_.high), name


def test_chunks_are_bounded_by_cells_and_never_change_a_replicate(
    data: dict[str, np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Large data get fewer resamples per call (cache-sized arrays); the replicates and the
    interval are the same bits whatever the chunk."""
    assert resamples_per_chunk(1_000) == 200
    assert resamples_per_chunk(110_000) == 18
    assert resamples_per_chunk(10**8) == 1
    y, s, rating = data["y"], data["score"], data["rating"]
    clusters = np.arange(len(y)) // 3
    stats = {
        "kendall": lambda: weighted_kendall(s, rating),
        "spearman": lambda: weighted_spearman(s, rating),
        "auroc": lambda: weighted_auroc(y, s),
    }
    for name, make in stats.items():
        whole, w = bootstrap(make(), clusters, n_boot=300, seed=8, method="bca")
        monkeypatch.setattr(weighted_bootstrap, "_MAX_WEIGHT_CELLS", 7 * len(y))
        assert resamples_per_chunk(len(y)) == 7
        small, sm = bootstrap(make(), clusters, n_boot=300, seed=8, method="bca")
        monkeypatch.undo()
        assert np.array_equal(whole.replicates, small.replicates), name
        assert np.array_equal(whole.jackknife, small.jackknife), name
        assert (w.value, w.low, w.high) == (sm.value, sm.low, sm.high), name
