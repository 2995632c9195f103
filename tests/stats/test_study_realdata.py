"""The real-data check: stage-2 statistics on the authors' annotation-tool exports.

Skips (with the reason) where ../shared/data/annotation-tool is absent; CI always has it.
The votes are built in memory by ``tests.stats.realdata_frames`` (plain json), and once more
through the workflow's adapter in the slow test, which must give the same records.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis.stats.study_stage2 import kappa_matrix_table, stage2_statistics
from tests.settings_defaults import stats_settings
from tests.stats.realdata_frames import relevance_votes

pytestmark = pytest.mark.realdata

#: the configured statistics (stats.min_shared_items 20 among them), with fewer resamples
SETTINGS = stats_settings(n_boot=1000, seed=20260601)
FINAL_MODELS = ("gemma-4-31b-it", "gpt-5.4")
PILOT_HUMANS = {"Jiarui", "Lechen", "Lechen2", "Tal", "Xiuzhu"}
PILOT_MODELS = {"claude-sonnet-4-6", "gemma-4-31b-it", "gpt-5.4", "llama-3.3-70b-instruct"}


@pytest.fixture(scope="module")
def real(real_data_root: Path):
    votes = relevance_votes(real_data_root)
    result = stage2_statistics(votes, SETTINGS)
    return {r.key: r for r in result.records}, kappa_matrix_table(result)


def test_final_round_as_the_study_reports_it(real) -> None:
    recs, _ = real
    majority = recs["stage2.final.relevance_rate.human_majority"]
    assert 0.05 < majority.value < 0.5
    assert majority.n == 3969  # the published majority labels (3,973 items, 4 unlabelled)
    for m in FINAL_MODELS:
        rate = recs[f"stage2.final.relevance_rate.{m}"]
        over = recs[f"stage2.final.over_selection.{m}"]
        assert rate.value > majority.value
        assert over.value > 1 and over.ci_low > 1
        assert over.extra["p_adjusted"] < 0.05
        assert 0 < recs[f"stage2.final.kappa_vs_majority.{m}"].value < 1
        assert 0.2 < recs[f"stage2.final.f1_vs_majority.{m}"].value < 0.8
        # high recall, low precision: the study's description of LLM relevance
        assert (
            recs[f"stage2.final.recall_vs_majority.{m}"].value
            > recs[f"stage2.final.precision_vs_majority.{m}"].value
        )
    assert 0.3 < recs["stage2.final.kappa.model_model"].value < 0.9


def test_final_round_has_no_individual_human_keys(real) -> None:
    recs, _ = real
    for key in (
        "stage2.final.kappa.human_human",
        "stage2.final.kappa.human_model",
        "stage2.final.relevance_rate.human",
        "stage2.final.ceiling.kappa_human_vs_rest",
    ):
        assert key not in recs


def test_pilot_matrix_and_group_means(real) -> None:
    recs, table = real
    pilot = table[table["round"] == "pilot"]
    raters = set(pilot["rater_a"])
    assert raters == PILOT_HUMANS | PILOT_MODELS
    assert len(pilot) == len(raters) * (len(raters) - 1)
    hh = recs["stage2.pilot.kappa.human_human"]
    mm = recs["stage2.pilot.kappa.model_model"]
    hm = recs["stage2.pilot.kappa.human_model"]
    assert hh.extra["n_pairs"] == 10 and mm.extra["n_pairs"] == 6 and hm.extra["n_pairs"] == 20
    for rec in (hh, mm, hm):
        assert 0 < rec.value < 1 and rec.ci_low < rec.value < rec.ci_high
    # the study's finding: LLMs agree with each other more than with people
    assert mm.value > hm.value
    assert "stage2.pilot.ceiling.kappa_human_vs_rest" in recs


def test_pilot_models_on_the_ceiling_references(real) -> None:
    """Leave-one-human-out: the ceiling and every pilot model on the same references."""
    recs, _ = real
    ceiling = recs["stage2.pilot.ceiling.kappa_human_vs_rest"]
    assert ceiling.extra["n_raters"] == len(PILOT_HUMANS)
    assert 0 <= ceiling.extra["tied_share"] < 1
    for m in PILOT_MODELS:
        for score in ("kappa", "f1", "gap_kappa", "gap_f1"):
            assert f"stage2.pilot.vs_rest.{score}.{m}" in recs, (score, m)
        gap = recs[f"stage2.pilot.vs_rest.gap_kappa.{m}"]
        assert gap.extra["null"] == 0.0 and gap.ci_low <= gap.value <= gap.ci_high
    for diff in ("model_model_minus_human_model", "human_human_minus_human_model"):
        assert f"stage2.pilot.kappa_diff.{diff}" in recs


@pytest.mark.slow
def test_adapter_tables_give_the_same_numbers(real, real_data_root: Path) -> None:
    """The workflow path (adapter -> canonical votes) agrees with the plain-json frames."""
    adapter = pytest.importorskip("analysis.data.annotation_tool")
    votes = adapter.read_annotation_tool(real_data_root).tables["relevance_votes"]
    votes = votes[votes["round"].isin(["final", "pilot"])]
    recs, _ = real
    again = {r.key: r for r in stage2_statistics(votes, SETTINGS).records}
    assert set(again) == set(recs)
    for key, rec in recs.items():
        assert again[key].value == pytest.approx(rec.value), key
        assert again[key].n == rec.n, key


def test_kappa_max_intervals_stay_within_zero_and_one(real) -> None:
    """The most agreement two rates allow is never below chance's: a group mean of kappa_max
    is clipped to [0, 1] (the graded pilot's five people: a t interval with four degrees of
    freedom reaches below 0 unclipped)."""
    recs, _ = real
    means = {k: r for k, r in recs.items() if ".kappa_max." in k}
    assert means
    for key, rec in means.items():
        assert 0.0 <= rec.ci_low <= rec.value <= rec.ci_high <= 1.0, key
    assert any("clipped to the statistic's range [0, 1]" in r.method for r in means.values())


#: the alpha records the real exports support (issue 35): the people, the models and both in
#: the pilot round, the two released models in the final round
ALPHA_RATERS = {
    "stage2.pilot.alpha.all": PILOT_HUMANS | PILOT_MODELS,
    "stage2.pilot.alpha.human": PILOT_HUMANS,
    "stage2.pilot.alpha.model": PILOT_MODELS,
    "stage2.final.alpha.model": set(FINAL_MODELS),
}


def _kappa_share_of_max(a: pd.Series, b: pd.Series) -> float:
    """Cohen's kappa of two binary raters over the largest kappa their two rates allow."""
    p1, p2 = a.mean(), b.mean()
    chance = p1 * p2 + (1 - p1) * (1 - p2)
    kappa = ((a == b).mean() - chance) / (1 - chance)
    kappa_max = (min(p1, p2) + min(1 - p1, 1 - p2) - chance) / (1 - chance)
    return float(kappa / kappa_max)


def test_alpha_over_people_models_and_both_from_the_votes(real, real_data_root: Path) -> None:
    """Krippendorff's alpha (nominal) of each rater group, recomputed here with the
    ``krippendorff`` package from the votes, with a non-degenerate interval from the people
    design where people vote (the items design for the models alone)."""
    import krippendorff

    recs, _ = real
    votes = relevance_votes(real_data_root)
    for key, raters in ALPHA_RATERS.items():
        rec = recs[key]
        assert set(rec.extra["raters"]) == raters, key
        mine = votes[(votes["round"] == rec.extra["round"]) & votes["rater"].isin(raters)]
        table = mine.assign(vote=mine["vote"].astype(float)).pivot_table(
            index="rater", columns="item_id", values="vote", aggfunc="first"
        )
        want = krippendorff.alpha(reliability_data=table.to_numpy(), level_of_measurement="nominal")
        assert rec.value == pytest.approx(want, abs=1e-9), key
        assert -1 <= rec.ci_low < rec.value < rec.ci_high <= 1, key
        assert rec.ci_high - rec.ci_low > 0.01, key
        people = bool(raters & PILOT_HUMANS)
        design = "relevance_people" if people else "relevance_items"
        assert f"design {design}:" in rec.method, key
        assert ("crossed and annotators (5) random" in rec.method) is people, key
    assert "stage2.final.alpha.human" not in recs and "stage2.final.alpha.all" not in recs


def test_share_of_attainable_kappa_and_its_differences(real, real_data_root: Path) -> None:
    """kappa / kappa_max (the agreement that survives the raters' rates): each group's value is
    the mean of its pairs' shares, the final round's one model pair is recomputed from the
    votes, and each difference is its two groups' values apart, with an interval and a
    Holm-adjusted test from the same resamples."""
    recs, _ = real
    shares = {k: r for k, r in recs.items() if ".kappa_share_of_max." in k}
    groups = ("human_human", "human_model", "model_model")
    assert {f"stage2.pilot.kappa_share_of_max.{g}" for g in groups} <= set(shares)
    assert "stage2.final.kappa_share_of_max.model_model" in shares
    for key, rec in shares.items():
        pairs = rec.extra["pairs"]
        assert len(pairs) == rec.extra["n_pairs"] >= 1, key
        assert rec.value == pytest.approx(sum(pairs.values()) / len(pairs)), key
        assert 0 < rec.value <= 1 and 0 <= rec.ci_low < rec.value < rec.ci_high <= 1, key
        assert "kappa / kappa_max" in rec.method and "design relevance_" in rec.method, key
    final = recs["stage2.final.kappa_share_of_max.model_model"]
    votes = relevance_votes(real_data_root)
    wide = votes[(votes["round"] == "final") & votes["rater"].isin(FINAL_MODELS)].pivot_table(
        index="item_id", columns="rater", values="vote", aggfunc="first"
    )
    wide = wide.dropna().astype(bool)
    want = _kappa_share_of_max(wide[FINAL_MODELS[0]], wide[FINAL_MODELS[1]])
    assert final.value == pytest.approx(want, abs=1e-9)
    kappa, kappa_max = (recs[f"stage2.final.{s}.model_model"].value for s in ("kappa", "kappa_max"))
    assert final.value == pytest.approx(kappa / kappa_max)
    diffs = {k: r for k, r in recs.items() if ".kappa_share_of_max_diff." in k}
    assert {k.rsplit(".", 1)[1] for k in diffs if ".pilot." in k} == {
        "model_model_minus_human_model",
        "human_human_minus_human_model",
        "model_model_minus_human_human",
    }
    for key, rec in diffs.items():
        minuend, subtrahend = (recs[rec.extra[s]] for s in ("minuend", "subtrahend"))
        assert rec.value == pytest.approx(minuend.value - subtrahend.value), key
        assert rec.ci_low < rec.value < rec.ci_high and rec.ci_high - rec.ci_low > 0.01, key
        assert 0 <= rec.extra["p_value"] <= rec.extra["p_adjusted"] <= 1, key
        assert rec.extra["family"] == "kappa_share_differences", key
        assert "both on every resample" in rec.method, key
