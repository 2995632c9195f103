"""The world's ground truth: deterministic, seed-free, and what a large draw of worlds shows.

The truth integrates every vote and rating out in closed form over the design of its own
large draw; here a separate draw of whole worlds (other seeds, raw votes and ratings, no
integration) must agree with it within Monte Carlo error for a few estimands of each stage.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from analysis import REPO_ROOT
from analysis.simulation import DEFAULT_PARAMETERS, simulate_world
from analysis.simulation.truth import TRUTH_SEEDS, population_truth, truth_json

#: the default world's truth is cached per process: this module runs on the worker that runs
#: test_bundled_world.py, which computes it too
pytestmark = pytest.mark.xdist_group("default_population_truth")

#: seeds of the independent check draw (not the committed world's, not the truth's own)
CHECK_SEEDS = range(100, 112)


@pytest.fixture(scope="module")
def truth() -> dict:
    return {k: t.value for k, t in population_truth(DEFAULT_PARAMETERS).items()}


@pytest.fixture(scope="module")
def worlds() -> list:
    return [
        simulate_world(dataclasses.replace(DEFAULT_PARAMETERS, seed=s)).truth for s in CHECK_SEEDS
    ]


def test_truth_json_is_deterministic_and_committed() -> None:
    text = truth_json(DEFAULT_PARAMETERS)
    assert text == truth_json(DEFAULT_PARAMETERS)
    assert (REPO_ROOT / "data" / "raw" / "bundled" / "truth.json").read_text() == text
    doc = json.loads(text)
    assert list(doc["estimands"]) == sorted(doc["estimands"])
    assert all(e["how"] for e in doc["estimands"].values())


def test_truth_does_not_depend_on_the_seed() -> None:
    other = dataclasses.replace(DEFAULT_PARAMETERS, seed=7)
    assert truth_json(other) == truth_json(DEFAULT_PARAMETERS)
    assert DEFAULT_PARAMETERS.seed not in TRUTH_SEEDS and 7 not in TRUTH_SEEDS


def test_correlations_across_the_fixed_models_are_outside_the_coverage_study() -> None:
    entries = population_truth(DEFAULT_PARAMETERS)
    assert not entries["stage3.mention_habit_vs_bias.spearman"].in_coverage
    assert entries["stage2.final.kappa.human_human"].in_coverage


def _check(estimates: list[float], truth: float, what: str) -> None:
    """The truth lies within 4 Monte Carlo standard errors of the draw's mean."""
    est = np.asarray(estimates)
    se = est.std(ddof=1) / np.sqrt(len(est))
    assert abs(est.mean() - truth) < 4 * se + 1e-3, f"{what}: draw {est.mean()} vs truth {truth}"


def test_stage1_acceptance_matches_a_large_draw(worlds, truth) -> None:
    real = [(w["stage1_labels"][w["stage1_real"]] == 2).mean() for w in worlds]
    synth = [(w["stage1_labels"][~w["stage1_real"]] == 2).mean() for w in worlds]
    _check(real, truth["stage1.acceptance_rate.real"], "acceptance, real-like")
    _check(
        [s - r for s, r in zip(synth, real, strict=True)],
        truth["stage1.problematic_gap_real_vs_synthetic"],
        "problematic gap",
    )


def test_stage2_rates_and_over_selection_match_a_large_draw(worlds, truth) -> None:
    majority = [w["stage2_majority"].mean() for w in worlds]
    _check(majority, truth["stage2.final.relevance_rate.human_majority"], "majority rate")
    for m, name in enumerate(DEFAULT_PARAMETERS.llm_names):
        rates = [w["stage2_llm_votes"][:, m].mean() for w in worlds]
        _check(rates, truth[f"stage2.final.relevance_rate.{name}"], f"{name} rate")
    ratio = [w["stage2_llm_votes"][:, 4].mean() / w["stage2_majority"].mean() for w in worlds]
    _check(ratio, truth["stage2.final.over_selection.sim-llm-e"], "over-selection")


def test_stage3_mention_delta_is_a_difference_of_observed_means(worlds, truth) -> None:
    """The delta's truth includes what goes with mentioning (generator quality), so it differs
    from the latent effect parameter, and the raw ratings of many worlds agree with it."""
    deltas, judge = [], []
    for w in worlds:
        named, ratings = w["stage3_slot_named"], w["stage3_human_ratings"]
        deltas.append(ratings[named].mean() - ratings[~named].mean())
        jr = w["stage3_judge_ratings"][:, 4]
        judge.append(jr[named].mean() - jr[~named].mean())
    _check(deltas, truth["stage3.mention_delta.human"], "human mention delta")
    _check(judge, truth["stage3.mention_delta.sim-llm-e"], "judge e mention delta")
    no_better = []
    for w in worlds:
        items = w["stage3_slot_item"]
        means = np.bincount(items, w["stage3_human_ratings"]) / np.bincount(items)
        no_better.append((means <= 3).mean())
    _check(no_better, truth["stage3.no_better_share"], "no-better share")
    assert truth["stage3.mention_delta.sim-llm-e"] != DEFAULT_PARAMETERS.judge_mention_effect[4]
