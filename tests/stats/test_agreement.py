"""The agreement library against published worked examples, hand calculations and edge cases."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from analysis.stats.agreement import (
    AgreementError,
    RatingsInputError,
    UndefinedAgreementWarning,
    additive_form,
    cohen_kappa,
    fleiss_kappa,
    group_mean_kappa,
    gwet_ac1,
    krippendorff_alpha,
    pairwise_cohen_kappa,
    percent_agreement,
    scott_pi,
)
from tests.stats.published_examples import (
    ABSTRACTORS_CATEGORIES,
    ABSTRACTORS_TABLE,
    ABSTRACTORS_VALUES,
    FLEISS_1971,
    FLEISS_1971_FIRST15,
    FLEISS_1971_KAPPA,
    GRANT_KAPPA,
    GRANT_TABLE,
    GWET_2014_RAW4RATERS,
    KRIPPENDORFF_2011_A,
    KRIPPENDORFF_2011_A_ALPHA,
    KRIPPENDORFF_2011_C,
    KRIPPENDORFF_2011_C_ALPHA,
    long_from_columns,
    long_from_rows,
    long_from_table,
)

# ---------------------------------------------------------------- published examples


def test_fleiss_1971_kappa_is_0430():
    assert round(fleiss_kappa(long_from_rows(FLEISS_1971)), 3) == FLEISS_1971_KAPPA


def test_fleiss_1971_transcription_matches_statsmodels_copy():
    """Guard against a typo in our fixture: statsmodels ships the same table."""
    try:
        sm_tests = importlib.import_module("statsmodels.stats.tests.test_inter_rater")
    except ImportError:
        pytest.skip("statsmodels' test files are not installed")
    np.testing.assert_array_equal(FLEISS_1971, sm_tests.diagnoses)


def test_fleiss_1971_first_15_patients_match_gwet_handbook():
    df = long_from_rows(FLEISS_1971[:15])
    categories = [1, 2, 3, 4, 5]  # irrCAC's distrib.6raters keeps all five columns
    assert fleiss_kappa(df) == pytest.approx(FLEISS_1971_FIRST15["fleiss_kappa"], abs=5e-7)
    assert gwet_ac1(df, categories=categories) == pytest.approx(
        FLEISS_1971_FIRST15["gwet_ac1"], abs=5e-7
    )
    assert percent_agreement(df) == pytest.approx(FLEISS_1971_FIRST15["pa"], abs=5e-7)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_2011_example_c(level):
    df = long_from_columns(KRIPPENDORFF_2011_C)
    assert round(krippendorff_alpha(df, level), 3) == KRIPPENDORFF_2011_C_ALPHA[level]


def test_krippendorff_2011_example_a_binary():
    df = long_from_columns(KRIPPENDORFF_2011_A)
    assert round(krippendorff_alpha(df), 3) == KRIPPENDORFF_2011_A_ALPHA


def test_gwet_handbook_raw4raters_all_coefficients():
    """Missing ratings and a varying number of raters per unit (2, 3 or 4; one unit has 1)."""
    df = long_from_columns(KRIPPENDORFF_2011_C)
    assert percent_agreement(df) == pytest.approx(GWET_2014_RAW4RATERS["pa"], abs=5e-8)
    assert gwet_ac1(df) == pytest.approx(GWET_2014_RAW4RATERS["gwet_ac1"], abs=5e-6)
    assert fleiss_kappa(df) == pytest.approx(GWET_2014_RAW4RATERS["fleiss_kappa"], abs=5e-6)
    assert krippendorff_alpha(df) == pytest.approx(
        GWET_2014_RAW4RATERS["krippendorff_alpha"], abs=5e-6
    )


def test_gwet_handbook_two_abstractors():
    df = long_from_table(ABSTRACTORS_TABLE, ABSTRACTORS_CATEGORIES)
    v = ABSTRACTORS_VALUES
    assert cohen_kappa(df, "A", "B") == pytest.approx(v["cohen_kappa"], abs=5e-8)
    assert scott_pi(df, "A", "B") == pytest.approx(v["scott_pi"], abs=5e-8)
    assert gwet_ac1(df) == pytest.approx(v["gwet_ac1"], abs=5e-8)
    assert krippendorff_alpha(df) == pytest.approx(v["krippendorff_alpha"], abs=5e-8)
    assert percent_agreement(df, "A", "B") == pytest.approx(v["pa"])
    assert percent_agreement(df) == pytest.approx(v["pa"])


def test_textbook_two_by_two_cohen_kappa():
    df = long_from_table(GRANT_TABLE, ("yes", "no"))
    assert cohen_kappa(df, "A", "B") == pytest.approx(GRANT_KAPPA, abs=1e-12)
    assert cohen_kappa(df, "B", "A") == pytest.approx(GRANT_KAPPA, abs=1e-12)
    # Scott's pi by hand: pooled yes share (25 + 30) / 100 = .55, p_e = .55^2 + .45^2 = .505
    assert scott_pi(df, "A", "B") == pytest.approx((0.7 - 0.505) / (1 - 0.505), abs=1e-12)


# ---------------------------------------------------------------- hand-derived cases


def test_fleiss_varying_raters_by_hand():
    """Three items with 3, 2 and 4 raters.

    item 1: a a b -> 2 agreeing pairs of 6; item 2: a a -> 1; item 3: b b b a -> 6 of 12.
    p_a = (1/3 + 1 + 1/2) / 3 = 11/18; pi_a = (2/3 + 1 + 1/4) / 3 = 23/36, pi_b = 13/36;
    p_e = (23^2 + 13^2) / 36^2 = 698/1296; kappa = (792 - 698) / (1296 - 698) = 94/598.
    """
    df = pd.DataFrame(
        [
            (1, "r1", "a"),
            (1, "r2", "a"),
            (1, "r3", "b"),
            (2, "r1", "a"),
            (2, "r4", "a"),
            (3, "r2", "b"),
            (3, "r3", "b"),
            (3, "r4", "b"),
            (3, "r5", "a"),
        ],
        columns=["item", "rater", "label"],
    )
    assert fleiss_kappa(df) == pytest.approx(94 / 598, abs=1e-12)
    assert percent_agreement(df) == pytest.approx(11 / 18, abs=1e-12)
    # AC1 on the same data: p_e = 2 * (23/36) * (13/36) / (2 - 1)
    pe = 2 * 23 * 13 / 36**2
    assert gwet_ac1(df) == pytest.approx((11 / 18 - pe) / (1 - pe), abs=1e-12)


def test_fleiss_equals_the_fixed_n_formula_when_raters_are_equal():
    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    rng = np.random.default_rng(3)
    ratings = rng.integers(0, 4, size=(40, 5))
    ours = fleiss_kappa(long_from_rows(ratings))
    assert ours == pytest.approx(sm_fleiss(aggregate_raters(ratings)[0]), abs=1e-12)


def _random_ratings(seed: int, n_items=60, n_raters=4, n_cat=5, p_missing=0.2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, n_cat, n_items)
    rows = []
    for r in range(n_raters):
        noisy = np.clip(truth + rng.integers(-1, 2, n_items), 0, n_cat - 1)
        for i in np.flatnonzero(rng.random(n_items) > p_missing):
            rows.append((f"item{i:03d}", f"rater{r}", int(noisy[i]) + 1))
    return pd.DataFrame(rows, columns=["item", "rater", "label"])


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_matches_sklearn_on_shared_items(weights):
    df = _random_ratings(7)
    wide = df.pivot(index="item", columns="rater", values="label")
    shared = wide[["rater0", "rater2"]].dropna()
    expected = cohen_kappa_score(shared["rater0"], shared["rater2"], weights=weights)
    assert cohen_kappa(df, "rater0", "rater2", weights) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_alpha_additive_form_equals_krippendorff_package(level):
    df = _random_ratings(11, n_raters=5)
    form = additive_form(df, "krippendorff_alpha", level=level)
    assert form.finish(form.contributions.sum(axis=0)) == pytest.approx(
        krippendorff_alpha(df, level), abs=1e-12
    )


def test_weighted_kappa_uses_category_positions_and_categories_fix_the_scale():
    df = long_from_columns({"A": [1, 3, 5, 5, 1], "B": [1, 5, 5, 3, 3]})
    # labels {1, 3, 5}: positions 0, 1, 2, the same as sklearn's union of labels
    assert cohen_kappa(df, "A", "B", "linear") == pytest.approx(
        cohen_kappa_score([1, 3, 5, 5, 1], [1, 5, 5, 3, 3], weights="linear"), abs=1e-12
    )
    # on the full 1..5 scale the gaps double uniformly: linear kappa is unchanged
    assert cohen_kappa(df, "A", "B", "linear", categories=[1, 2, 3, 4, 5]) == pytest.approx(
        cohen_kappa(df, "A", "B", "linear"), abs=1e-12
    )


# ---------------------------------------------------------------- pairwise matrix and groups


def test_pairwise_matrix_cells_are_pair_kappas_on_shared_items():
    df = _random_ratings(5, n_raters=4, n_cat=2, p_missing=0.3)
    matrix = pairwise_cohen_kappa(df)
    assert list(matrix.index) == list(matrix.columns) == ["rater0", "rater1", "rater2", "rater3"]
    np.testing.assert_allclose(matrix.to_numpy(), matrix.to_numpy().T, equal_nan=True)
    assert np.isnan(np.diag(matrix.to_numpy())).all()
    for a in matrix.index:
        for b in matrix.columns:
            if a != b:
                assert matrix.loc[a, b] == pytest.approx(cohen_kappa(df, a, b), abs=1e-12)
    assert (np.diag(pairwise_cohen_kappa(df, diagonal=1.0).to_numpy()) == 1.0).all()


def test_group_means_within_and_across_groups():
    matrix = pd.DataFrame(
        [
            [np.nan, 0.4, 0.3, 0.2, 0.1],
            [0.4, np.nan, 0.5, 0.3, 0.2],
            [0.3, 0.5, np.nan, 0.6, 0.7],
            [0.2, 0.3, 0.6, np.nan, 0.8],
            [0.1, 0.2, 0.7, 0.8, np.nan],
        ],
        index=["h1", "h2", "m1", "m2", "m3"],
        columns=["h1", "h2", "m1", "m2", "m3"],
    )
    groups = {"h1": "human", "h2": "human", "m1": "model", "m2": "model", "m3": "model"}
    means = group_mean_kappa(matrix, groups)
    assert list(means) == ["human_human", "human_model", "model_model"]
    assert means["human_human"] == pytest.approx(0.4)
    assert means["human_model"] == pytest.approx((0.3 + 0.2 + 0.1 + 0.5 + 0.3 + 0.2) / 6)
    assert means["model_model"] == pytest.approx((0.6 + 0.7 + 0.8) / 3)


def test_group_means_from_long_data_equal_those_from_the_matrix():
    df = _random_ratings(8, n_raters=5, n_cat=2)
    groups = {"rater0": "human", "rater1": "human", "rater2": "model"}
    groups |= {"rater3": "model", "rater4": "model", "someone_else": "human"}
    assert group_mean_kappa(df, groups) == pytest.approx(
        group_mean_kappa(pairwise_cohen_kappa(df), groups)
    )


def test_group_with_one_rater_has_no_within_key_and_unassigned_raters_fail():
    df = _random_ratings(9, n_raters=3, n_cat=2)
    means = group_mean_kappa(df, {"rater0": "human", "rater1": "model", "rater2": "model"})
    assert set(means) == {"human_model", "model_model"}
    with pytest.raises(AgreementError, match="rater2"):
        group_mean_kappa(df, {"rater0": "human", "rater1": "model"})


# ---------------------------------------------------------------- edge cases


def _one_category() -> pd.DataFrame:
    return long_from_columns({"A": ["no"] * 5, "B": ["no"] * 5, "C": ["no"] * 5})


@pytest.mark.parametrize(
    "call",
    [
        lambda df: cohen_kappa(df, "A", "B"),
        lambda df: scott_pi(df, "A", "B"),
        fleiss_kappa,
        krippendorff_alpha,
        gwet_ac1,
    ],
    ids=["cohen", "scott", "fleiss", "alpha", "ac1"],
)
def test_one_category_only_is_nan_with_a_warning(call):
    with pytest.warns(UndefinedAgreementWarning, match="undefined"):
        assert np.isnan(call(_one_category()))


def test_one_category_is_nan_in_the_matrix_and_left_out_of_group_means():
    df = pd.concat(
        [
            _one_category(),
            long_from_columns({"D": ["yes", "no", "yes", "no", "no"]}),
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matrix functions do not warn per cell
        matrix = pairwise_cohen_kappa(df)
        means = group_mean_kappa(df, {"A": "human", "B": "human", "C": "model", "D": "model"})
    assert np.isnan(matrix.loc["A", "B"])
    # A and B (the only humans) always say "no": their kappa is undefined, so is the mean
    assert np.isnan(means["human_human"])
    # against D (who varies) a constant rater has a defined kappa of exactly 0 (p_o = p_e);
    # the undefined A-C and B-C cells are left out of the human-model mean
    assert matrix.loc["A", "D"] == 0.0
    assert means["human_model"] == 0.0
    assert means["model_model"] == 0.0
    assert percent_agreement(df, "A", "B") == 1.0  # raw agreement is defined and is 1


@pytest.mark.parametrize(
    "call",
    [percent_agreement, fleiss_kappa, gwet_ac1, krippendorff_alpha, pairwise_cohen_kappa],
)
def test_a_single_rater_is_an_error(call):
    df = long_from_columns({"A": ["yes", "no", "yes"]})
    with pytest.raises(AgreementError, match="two raters|one"):
        call(df)


def test_items_rated_once_each_is_an_error():
    df = long_from_columns({"A": ["yes", "no", None, None], "B": [None, None, "yes", "no"]})
    with pytest.raises(AgreementError, match="no item has ratings from two raters"):
        fleiss_kappa(df)
    with pytest.raises(AgreementError, match="no item has ratings from two raters"):
        krippendorff_alpha(df)


def test_no_shared_items_is_an_error_for_a_pair_and_nan_in_the_matrix():
    df = long_from_columns(
        {
            "A": ["yes", "no", None, None],
            "B": [None, None, "yes", "no"],
            "C": ["yes"] * 2 + ["no"] * 2,
        }
    )
    with pytest.raises(AgreementError, match="share no rated item"):
        cohen_kappa(df, "A", "B")
    with pytest.raises(AgreementError, match="share no rated item"):
        scott_pi(df, "A", "B")
    assert np.isnan(pairwise_cohen_kappa(df).loc["A", "B"])


def test_unknown_rater_and_self_pair_are_errors():
    df = long_from_table(GRANT_TABLE, ("yes", "no"))
    with pytest.raises(AgreementError, match="'Z' has no ratings"):
        cohen_kappa(df, "A", "Z")
    with pytest.raises(AgreementError, match="itself"):
        cohen_kappa(df, "A", "A")


def test_malformed_input_names_row_and_field():
    good = long_from_table(GRANT_TABLE, ("yes", "no"))
    with pytest.raises(RatingsInputError, match="lack column"):
        fleiss_kappa(good.rename(columns={"label": "vote"}))
    bad = good.copy()
    bad.loc[7, "label"] = None
    with pytest.raises(RatingsInputError, match="row 7: field 'label' is missing"):
        fleiss_kappa(bad)
    dup = pd.concat([good, good.iloc[[3]]], ignore_index=True)
    with pytest.raises(RatingsInputError, match=r"rows \[3, 100\].*more than once"):
        fleiss_kappa(dup)
    with pytest.raises(RatingsInputError, match="not one of the categories"):
        fleiss_kappa(good, categories=["yes"])
    with pytest.raises(AgreementError, match="empty"):
        fleiss_kappa(good.iloc[:0])


def test_boolean_votes_work_as_labels():
    df = long_from_table(GRANT_TABLE, (True, False))
    assert cohen_kappa(df, "A", "B") == pytest.approx(GRANT_KAPPA)
