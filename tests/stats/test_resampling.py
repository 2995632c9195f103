"""Resampling under declared designs: the crossed users x prompts variance against a brute
force, the annotators' deletions against recomputing the statistic, shared resamples."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.stats.bootstrap import resample_counts
from analysis.stats.records import read_interval
from analysis.stats.resampling import (
    Resamples,
    Units,
    annotator_clusterings,
    cell_labels,
    pairwise_kappa,
    plan,
    totals,
    weighted_rows,
)
from analysis.stats.weighted_bootstrap import evaluate_counts, weighted_ratio
from tests.settings_defaults import stats_settings

N_BOOT = 300


def crossed_world(seed: int = 0) -> pd.DataFrame:
    """Sparse crossed items: 12 users, 11 prompts, each user with 3-4 prompts, 4 items each;
    a user effect, a prompt effect and item noise on a 0/1 outcome."""
    rng = np.random.default_rng(seed)
    rows = []
    user_effect = rng.normal(0, 0.8, 12)
    prompt_effect = rng.normal(0, 0.8, 11)
    for u in range(12):
        for p in rng.choice(11, size=int(rng.integers(3, 5)), replace=False):
            for i in range(4):
                logit = -0.5 + user_effect[u] + prompt_effect[p] + rng.normal(0, 0.5)
                rows.append(
                    {
                        "user": f"u{u:02d}",
                        "prompt": f"p{p:02d}",
                        "item": f"u{u}p{p}i{i}",
                        "y": float(rng.random() < 1 / (1 + math.exp(-logit))),
                    }
                )
    return pd.DataFrame(rows)


def expand_by(frame: pd.DataFrame, labels: np.ndarray, counts: np.ndarray) -> pd.DataFrame:
    """The resampled data a count vector over sorted ``labels`` describes (rows repeated)."""
    levels = np.array(sorted(set(labels)), dtype=object)
    times = dict(zip(levels, counts, strict=True))
    return frame.loc[frame.index.repeat([times[x] for x in labels])]


def test_two_way_variance_equals_a_brute_force_on_a_small_crossed_design() -> None:
    """Each factor's replicates are the rate recomputed on its resampled data (streams 0, 1
    and 2 of the seed); the interval is the t interval of V_users + V_prompts - V_cells."""
    df = crossed_world()
    settings = stats_settings(n_boot=N_BOOT, seed=5)
    users = df["user"].to_numpy(dtype=object)
    prompts = df["prompt"].to_numpy(dtype=object)
    design = plan(settings, "relevance_items", Units(n=len(df), users=users, prompts=prompts))
    assert [f.name for f in design.factors] == ["users", "prompts", "cells"]
    assert [f.sign for f in design.factors] == [1, 1, -1]
    tb = totals(design, {"y": df["y"].to_numpy(), "n": np.ones(len(df))}, len(df))
    res = tb.stat(lambda g: g("y") / g("n"))
    assert float(res.estimate) == pytest.approx(df["y"].mean())
    cells = cell_labels(users, prompts)
    variances = []
    for part, labels, stream in zip(res.parts, (users, prompts, cells), (0, 1, 2), strict=True):
        n_levels = len(set(labels))
        brute = [
            expand_by(df, labels, counts)["y"].mean()
            for counts in resample_counts(n_levels, N_BOOT, seed=5, stream=stream)
        ]
        np.testing.assert_allclose(part.replicates, brute, atol=1e-12)
        variances.append(np.var(brute, ddof=1))
    v = variances[0] + variances[1] - variances[2]
    reading = read_interval(res, settings, None, len(df))
    df_ = min(12, 11) - 1
    half = stats.t.ppf(0.975, df_) * math.sqrt(v)
    assert reading.interval.low == pytest.approx(df["y"].mean() - half)
    assert reading.interval.high == pytest.approx(df["y"].mean() + half)
    assert reading.interval.method == "t" and "Cameron-Gelbach-Miller" in reading.interval.text
    # the test of a value uses the same variance and degrees of freedom
    p, bound, _ = reading.test(0.2)
    t = abs(df["y"].mean() - 0.2) / math.sqrt(v)
    assert p == pytest.approx(2 * stats.t.sf(t, df_)) and not bound


def test_the_users_part_of_a_crossed_design_is_the_one_way_users_bootstrap() -> None:
    df = crossed_world(1)
    users = df["user"].to_numpy(dtype=object)
    prompts = df["prompt"].to_numpy(dtype=object)
    columns = {"y": df["y"].to_numpy(), "n": np.ones(len(df))}
    units = Units(len(df), users, prompts)
    crossed = totals(
        plan(stats_settings(n_boot=N_BOOT, seed=5), "relevance_items", units), columns, len(df)
    )
    one_way = totals(
        plan(stats_settings(n_boot=N_BOOT, seed=5, design="one_way"), "relevance_items", units),
        columns,
        len(df),
    )
    assert len(one_way.parts) == 1
    assert np.array_equal(crossed.parts[0].replicates, one_way.parts[0].replicates)
    assert crossed.parts[0].weights_digest == one_way.parts[0].weights_digest


def test_weighted_rows_and_totals_draw_the_same_resamples() -> None:
    """A share of weighted rows and the same share of totals: the same replicates under a
    crossed design, so two rules reporting one estimand print one interval."""
    df = crossed_world(2)
    units = Units(len(df), df["user"].to_numpy(dtype=object), df["prompt"].to_numpy(dtype=object))
    settings = stats_settings(n_boot=N_BOOT, seed=3)
    y = df["y"].to_numpy()
    a = totals(plan(settings, "relevance_items", units), {"y": y, "n": np.ones(len(df))}, len(df))
    a = a.stat(lambda g: g("y") / g("n"))
    b = weighted_rows(
        plan(settings, "relevance_items", units),
        weighted_ratio(y, np.ones(len(df))),
        len(df),
        evaluate_counts,
    )
    for pa, pb in zip(a.parts, b.parts, strict=True):
        assert pa.weights_digest == pb.weights_digest
        np.testing.assert_array_equal(pa.replicates, pb.replicates)
    ia = read_interval(a, settings, None, len(df)).interval
    ib = read_interval(b, settings, None, len(df)).interval
    assert (ia.low, ia.high) == (ib.low, ib.high)


def rated_world(seed: int = 0) -> pd.DataFrame:
    """Judgments of 0/1 by 4 annotators with their own offsets, crossed with 12 users (each
    user judged by 2-3 annotators) and 11 prompts."""
    df = crossed_world(seed)
    rng = np.random.default_rng(seed + 10)
    rows = []
    offset = {f"a{k}": v for k, v in enumerate(rng.normal(0, 0.1, 4))}
    for _, part in df.groupby("user"):
        for a in rng.choice(sorted(offset), size=int(rng.integers(2, 4)), replace=False):
            for _, r in part.iterrows():
                p = np.clip(0.3 + 0.4 * r["y"] + offset[a], 0, 1)
                rows.append({**r.to_dict(), "annotator": a, "v": float(rng.random() < p)})
    return pd.DataFrame(rows)


def test_annotator_clusterings_are_deletions_recomputed_by_hand() -> None:
    """Every annotator clustering's values are the rate recomputed without one annotator, or
    without its judgments of one user (prompt, user x prompt cell)."""
    df = rated_world()
    design, res = _people_rate(df)
    names = [c.noun for c in annotator_clusterings(design)]
    assert names == [
        "annotators",
        "user x annotator cells",
        "prompt x annotator cells",
        "user x prompt x annotator cells",
    ]
    keys = {
        "annotators": ["annotator"],
        "user x annotator cells": ["annotator", "user"],
        "prompt x annotator cells": ["annotator", "prompt"],
        "user x prompt x annotator cells": ["annotator", "user", "prompt"],
    }
    for part in res.parts[3:]:
        cols = keys[part.cluster]
        combos = df[cols].drop_duplicates().itertuples(index=False, name=None)
        expected = [
            df.loc[
                ~(df[cols] == pd.Series(dict(zip(cols, key, strict=True)))).all(axis=1), "v"
            ].mean()
            for key in combos
        ]
        assert part.is_jackknife
        np.testing.assert_allclose(np.sort(part.jackknife), np.sort(expected), atol=1e-12)
    reading = read_interval(res, stats_settings(n_boot=N_BOOT, seed=1), None, len(df))
    assert "annotators" in reading.interval.text and reading.interval.method == "t"


def _people_rate(df: pd.DataFrame):
    """The mean of ``v`` under the relevance_people design (users x prompts crossed, the
    annotators jackknifed): its plan and its resamples."""
    units = Units(
        len(df),
        users=df["user"].to_numpy(dtype=object),
        prompts=df["prompt"].to_numpy(dtype=object),
        annotators=tuple(sorted(df["annotator"].unique())),
    )
    design = plan(stats_settings(n_boot=N_BOOT, seed=1), "relevance_people", units)
    tb = totals(
        design,
        {"v": df["v"].to_numpy(), "n": np.ones(len(df))},
        len(df),
        annotator_rows=df["annotator"].to_numpy(dtype=object),
    )
    return design, tb.stat(lambda g: g("v") / g("n"))


def _jackknife_variance(values: np.ndarray) -> float:
    g = values.size
    return (g - 1) / g * float(np.sum((values - values.mean()) ** 2))


def _satterthwaite(v: float, v_rows: float, df_rows: float, v_annotators: float) -> float:
    """The people design's degrees of freedom by hand: Satterthwaite's for the rows' variance
    and the annotators' own jackknife variance (4 annotators: 3 df), between 3 and the rows'."""
    df = v**2 / (v_rows**2 / df_rows + v_annotators**2 / 3)
    return min(max(df, 3.0), df_rows)


def test_a_design_with_people_reads_t_with_satterthwaites_degrees_of_freedom() -> None:
    """By hand: V = V_users + V_prompts - V_cells plus the annotators' net variance (their
    inclusion-exclusion, truncated at zero), read with t at Satterthwaite's degrees of
    freedom for the rows' variance (the fewest row levels less one) and the annotators' own
    jackknife variance (4 annotators, 3 df), never fewer than 3 nor more than the rows';
    the test of a value uses the same variance and df (scipy.stats.t)."""
    df = rated_world()
    settings = stats_settings(n_boot=N_BOOT, seed=1)
    _, res = _people_rate(df)
    parts = {p.cluster: p for p in res.parts}
    v_rows = sum(
        sign * np.var(parts[name].replicates, ddof=1)
        for name, sign in (("users", 1), ("prompts", 1), ("user-prompt cells", -1))
    )
    df_rows = min(parts["users"].n_clusters, parts["prompts"].n_clusters) - 1.0
    signs = {
        "annotators": 1,
        "user x annotator cells": -1,
        "prompt x annotator cells": -1,
        "user x prompt x annotator cells": 1,
    }
    assert {name: parts[name].sign for name in signs} == signs
    value = float(res.estimate)

    def expected(parts_now: dict) -> tuple[float, float]:
        net = sum(s * _jackknife_variance(parts_now[n].jackknife) for n, s in signs.items())
        v = v_rows + max(net, 0.0)
        a = _jackknife_variance(parts_now["annotators"].jackknife)
        return v, _satterthwaite(v, v_rows, df_rows, a)

    def spread(name: str, scale: float, now: dict) -> tuple[Resamples, dict]:
        """The resamples with one clustering's deleted values spread ``scale`` times as far."""
        part = now[name]
        centre = part.jackknife.mean()
        moved = dataclasses.replace(part, jackknife=centre + scale * (part.jackknife - centre))
        out = {**now, name: moved}
        return Resamples(res.estimate, tuple(out[p.cluster] for p in res.parts), res.design), out

    reading = read_interval(res, settings, None, len(df))
    v, dof = expected(parts)
    assert 3 < dof < df_rows
    assert reading.df == pytest.approx(dof, rel=1e-12)
    assert reading.variance == pytest.approx(v, rel=1e-12)
    half = stats.t.ppf(0.975, dof) * math.sqrt(v)
    assert reading.interval.low == pytest.approx(value - half, rel=1e-12)
    assert reading.interval.high == pytest.approx(value + half, rel=1e-12)
    assert f"{dof:.1f}, between the annotators' and the rows' fewest" in reading.interval.text
    p, bound, _ = reading.test(0.6)
    assert p == pytest.approx(2 * stats.t.sf(abs(value - 0.6) / math.sqrt(v), dof), rel=1e-12)
    assert not bound
    # people who differ a lot: their jackknife decides how well the variance is known, and
    # the degrees of freedom come close to the annotators' 3
    wide, wide_parts = spread("annotators", 10.0, parts)
    reading = read_interval(wide, settings, None, len(df))
    v, dof = expected(wide_parts)
    assert 3 < dof < 3.2 and reading.df == pytest.approx(dof, rel=1e-12)
    # ... and never fewer: a large annotators' jackknife whose net (after the item noise its
    # deletions carry) is small would give Satterthwaite fewer than 3
    a = _jackknife_variance(wide_parts["annotators"].jackknife)
    ua = _jackknife_variance(wide_parts["user x annotator cells"].jackknife)
    net = sum(s * _jackknife_variance(wide_parts[n].jackknife) for n, s in signs.items())
    noisy, noisy_parts = spread(
        "user x annotator cells", math.sqrt(1 + (net - 0.1 * a) / ua), wide_parts
    )
    v, dof = expected(noisy_parts)
    assert v == pytest.approx(v_rows + 0.1 * a, rel=1e-9) and dof == 3.0
    reading = read_interval(noisy, settings, None, len(df))
    assert reading.df == 3 and reading.variance == pytest.approx(v, rel=1e-12)
    assert "the fewest levels of a random factor, 4 annotators, less one" in reading.interval.text
    # people who barely differ: the net is not positive, a variance component truncated at
    # zero (the rows' variance alone), and the annotators' small jackknife lends the rows'
    # many levels to the interval
    flat, flat_parts = spread("annotators", 0.05, parts)
    assert sum(s * _jackknife_variance(flat_parts[n].jackknife) for n, s in signs.items()) <= 0
    reading = read_interval(flat, settings, None, len(df))
    v, dof = expected(flat_parts)
    assert v == v_rows and reading.variance == pytest.approx(v_rows, rel=1e-12)
    assert reading.df == pytest.approx(dof, rel=1e-12) and dof > 3
    half = stats.t.ppf(0.975, dof) * math.sqrt(v)
    assert reading.interval.high == pytest.approx(value + half, rel=1e-12)
    assert "truncated at zero, here zero" in reading.interval.text


def test_a_group_mean_of_kappas_deletes_one_annotator_at_a_time() -> None:
    rng = np.random.default_rng(4)
    rows = []
    for item in range(160):
        truth = rng.random() < 0.35
        user, prompt = f"u{item // 8:02d}", f"p{item % 11:02d}"
        for r in ("h1", "h2", "h3", "h4", "m1", "m2"):
            # people who differ (how often each copies the truth): a people's part to count
            copy = {"h1": 0.95, "h2": 0.8, "h3": 0.6, "h4": 0.4}.get(r, 0.6)
            label = truth if rng.random() < copy else rng.random() < 0.4
            rows.append((f"i{item:03d}", r, bool(label), user, prompt))
    long = pd.DataFrame(rows, columns=["item", "rater", "label", "users", "prompts"])
    long["cells"] = cell_labels(long["users"].to_numpy(), long["prompts"].to_numpy())
    per_item = long.drop_duplicates("item")
    units = Units(
        len(per_item),
        per_item["users"].to_numpy(dtype=object),
        per_item["prompts"].to_numpy(dtype=object),
        annotators=("h1", "h2", "h3", "h4"),
    )
    groups = {r: ("human" if r[0] == "h" else "model") for r in long["rater"].unique()}
    design = plan(stats_settings(n_boot=100, seed=2), "relevance_people", units)
    boot = pairwise_kappa(design, long, groups=groups, categories=[False, True])
    est = dict(zip(boot.pairs, np.asarray(boot.matrix.estimate), strict=True))
    hh = boot.group_means["human_human"]
    deleted = {p.cluster: p for p in hh.parts}
    # deleting a person drops its three pairs from the mean of the six human pairs
    expected = [
        np.mean([k for (a, b), k in est.items() if "m" not in a + b and person not in (a, b)])
        for person in ("h1", "h2", "h3", "h4")
    ]
    np.testing.assert_allclose(deleted["annotators"].jackknife, expected, atol=1e-12)
    # a pair belongs to both its people: its own deletion enters with the opposite sign
    assert deleted["rater-pairs"].sign == -deleted["annotators"].sign
    assert deleted["rater-pairs"].n_clusters == 6
    # ... and inside the people's net term, not the rows' variance: by hand, the users x
    # prompts variance of the bootstrap parts plus the annotator and rater-pair clusterings'
    # inclusion-exclusion, truncated at zero
    v_rows = sum(
        deleted[n].sign * np.var(deleted[n].replicates, ddof=1)
        for n in ("users", "prompts", "user-prompt cells")
    )
    people = [p for p in hh.parts if p.is_jackknife]
    assert {p.cluster for p in people} >= {"annotators", "rater-pairs", "user x rater-pair cells"}
    net = sum(p.sign * _jackknife_variance(p.jackknife) for p in people)
    reading = read_interval(hh, stats_settings(n_boot=100, seed=2), None, len(per_item))
    assert v_rows > 0
    assert reading.variance == pytest.approx(v_rows + max(net, 0.0), rel=1e-12)
    assert "minus 6 rater-pairs" in reading.interval.text
    # its degrees of freedom: Satterthwaite's over the rows' variance and every one of the
    # people's jackknife variances on its levels less one (the pairs' noise counts too), at
    # least 3, at most the rows' fewest levels less one (11 prompts)
    df_rows = min(deleted["users"].n_clusters, deleted["prompts"].n_clusters) - 1.0
    noise = v_rows**2 / df_rows + sum(
        _jackknife_variance(p.jackknife) ** 2 / (p.n_clusters - 1) for p in people
    )
    assert net > 0
    dof = min(max((v_rows + net) ** 2 / noise, 3.0), df_rows)
    assert reading.df == pytest.approx(dof, rel=1e-12)
    assert f"{dof:.1f}, at least 3" in reading.interval.text

    def shrunk(scale: float) -> tuple[Resamples, float]:
        """Every people clustering's deleted values ``scale`` times as far from their mean,
        and Satterthwaite's degrees of freedom by hand."""
        parts = tuple(
            dataclasses.replace(
                p, jackknife=p.jackknife.mean() + scale * (p.jackknife - p.jackknife.mean())
            )
            if p.is_jackknife
            else p
            for p in hh.parts
        )
        jk = [p for p in parts if p.is_jackknife]
        v = v_rows + max(sum(p.sign * _jackknife_variance(p.jackknife) for p in jk), 0.0)
        noise = v_rows**2 / df_rows + sum(
            _jackknife_variance(p.jackknife) ** 2 / (p.n_clusters - 1) for p in jk
        )
        return Resamples(hh.estimate, parts, hh.design), min(max(v**2 / noise, 3.0), df_rows)

    # people who differ less: their net's noise weighs less, the df move towards the rows'
    small, dof = shrunk(0.4)
    assert 3 < dof < df_rows
    reading = read_interval(small, stats_settings(n_boot=100, seed=2), None, len(per_item))
    assert reading.df == pytest.approx(dof, rel=1e-12)
    # model-model pairs hold no person: their mean has no annotator part
    assert {p.cluster for p in boot.group_means["model_model"].parts} == {
        "users",
        "prompts",
        "user-prompt cells",
    }
