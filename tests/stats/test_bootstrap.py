"""The vectorized cluster bootstrap: exactness against naive loops, determinism, coverage."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from analysis.stats import bootstrap as bs
from analysis.stats.agreement import (
    additive_form,
    fleiss_kappa,
    group_mean_kappa,
    gwet_ac1,
    krippendorff_alpha,
    pairwise_cohen_kappa,
)
from analysis.stats.bootstrap import (
    BootstrapResult,
    bootstrap_pairwise_kappa,
    bootstrap_statistic,
    resample_counts,
)
from analysis.stats.records import percentile_bounds, read_interval
from analysis.stats.resampling import DesignInfo, Resamples
from tests.settings_defaults import stats_settings

RATERS = ["h1", "h2", "h3", "m1", "m2"]
GROUPS = {"h1": "human", "h2": "human", "h3": "human", "m1": "model", "m2": "model"}


def small_world(seed: int = 0, n_items: int = 36, n_users: int = 9) -> pd.DataFrame:
    """Binary relevance votes of 3 humans and 2 models, clustered by user, ~10% missing."""
    rng = np.random.default_rng(seed)
    users = np.sort(rng.integers(0, n_users, n_items))
    truth = rng.random(n_items) < 0.3
    rows = []
    for r in RATERS:
        copy = 0.7 if r.startswith("h") else 0.5
        vote = np.where(rng.random(n_items) < copy, truth, rng.random(n_items) < 0.4)
        for i in np.flatnonzero(rng.random(n_items) > 0.1):
            rows.append((f"i{i:02d}", r, bool(vote[i]), f"u{users[i]}"))
    return pd.DataFrame(rows, columns=["item", "rater", "label", "user_id"])


def mean_boot(x: np.ndarray, clusters: np.ndarray | None = None, **kw: object) -> BootstrapResult:
    """The engine's cluster bootstrap of a mean (a rate of 0/1 values)."""
    kw.setdefault("n_boot", 200)
    kw.setdefault("seed", 0)
    return bootstrap_statistic(
        np.column_stack([np.asarray(x, dtype=float), np.ones(len(x))]),
        lambda t: t[:, 0] / t[:, 1],
        clusters=clusters,
        cluster_name="users",
        **kw,
    )


def agreement_boot(
    df: pd.DataFrame, coefficient: str, n_boot: int, seed: int, **kw: object
) -> BootstrapResult:
    """The engine's cluster bootstrap (users) of a multi-rater coefficient's additive form."""
    form = additive_form(df, coefficient, **kw)  # type: ignore[arg-type]
    users = df.drop_duplicates("item").set_index("item")["user_id"].reindex(form.items)
    return bootstrap_statistic(
        form.contributions,
        form.finish,
        clusters=users.to_numpy(dtype=object),
        cluster_name="users",
        n_boot=n_boot,
        seed=seed,
    )


def interval(res: BootstrapResult, level: float = 0.95, method: str = "percentile"):
    return percentile_bounds(res, level, method)


def expand(df: pd.DataFrame, cluster_ids: np.ndarray, counts: np.ndarray) -> pd.DataFrame:
    """The resampled data set a count vector describes: clusters repeated, items renamed."""
    parts = []
    for c, n in zip(cluster_ids, counts, strict=True):
        for copy in range(n):
            part = df[df["user_id"] == c].copy()
            part["item"] = part["item"] + f"#{copy}"
            parts.append(part)
    return pd.concat(parts, ignore_index=True)


# ---------------------------------------------------------------- resampling and seeds


def test_same_seed_same_resamples_different_seed_different():
    df = small_world()
    a = bootstrap_pairwise_kappa(df, cluster="user_id", n_boot=50, seed=7)
    b = bootstrap_pairwise_kappa(df, cluster="user_id", n_boot=50, seed=7)
    c = bootstrap_pairwise_kappa(df, cluster="user_id", n_boot=50, seed=8)
    np.testing.assert_array_equal(a.matrix.replicates, b.matrix.replicates)
    assert a.matrix.weights_digest == b.matrix.weights_digest != c.matrix.weights_digest
    assert not np.allclose(a.matrix.replicates, c.matrix.replicates, equal_nan=True)


def test_counts_are_resamples_and_chunking_does_not_change_them():
    counts = resample_counts(13, 100, seed=3)
    assert counts.shape == (100, 13)
    assert (counts.sum(axis=1) == 13).all()
    rng, _ = bs._stream(3)
    chunked = np.vstack(list(bs._count_chunks(rng, 13, 100, max_cells=13 * 7)))
    np.testing.assert_array_equal(counts, chunked)
    rng, _ = bs._stream(3)
    wide = list(bs._count_chunks(rng, 13, 100, max_cells=13 * 7, width=91))  # 1 row each
    assert max(len(w) for w in wide) == 1
    np.testing.assert_array_equal(counts, np.vstack(wide))
    generator = resample_counts(13, 100, seed=np.random.default_rng(3))
    assert generator.shape == (100, 13)
    # a design's other factors draw on other streams of the same seed
    other = resample_counts(13, 100, seed=3, stream=2)
    assert not np.array_equal(counts, other) and (other.sum(axis=1) == 13).all()
    with pytest.raises(ValueError, match="stream"):
        resample_counts(13, 10, seed=3, stream=-1)
    assert resample_counts(13, 0, seed=3).shape == (0, 13)


def test_results_on_the_same_clusters_and_seed_are_paired():
    rng = np.random.default_rng(1)
    x, y = rng.random(50), rng.random(50)
    clusters = np.repeat(np.arange(10), 5)
    info = DesignInfo("d", "declared", (("users", 10, "bootstrap"),), False, None, (), (), "")

    def resamples(v: np.ndarray, seed: int) -> Resamples:
        res = mean_boot(v, clusters=clusters, n_boot=200, seed=seed)
        return Resamples(res.estimate, (res,), info)

    direct = mean_boot(x - y, clusters=clusters, n_boot=200, seed=4)
    diff = resamples(x, 4).minus(resamples(y, 4))
    (part,) = diff.parts
    np.testing.assert_allclose(part.replicates, direct.replicates, atol=1e-12)
    np.testing.assert_allclose(part.jackknife, direct.jackknife, atol=1e-12)
    with pytest.raises(ValueError, match="same resamples"):
        resamples(x, 4).minus(resamples(y, 5))


# ---------------------------------------------------------------- exactness vs naive loops


def test_vectorized_kappa_matrix_equals_a_naive_sklearn_loop_on_the_same_resamples():
    df = small_world()
    res = bootstrap_pairwise_kappa(df, groups=GROUPS, cluster="user_id", n_boot=20, seed=11)
    users = np.array(sorted(df["user_id"].unique()), dtype=object)
    pairs = list(res.pairs)
    blocks = {"human_human": [], "human_model": [], "model_model": []}
    for p, (a, b) in enumerate(pairs):
        blocks["_".join(sorted((GROUPS[a], GROUPS[b])))].append(p)
    for b_idx, counts in enumerate(resample_counts(len(users), 20, seed=11)):
        wide = expand(df, users, counts).pivot(index="item", columns="rater", values="label")
        naive = []
        for a, b in pairs:
            shared = wide[[a, b]].dropna()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # one class in a resample: sklearn says NaN
                naive.append(
                    cohen_kappa_score(shared[a].astype(bool), shared[b].astype(bool))
                    if len(shared)
                    else np.nan
                )
        naive = np.array(naive)
        np.testing.assert_allclose(res.matrix.replicates[b_idx], naive, atol=1e-12, equal_nan=True)
        for key, cols in blocks.items():
            vals = naive[cols]
            expected = vals[np.isfinite(vals)].mean() if np.isfinite(vals).any() else np.nan
            got = res.group_means[key].replicates[b_idx]
            np.testing.assert_allclose(got, expected, atol=1e-12, equal_nan=True)


def test_kappa_matrix_jackknife_only_when_asked():
    """Percentile intervals skip the clusters x pairs leave-one-out pass; the resamples stay."""
    df = small_world(3)
    full = bootstrap_pairwise_kappa(df, groups=GROUPS, cluster="user_id", n_boot=40, seed=2)
    lean = bootstrap_pairwise_kappa(
        df, groups=GROUPS, cluster="user_id", n_boot=40, seed=2, jackknife=False
    )
    assert lean.matrix.jackknife is None
    assert all(g.jackknife is None for g in lean.group_means.values())
    np.testing.assert_array_equal(lean.matrix.replicates, full.matrix.replicates)
    np.testing.assert_array_equal(interval(lean.matrix), interval(full.matrix))
    with pytest.raises(ValueError, match="jackknife"):
        interval(lean.matrix, method="bca")
    users = sorted(df["user_id"].unique())
    wide = df[df["user_id"] != users[4]].pivot(index="item", columns="rater", values="label")
    a, b = full.pairs[0]
    shared = wide[[a, b]].dropna()
    assert full.matrix.jackknife is not None
    assert full.matrix.jackknife[4, 0] == pytest.approx(
        cohen_kappa_score(shared[a].astype(bool), shared[b].astype(bool))
    )


def test_matrix_bootstrap_point_estimates_are_the_library_values():
    df = small_world(2)
    res = bootstrap_pairwise_kappa(df, groups=GROUPS, cluster="user_id", n_boot=20, seed=0)
    library = pairwise_cohen_kappa(df)
    for p, (a, b) in enumerate(res.pairs):
        assert res.matrix.estimate[p] == pytest.approx(library.loc[a, b], nan_ok=True)
    point = group_mean_kappa(df, GROUPS)
    assert {k: float(v.estimate) for k, v in res.group_means.items()} == pytest.approx(point)
    wide = df.pivot(index="item", columns="rater", values="label")
    for p, (a, b) in enumerate(res.pairs):
        assert res.n_shared[p] == len(wide[[a, b]].dropna())


@pytest.mark.parametrize(
    ("coefficient", "point"),
    [
        ("fleiss_kappa", fleiss_kappa),
        ("gwet_ac1", lambda d: gwet_ac1(d, categories=[False, True])),
        ("krippendorff_alpha", krippendorff_alpha),
        ("percent_agreement", None),
    ],
)
def test_multi_rater_bootstrap_equals_recomputing_each_resample(coefficient, point):
    from analysis.stats.agreement import percent_agreement

    point = point or percent_agreement
    df = small_world(3)
    res = agreement_boot(df, coefficient, n_boot=15, seed=2)
    assert float(res.estimate) == pytest.approx(point(df), abs=1e-12)
    users = np.array(sorted(df["user_id"].unique()), dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        counts = resample_counts(len(users), 15, seed=2)
        naive = [point(expand(df, users, c)) for c in counts]
    np.testing.assert_allclose(res.replicates, naive, atol=1e-12, equal_nan=True)


def test_ordinal_alpha_bootstrap_recomputes_the_distances_per_resample():
    rng = np.random.default_rng(4)
    rows = [
        (f"i{i:02d}", f"r{r}", int(rng.integers(1, 6)), f"u{i // 4}")
        for i in range(32)
        for r in range(3)
        if rng.random() > 0.15
    ]
    df = pd.DataFrame(rows, columns=["item", "rater", "label", "user_id"])
    res = agreement_boot(df, "krippendorff_alpha", n_boot=10, seed=1, level="ordinal")
    users = np.array(sorted(df["user_id"].unique()), dtype=object)
    naive = [
        krippendorff_alpha(expand(df, users, c), "ordinal", categories=[1, 2, 3, 4, 5])
        for c in resample_counts(len(users), 10, seed=1)
    ]
    np.testing.assert_allclose(res.replicates, naive, atol=1e-12)


# ---------------------------------------------------------------- intervals


def test_bca_agrees_with_scipy_on_an_unclustered_mean():
    x = np.random.default_rng(5).exponential(size=40)
    ours = mean_boot(x, n_boot=20000, seed=2)
    ref = stats.bootstrap(
        (x,), np.mean, n_resamples=20000, method="BCa", random_state=np.random.default_rng(1)
    ).confidence_interval
    low, high = interval(ours, method="bca")
    assert low == pytest.approx(ref.low, abs=0.006)
    assert high == pytest.approx(ref.high, abs=0.006)
    p_low, p_high = interval(ours)
    assert low > p_low and high > p_high  # right-skewed statistic: BCa shifts right


def test_percentile_interval_and_its_record_sentence():
    res = mean_boot(np.arange(100) % 4 == 0, n_boot=500, seed=1)
    info = DesignInfo("d", "declared", (("items", 100, "bootstrap"),), False, None, (), (), "")
    reading = read_interval(
        Resamples(res.estimate, (res,), info), stats_settings(ci_level=0.9), None, 100
    )
    ci = reading.interval
    low, high = np.quantile(res.replicates, [0.05, 0.95])
    assert (ci.low, ci.high) == pytest.approx((low, high))
    assert ci.value == 0.25 and ci.level == 0.9 and ci.method == "percentile"
    assert res.n_boot == 500 and int(res.n_valid) == 500
    assert "90% CI: cluster bootstrap over users (100), B=500, percentile" in ci.text


def test_cluster_bootstrap_covers_a_clustered_rate_and_the_item_bootstrap_does_not():
    """40 users x 20 items, user-level rates ~ Beta(2, 8): strong clustering, true rate .2."""
    rng = np.random.default_rng(0)
    clusters = np.repeat(np.arange(40), 20)
    hits_cluster = hits_item = 0
    n_sim = 200
    for s in range(n_sim):
        x = (rng.random((40, 20)) < rng.beta(2, 8, 40)[:, None]).ravel()
        low, high = interval(mean_boot(x, clusters=clusters, n_boot=400, seed=s))
        hits_cluster += low <= 0.2 <= high
        low, high = interval(mean_boot(x, n_boot=400, seed=s))
        hits_item += low <= 0.2 <= high
    assert 0.88 <= hits_cluster / n_sim <= 0.99
    assert hits_item / n_sim < 0.85  # ignoring the clustering is overconfident


def test_kappa_interval_covers_the_population_kappa():
    """Each rater copies a latent truth w.p. s, else guesses: population kappa = s^2 = .49."""
    rng = np.random.default_rng(1)
    n, n_sim, hits = 300, 150, 0
    items = np.r_[np.arange(n), np.arange(n)]
    for s in range(n_sim):
        truth = rng.random(n) < 0.3
        votes = [np.where(rng.random(n) < 0.7, truth, rng.random(n) < 0.3) for _ in range(2)]
        df = pd.DataFrame({"item": items, "rater": ["a"] * n + ["b"] * n, "label": np.r_[*votes]})
        low, high = interval(bootstrap_pairwise_kappa(df, n_boot=400, seed=s).matrix)
        hits += low[0] <= 0.49 <= high[0]
    assert 0.88 <= hits / n_sim <= 0.99


# ---------------------------------------------------------------- raters and edge cases


def test_undefined_resamples_are_dropped_and_counted():
    # two clusters hold the only "yes" votes: resamples without them have one category
    df = pd.DataFrame(
        [
            (f"i{i}", r, i < 2 or (r == "b" and i == 5), f"u{i // 2}")
            for i in range(10)
            for r in "ab"
        ],
        columns=["item", "rater", "label", "user_id"],
    )
    res = bootstrap_pairwise_kappa(df, cluster="user_id", n_boot=300, seed=0)
    valid = int(res.matrix.n_valid[0])
    assert 0 < valid < 300
    assert np.isnan(res.matrix.replicates[:, 0]).sum() == 300 - valid
    info = DesignInfo("d", "declared", (("users", 5, "bootstrap"),), False, None, (), (), "")
    part = res.matrix.component(0)
    ci = read_interval(Resamples(part.estimate, (part,), info), stats_settings(), None, 10)
    assert f"{300 - valid} resamples where it is undefined dropped" in ci.interval.text


def test_bad_inputs_are_errors():
    df = small_world()
    broken = df.copy()
    broken.loc[broken.index[0], "user_id"] = "elsewhere"
    item = broken.loc[broken.index[0], "item"]
    with pytest.raises(ValueError, match=f"item '{item}' has 2 different values"):
        bootstrap_pairwise_kappa(broken, cluster="user_id", n_boot=5, seed=0)
    with pytest.raises(ValueError, match="not in the ratings"):
        bootstrap_pairwise_kappa(df, cluster="prompt_id", n_boot=5, seed=0)
    with pytest.raises(TypeError, match="seed"):
        mean_boot(np.ones(5), n_boot=5, seed=1.5)
    with pytest.raises(ValueError, match="observation 2: cluster"):
        mean_boot(np.ones(3), clusters=np.array(["a", "b", None]), n_boot=5)


def test_sparse_pairs_leave_out_pairs_under_the_shared_minimum() -> None:
    """A pair on fewer than ``min_shared`` items gets no kappa and leaves the group mean."""
    rng = np.random.default_rng(3)
    rows = []
    for item in range(60):
        truth = bool(rng.random() < 0.5)
        raters = ["a", "b"] + (["c"] if item < 5 else [])  # c shares 5 items with a and b
        for r in raters:
            label = truth if rng.random() < 0.85 else not truth
            rows.append({"item": item, "rater": r, "label": label, "user": item // 3})
    df = pd.DataFrame(rows)
    groups = dict.fromkeys("abc", "human")
    sparse_ = bs.bootstrap_pairwise_kappa(
        df, groups=groups, cluster="user", n_boot=50, seed=1, min_shared=30
    )
    (ab_pair,) = sparse_.pairs
    assert sparse_.pairs == (("a", "b"),)
    assert list(sparse_.n_shared) == [60]
    ab = cohen_kappa_score(*(df[df.rater == r].set_index("item").label for r in "ab"))
    assert float(sparse_.group_means["human_human"].estimate) == pytest.approx(ab)
    full = bs.bootstrap_pairwise_kappa(df, groups=groups, cluster="user", n_boot=50, seed=1)
    assert len(full.pairs) == 3
    full_ab = full.matrix.component(full.pairs.index(ab_pair))
    assert np.array_equal(full_ab.replicates, sparse_.matrix.component(0).replicates)
    none = bs.bootstrap_pairwise_kappa(
        df, groups=groups, cluster="user", n_boot=5, seed=1, min_shared=100
    )
    assert none.pairs == () and none.group_means == {}


# ---------------------------------------------------------------- strata


def test_stratified_weights_keep_each_stratum_and_chunking_does_not_change_them() -> None:
    """Rao-Wu: n_h - 1 draws within each stratum, each weighing n_h / (n_h - 1)."""
    strata = np.array([0, 0, 1, 1, 1, 2, 2, 1, 0])
    rng, _ = bs._stream(3)
    counts = np.vstack(list(bs._count_chunks(rng, 9, 200, strata=strata)))
    for s, size in enumerate(np.bincount(strata)):
        mine = counts[:, strata == s]
        np.testing.assert_allclose(mine.sum(axis=1), size)
        np.testing.assert_allclose(np.unique(mine * (size - 1) / size) % 1, 0, atol=1e-12)
    rng, _ = bs._stream(3)
    chunked = np.vstack(list(bs._count_chunks(rng, 9, 200, max_cells=9 * 7, strata=strata)))
    np.testing.assert_array_equal(counts, chunked)
    assert len({tuple(row) for row in counts}) > 100  # resamples, not one fixed draw


def test_stratified_bootstrap_of_a_pooled_rate_has_the_stratified_variance() -> None:
    """Two strata with different rates and fixed sizes: the pooled rate's spread is the
    within-strata one, sum (n_s / n)^2 p_s (1 - p_s) / n_s; resampling all items together
    adds the spread of the mix."""
    rng = np.random.default_rng(0)
    sizes, rates = (300, 100), (0.3, 0.9)
    y = np.concatenate([rng.random(n) < p for n, p in zip(sizes, rates, strict=True)])
    strata = pd.Series(np.repeat(["chat", "bench"], sizes), name="source")
    values = np.column_stack([y, np.ones(y.size)])

    def rate(t: np.ndarray) -> np.ndarray:
        return t[:, 0] / t[:, 1]

    kw = {"n_boot": 20_000, "seed": 2, "jackknife": False, "clusters": None, "cluster_name": "x"}
    stratified = bootstrap_statistic(values, rate, strata=strata, **kw)
    pooled = bootstrap_statistic(values, rate, **kw)
    n = y.size
    parts = [y[: sizes[0]], y[sizes[0] :]]
    within = sum((len(p) / n) ** 2 * p.mean() * (1 - p.mean()) / len(p) for p in parts)
    assert stratified.replicates.var() == pytest.approx(within, rel=0.05)
    assert pooled.replicates.var() == pytest.approx(y.mean() * (1 - y.mean()) / n, rel=0.05)
    assert pooled.replicates.var() > 1.3 * stratified.replicates.var()
    assert stratified.stratified_by == "source" and stratified.n_strata == 2
    assert stratified.strata_phrase() == " within the 2 strata of source (Rao-Wu)"


def test_rescaled_strata_give_small_strata_their_unbiased_variance() -> None:
    """Five observations per stratum: the plain bootstrap's variance of a stratum mean is
    (n - 1) / n of s^2 / n; the Rao-Wu weights give s^2 / n (s^2 with n - 1) itself."""
    values = np.array([3.0, 7.0, 1.0, 4.0, 10.0, 2.0, 2.5, 8.0, 6.0, 0.0])
    strata = pd.Series(np.repeat(["a", "b"], 5), name="source")
    in_a = np.column_stack([values * (strata == "a"), (strata == "a").astype(float)])
    res = bootstrap_statistic(
        in_a,
        lambda t: t[:, 0] / t[:, 1],
        clusters=None,
        cluster_name="x",
        strata=strata,
        n_boot=40_000,
        seed=5,
        jackknife=False,
    )
    assert res.replicates.var() == pytest.approx(values[:5].var(ddof=1) / 5, rel=0.03)


def test_agreement_bootstraps_share_stratified_resamples() -> None:
    """Kappa matrix, multi-rater coefficient and column totals over the same clusters and
    strata draw the same resamples (one digest), so their differences stay paired."""
    df = small_world()
    df["source"] = np.where(df["user_id"].isin(["u0", "u1", "u2", "u3"]), "chat", "bench")
    kw = {"cluster": "user_id", "n_boot": 50, "seed": 7, "strata": "source"}
    kappa = bootstrap_pairwise_kappa(df, groups=GROUPS, **kw)
    per_item = df.groupby("item")[["user_id", "source"]].first()
    ones = bootstrap_statistic(
        np.ones(len(per_item)),
        lambda t: t[:, 0],
        clusters=per_item["user_id"].to_numpy(),
        cluster_name="users",
        strata=per_item["source"],
        n_boot=50,
        seed=7,
    )
    assert kappa.matrix.weights_digest == ones.weights_digest
    assert kappa.group_means["human_human"].stratified_by == "source"
    plain = bootstrap_pairwise_kappa(df, groups=GROUPS, cluster="user_id", n_boot=50, seed=7)
    assert plain.matrix.weights_digest != kappa.matrix.weights_digest
    # every resample weighs each source's users as the data hold them
    users = per_item.drop_duplicates("user_id").sort_values("user_id")
    codes = pd.factorize(users["source"], sort=True)[0]
    rng, _ = bs._stream(7)
    weights = np.vstack(list(bs._count_chunks(rng, len(users), 50, strata=codes)))
    for source, n in users["source"].value_counts().items():
        mine = weights[:, (users["source"] == source).to_numpy()]
        np.testing.assert_allclose(mine.sum(axis=1), n)


def test_strata_that_cannot_be_resampled_within_are_not_used() -> None:
    values = np.arange(6.0)
    clusters = np.array([0, 0, 1, 1, 2, 2])
    one_cluster = pd.Series(["a", "a", "a", "a", "b", "b"], name="source")
    res = mean_boot(values, clusters=clusters, strata=one_cluster, n_boot=20, seed=1)
    plain = mean_boot(values, clusters=clusters, n_boot=20, seed=1)
    assert res.stratified_by is None and res.weights_digest == plain.weights_digest
    assert res.strata_phrase() == ""
    split = pd.Series(["a", "b", "a", "a", "b", "b"], name="source")
    with pytest.raises(ValueError, match="observation 1: cluster 0 .* lies in two strata"):
        mean_boot(values, clusters=clusters, strata=split, n_boot=20, seed=1)
    with pytest.raises(ValueError, match="stratum .* label is missing"):
        mean_boot(values, clusters=clusters, strata=pd.Series(["a"] * 5 + [None]), n_boot=5)
