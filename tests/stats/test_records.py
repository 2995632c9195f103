"""The one record maker: settings, the interval rule (exact shares, not estimable, BCa
fallback), tests on the interval's own resamples, the resampling floor, declared families."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy import stats
from scipy.special import ndtri
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from analysis.settings import ConfigError
from analysis.stats.intervals import Interval, clopper_pearson
from analysis.stats.records import (
    MIN_UNITS,
    NOT_ESTIMABLE,
    SHARE,
    NullTest,
    Statistic,
    adjusted_p_values,
    exact_share,
    key_part,
    make_records,
)
from analysis.stats.resampling import Resamples, Units, design_info, plan, totals
from analysis.stats.settings import StatsSettings
from tests.settings_defaults import compose_config_plain, stats_settings


def rate(values: np.ndarray, settings: StatsSettings, users: np.ndarray | None = None) -> Resamples:
    """The rate of 0/1 ``values`` under the one-factor design ``attribute_labels``."""
    n = len(values)
    labels = users if users is not None else np.arange(n).astype(str).astype(object)
    design = plan(settings, "attribute_labels", Units(n=n, users=labels))
    tb = totals(design, {"y": np.asarray(values, dtype=float), "n": np.ones(n)}, n)
    return tb.stat(lambda g: g("y") / g("n"))


def one(statistic: Statistic, settings: StatsSettings):
    (record,) = make_records([statistic], settings)
    return record


def test_settings_from_rule_params() -> None:
    defaults = compose_config_plain()["stats"]
    s = StatsSettings.from_rule_params(
        {"stats": {**defaults, "n_boot": 50, "ci_level": 0.9}, "run.seed": 3, "learn": {}}
    )
    assert (s.n_boot, s.ci_level, s.seed, s.caveats) == (50, 0.9, 3, ())
    assert s.design_spec("relevance_items").random == ["users", "prompts"]
    for bad in ({"n_boot": 0}, {"ci_method": "basic"}, {"multiple_comparisons": "bonf"}):
        with pytest.raises(ConfigError):
            StatsSettings.from_rule_params({"stats": {**defaults, **bad}, "run.seed": 3})
    with pytest.raises(ValueError, match="run.seed"):
        StatsSettings.from_rule_params({"stats": defaults})
    with pytest.raises(ConfigError, match="lacks the key"):
        StatsSettings.from_rule_params({"stats": {"ci_level": 0.9}, "run.seed": 3})
    with pytest.raises(ValueError, match="no design 'nope'"):
        s.design_spec("nope")
    broken = {**defaults["designs"]["relevance_items"], "fixed": {"users": "no"}}
    with pytest.raises(ConfigError, match="random or fixed, not both"):
        StatsSettings.from_rule_params(
            {"stats": {**defaults, "designs": {"x": broken}}, "run.seed": 1}
        )


def test_clopper_pearson_is_statsmodels_and_the_beta_quantiles() -> None:
    for k, n in ((0, 24), (17, 20), (20, 20), (3, 41)):
        ours = clopper_pearson(k, n, 0.95)
        assert ours == pytest.approx(proportion_confint(k, n, alpha=0.05, method="beta"))
        ref = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
        assert ours == pytest.approx((ref.low, ref.high))
    # an effective count and size of a clustered design (Korn-Graubard): the beta quantiles
    low, high = clopper_pearson(6.5, 13.2, 0.9)
    assert low == pytest.approx(stats.beta.ppf(0.05, 6.5, 13.2 - 6.5 + 1))
    assert high == pytest.approx(stats.beta.ppf(0.95, 6.5 + 1, 13.2 - 6.5))
    with pytest.raises(ValueError, match="successes"):
        clopper_pearson(3, 2)


def test_shares_at_a_boundary_or_on_few_units_are_exact() -> None:
    settings = stats_settings(n_boot=400, seed=1)
    # a share of 1 on 40 users: every resample is 1, the exact interval is on the 40 users
    ones = rate(np.ones(80), settings, np.repeat(np.arange(40), 2).astype(str).astype(object))
    r = one(Statistic("k.all", ones, ".1%", "all kept", "m:f", n=80, units=40), settings)
    assert (r.ci_low, r.ci_high) == pytest.approx(clopper_pearson(40, 40, 0.95))
    assert r.ci_low < 1 and r.extra["exact"] is True and "Clopper-Pearson (exact)" in r.method
    # a share on 20 independent units: exact, on an effective size close to 20
    x = np.r_[np.ones(17), np.zeros(3)]
    few = one(Statistic("k.few", rate(x, settings), ".1%", "w", "m:f", n=20, units=20), settings)
    assert few.ci_low == pytest.approx(clopper_pearson(17, 20)[0], abs=0.03)
    assert f"fewer than {MIN_UNITS} units" in few.method
    # the same share on 60 units reads the design's interval
    many = rate(np.tile(x, 3), settings)
    r = one(Statistic("k.many", many, ".1%", "w", "m:f", n=60, units=60), settings)
    assert "exact" not in r.extra and "percentile" in r.method
    # the detector's shares: independent cases, exact on them
    iv = exact_share(17, 20, 0.95)
    assert (iv.low, iv.high) == pytest.approx(proportion_confint(17, 20, method="beta"))


def test_a_statistic_that_does_not_move_is_not_estimable() -> None:
    """A constant rater's kappa is 0 on every resample: no interval of width zero is printed,
    the record says it is not estimable (its value stays for claims and diffs)."""
    settings = stats_settings(n_boot=200, seed=2)
    res = rate(np.ones(50), settings)
    zero = Resamples(
        np.asarray(0.0), tuple(replace(p, replicates=np.zeros(200)) for p in res.parts), res.design
    )
    r = one(
        Statistic("k.kappa", zero, ".2f", "kappa of a rater who always says yes", "m:f", 50),
        settings,
    )
    assert r.value == 0.0 and r.ci_low is None and r.ci_high is None
    assert r.text == NOT_ESTIMABLE and r.display() == NOT_ESTIMABLE
    assert "same value on every resample" in r.method


def test_a_value_fixed_by_construction_has_no_interval_and_no_test() -> None:
    """A rule's recall that is 1 on any items: the value, no interval, the reason, no design;
    asking to test it is an error naming the record."""
    settings = stats_settings(n_boot=200, seed=2)
    res = rate(np.ones(50), settings)
    fixed = Statistic(
        "k.recall", res, ".3f", "recall of a rule", "m:f", 50, units=50, by_construction="why"
    )
    r = one(fixed, settings)
    assert (r.value, r.ci_low, r.ci_high, r.text) == (1.0, None, None, None)
    assert r.display() == "1.000" and r.extra == {"by_construction": True}
    # it keeps no resamples, so ``recenter diff`` never reads a paired interval off them
    assert r.resamples is None
    assert (
        r.method
        == "recall of a rule; not estimated: why, so it has no sampling error and no interval"
    )
    with pytest.raises(ValueError, match="k.recall: a value fixed by construction"):
        make_records([replace(fixed, test=NullTest(0.5, "over_selection"))], settings)


def test_undefined_value_is_an_absent_key_and_extras_are_plain() -> None:
    settings = stats_settings(n_boot=100, seed=1)
    res = rate(np.r_[np.ones(30), np.zeros(30)], settings)
    nan = Resamples(np.asarray(np.nan), res.parts, res.design)
    assert make_records([Statistic("k.x", nan, ".2f", "w", "m:f", 1)], settings) == []
    r = one(
        Statistic("k.y", res, ".2f", "w", "m:f", 60, extra={"p": np.float64(0.2), "b": np.nan}),
        settings,
    )
    assert r.extra["p"] == 0.2 and r.extra["b"] is None and r.ci_level == 0.95
    assert r.method.startswith("w; design attribute_labels: users (60) random; fixed: ")
    assert r.seed == 1 and r.extra["design"] == "attribute_labels"
    assert key_part("synthetic:cupid") == "synthetic:cupid"
    assert key_part(" two words ") == "two_words"


def test_bca_reads_the_jackknife_and_falls_back_to_percentile() -> None:
    settings = stats_settings(n_boot=500, seed=1, ci_method="bca")
    x = np.random.default_rng(2).normal(size=60) > 0
    res = rate(x, settings)
    r = one(Statistic("k.bca", res, ".2f", "w", "m:f", 60), settings)
    assert r.ci_low < x.mean() < r.ci_high and ", BCa" in r.method
    # every resample above the estimate: z0 is infinite, BCa undefined -> percentile, said so
    shifted = Resamples(
        np.asarray(0.0),
        tuple(replace(p, replicates=np.linspace(1.0, 2.0, 500)) for p in res.parts),
        res.design,
    )
    r = one(Statistic("k.shift", shifted, ".2f", "w", "m:f", 60), settings)
    assert r.ci_low == pytest.approx(1.025) and "BCa undefined" in r.method


def test_p_value_at_the_resampling_floor_is_an_upper_bound_and_so_is_its_adjustment() -> None:
    settings = stats_settings(n_boot=400, seed=3)
    far = rate(np.r_[np.ones(57), np.zeros(3)], settings)  # every resample far above 0.5
    near = rate(np.r_[np.ones(32), np.zeros(28)], settings)
    records = make_records(
        [
            Statistic("k.far", far, ".2f", "w", "m:f", 60, test=NullTest(0.5, "over_selection")),
            Statistic("k.near", near, ".2f", "w", "m:f", 60, test=NullTest(0.5, "over_selection")),
        ],
        settings,
    )
    by = {r.key: r for r in records}
    far_r, near_r = by["k.far"], by["k.near"]
    assert far_r.extra["p_value"] == pytest.approx(1 / 400)
    assert far_r.extra["p_value_is_upper_bound"] is True
    assert far_r.extra["p_adjusted"] == pytest.approx(2 / 400)  # Holm over m = 2: "< 2/B"
    assert far_r.extra["p_adjusted_is_upper_bound"] is True
    assert "p_value_is_upper_bound" not in near_r.extra
    assert near_r.extra["family_members"] == ["k.far", "k.near"]
    assert "Holm-adjusted within family over_selection" in near_r.method
    with pytest.raises(ValueError, match="no test family 'nope'"):
        make_records(
            [Statistic("k.x", near, ".2f", "w", "m:f", 60, test=NullTest(0.5, "nope"))], settings
        )


@pytest.mark.parametrize("method", ["holm", "fdr_bh"])
def test_adjusted_p_values_are_statsmodels(method: str) -> None:
    p = np.random.default_rng(0).random(12) ** 3
    p[3] = p[7]  # ties
    expected = multipletests(p, method=method)[1]
    np.testing.assert_allclose(adjusted_p_values(p, method), expected, atol=1e-15)


def test_an_analytic_interval_keeps_its_own_test_and_states_its_design() -> None:
    settings = stats_settings()
    iv = Interval(0.9, -0.17, 0.99, 0.95, "Fisher z", "95% CI: Fisher z", 5, p_value=0.083)
    r = one(
        Statistic(
            "k.rho",
            iv,
            ".2f",
            "rho across 5 models",
            "m:f",
            5,
            extra={"test": "exact permutation"},
            test=NullTest(0.0, "mention_habit_vs_bias"),
            design=design_info(settings, "across_models", {"models": 5}),
        ),
        settings,
    )
    assert r.extra["p_value"] == 0.083 and "p_adjusted" not in r.extra
    assert "design across_models: models (5) random" in r.method and r.seed is None


def _share_near_one():
    """Settings and the resamples of a share near 1 under users x prompts crossed."""
    rng = np.random.default_rng(4)
    users = np.repeat(np.arange(40), 6).astype(str).astype(object)
    prompts = rng.integers(0, 6, users.size).astype(str).astype(object)
    y = (rng.random(users.size) < np.where(prompts == "0", 0.75, 1.0)).astype(float)
    settings = stats_settings(n_boot=300, seed=4)
    design = plan(settings, "relevance_items", Units(n=y.size, users=users, prompts=prompts))
    tb = totals(design, {"y": y, "n": np.ones(y.size)}, y.size)
    return settings, tb.stat(lambda g: g("y") / g("n")), y.size


def test_a_t_interval_is_clipped_to_the_values_the_statistic_can_take() -> None:
    """A statistic bounded at 1 whose t interval reaches past 1 ends at 1, and says so."""
    settings, share, n = _share_near_one()
    r = one(Statistic("k.s", share, ".1%", "w", "m:f", n=n, limits=SHARE), settings)
    assert (
        r.value < 1 and r.ci_high == 1.0 and "clipped to the statistic's range [0, 1]" in r.method
    )
    unbounded = one(Statistic("k.u", share, ".1%", "w", "m:f", n=n), settings)
    assert unbounded.ci_high > 1 and "clipped" not in unbounded.method


def test_a_share_under_a_crossed_design_gets_korn_graubard() -> None:
    """A share under users x prompts is Clopper-Pearson on its effective units scaled for the
    design's degrees of freedom (Korn and Graubard 1998): inside (0, 1), longer on the side
    away from the boundary, and statsmodels' beta interval where the units are whole."""
    settings, share, n = _share_near_one()
    r = one(Statistic("k.s", share, ".1%", "w", "m:f", n=n, units=40), settings)
    t = one(Statistic("k.t", share, ".1%", "w", "m:f", n=n), settings)
    df = float(t.method.split("t interval (")[1].split(" degrees")[0])
    variance = ((t.ci_high - t.value) / stats.t.ppf(0.975, df)) ** 2
    units = r.value * (1 - r.value) / variance * (ndtri(0.975) / stats.t.ppf(0.975, df)) ** 2
    assert (r.ci_low, r.ci_high) == pytest.approx(clopper_pearson(r.value * units, units))
    assert r.ci_low < r.value < r.ci_high < 1 and r.value - r.ci_low > r.ci_high - r.value
    assert "Korn-Graubard" in r.method and f"{df:.1f} degrees of freedom" in r.method
    whole = clopper_pearson(7, 40)
    assert whole == pytest.approx(proportion_confint(7, 40, alpha=0.05, method="beta"))
