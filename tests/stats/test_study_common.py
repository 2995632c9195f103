"""The shared recipe of the study records: settings, paired resamples, intervals, records."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from analysis.stats.bootstrap import bootstrap_mean
from analysis.stats.interval import Interval
from analysis.stats.study_common import (
    ClusterResamples,
    StatsSettings,
    adjust_pvalues,
    boot_interval,
    bootstrap_sparse_totals,
    bootstrap_totals,
    key_part,
    leave_one_out_majority,
    loo_majority_from_counts,
    make_record,
    ratio,
)
from tests.settings_defaults import compose_config_plain, stats_settings


def test_settings_from_rule_config() -> None:
    nested = {
        "stats": {
            "n_boot": 50,
            "ci_level": 0.9,
            "ci_method": "bca",
            "cluster": "prompt",
            "multiple_comparisons": "fdr_bh",
            "min_shared_items": 1,  # tiny fixtures: every pair that meets
        },
        "run.seed": 3,
    }
    s = StatsSettings.from_rule_params(nested)
    assert (s.n_boot, s.ci_level, s.ci_method, s.cluster, s.seed) == (50, 0.9, "bca", "prompt", 3)
    # no defaults in code: every key of the group comes from the config (YAML holds them)
    defaults = compose_config_plain()["stats"]
    for bad in ({"n_boot": 0}, {"ci_method": "basic"}, {"multiple_comparisons": "bonf"}):
        with pytest.raises(ValueError):
            StatsSettings.from_rule_params({"stats": {**defaults, **bad}, "run.seed": 3})
    with pytest.raises(ValueError, match="n_boot"):
        StatsSettings.from_rule_params({"stats": {"ci_level": 0.9}, "run.seed": 3})
    with pytest.raises(ValueError, match="unknown statistics config keys"):
        StatsSettings.from_rule_params({"stats": defaults, "run.seed": 1, "extra": 2})


def test_totals_statistics_share_the_library_resamples() -> None:
    """A mean from the totals bootstrap is the library's bootstrap_mean, resample by resample."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=40)
    clusters = np.repeat(np.arange(10), 4).astype(str)
    settings = stats_settings(n_boot=200, seed=9, ci_method="bca")
    tb = bootstrap_totals({"x": x, "n": np.ones(40)}, clusters, settings, "users")
    mine = tb.stat(lambda g: ratio(g("x"), g("n")))
    lib = bootstrap_mean(x, clusters=clusters, n_boot=200, seed=9)
    assert mine.replicates == pytest.approx(lib.replicates)
    assert mine.jackknife == pytest.approx(lib.jackknife)
    assert float(mine.estimate) == pytest.approx(x.mean())
    # percentile intervals skip the leave-one-cluster-out pass, which only BCa reads
    pct = bootstrap_totals(
        {"x": x, "n": np.ones(40)}, clusters, stats_settings(n_boot=200, seed=9), "users"
    )
    assert pct.totals.jackknife is None
    assert np.array_equal(pct.totals.replicates, tb.totals.replicates)


def test_sparse_totals_equal_the_dense_totals_exactly() -> None:
    """Columns given as (rows, values) resample to the very same totals as the dense columns.

    The stage-2 crowd path (one sparse column per annotator) must not change a number: the
    totals are sums of counts, so equality is exact, not approximate.
    """
    rng = np.random.default_rng(5)
    n = 300
    clusters = rng.integers(0, 25, n).astype(str)
    dense = {
        f"c{i}": (rng.random(n) < 0.05).astype(float) * rng.integers(1, 3, n) for i in range(6)
    }
    sparse_cols = {k: (np.flatnonzero(v), v[np.flatnonzero(v)]) for k, v in dense.items()}
    settings = stats_settings(n_boot=300, seed=2)
    a = bootstrap_totals(dense, clusters, settings, "users").totals
    b = bootstrap_sparse_totals(sparse_cols, n, clusters, settings, "users").totals
    assert np.array_equal(a.estimate, b.estimate)
    assert np.array_equal(a.replicates, b.replicates)
    assert np.array_equal(a.jackknife, b.jackknife)
    assert a.weights_digest == b.weights_digest


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


def test_spearman_resamples_are_the_library_resamples() -> None:
    """ClusterResamples draws the same counts as the library for the same seed and clusters."""
    rng = np.random.default_rng(1)
    x = rng.integers(1, 6, 30).astype(float)
    y = x + rng.integers(-1, 2, 30)
    clusters = np.repeat(np.arange(6), 5).astype(str)
    settings = stats_settings(n_boot=100, seed=4)
    rs = ClusterResamples.draw(clusters, 30, settings, "users")
    res = rs.spearman(x, y, np.arange(30), bca=True)
    lib = bootstrap_mean(x, clusters=clusters, n_boot=100, seed=4, keep_weights=True)
    assert np.array_equal(rs.counts, lib.weights)
    assert float(res.estimate) == pytest.approx(stats.spearmanr(x, y).statistic)
    # one resample by hand: repeat each cluster's rows by its count
    w = np.repeat(rs.counts[0], 5)
    assert res.replicates[0] == pytest.approx(
        stats.spearmanr(np.repeat(x, w), np.repeat(y, w)).statistic
    )
    # leave-one-cluster-out values for BCa
    assert res.jackknife[0] == pytest.approx(stats.spearmanr(x[5:], y[5:]).statistic)


def test_intervals_and_bca_fallback() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=60)
    settings = stats_settings(n_boot=500, seed=1, ci_method="bca")
    tb = bootstrap_totals({"x": x, "n": np.ones(60)}, None, settings, "items")
    iv = boot_interval(tb.stat(lambda g: ratio(g("x"), g("n"))), settings, "items")
    assert iv.low < x.mean() < iv.high and "BCa" in iv.text and "over items (60)" in iv.text
    # every resample above the estimate: z0 is infinite, BCa undefined -> percentile, said so
    res = tb.stat(lambda g: ratio(g("x"), g("n")))
    shifted = replace(res, replicates=np.linspace(1.0, 2.0, 500), estimate=np.asarray(0.0))
    iv = boot_interval(shifted, settings, "items")
    assert iv.low == pytest.approx(1.025) and "BCa undefined" in iv.text


def test_multiple_comparison_corrections() -> None:
    p = {"a": 0.01, "b": 0.02, "c": 0.04}
    holm = adjust_pvalues(p, stats_settings(multiple_comparisons="holm"))
    assert holm == pytest.approx({"a": 0.03, "b": 0.04, "c": 0.04})
    bh = adjust_pvalues(p, stats_settings(multiple_comparisons="fdr_bh"))
    assert bh == pytest.approx({"a": 0.03, "b": 0.03, "c": 0.04})


def test_undefined_statistic_is_an_absent_key() -> None:
    iv = Interval(float("nan"), None, None, 0.95, "percentile", "95% CI: ...")
    assert make_record("k.x", iv, fmt=".2f", method="m", code="a:b", n=1, seed=1) is None
    ok = make_record(
        "k.x",
        Interval(0.5, 0.4, 0.6, 0.95, "percentile", "95% CI: x"),
        fmt=".2f",
        method="m",
        code="a:b",
        n=3,
        seed=1,
        extra={"p": np.float64(0.2), "bad": float("nan")},
    )
    assert ok is not None and ok.extra == {"bad": None, "p": 0.2}
    assert ok.ci_level == 0.95  # the record carries the level of the interval it was made from
    assert ok.method == "m; 95% CI: x"
    assert key_part("synthetic:cupid") == "synthetic:cupid"
    assert key_part(" two words ") == "two_words"
