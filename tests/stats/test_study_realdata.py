"""The real-data check: stage-2 statistics on the authors' annotation-tool exports.

Skips (with the reason) where ../shared/data/annotation-tool is absent; CI always has it.
The votes are built in memory by ``tests.stats.realdata_frames`` (plain json), and once more
through the workflow's adapter in the slow test, which must give the same records.
"""

from __future__ import annotations

from pathlib import Path

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
