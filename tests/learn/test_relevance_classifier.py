"""The stage-2 classifier finds a planted signal, never sees a test prompt, keeps a given split."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score

from analysis.learn.features import Embeddings
from analysis.learn.records import relevance_records
from analysis.learn.relevance_classifier import (
    RelevanceResult,
    human_majority,
    train_relevance_classifier,
)
from analysis.settings import LearnConfig
from analysis.stats.settings import StatsSettings
from tests.learn.synthetic import stage2_world
from tests.settings_defaults import stats_settings


def run(
    world: dict[str, pd.DataFrame],
    learn: LearnConfig,
    round_: str = "final",
    classifier_set: pd.DataFrame | None = None,
    threads: int = 1,
) -> RelevanceResult | None:
    return train_relevance_classifier(
        world["votes"],
        world["baseline_votes"],
        world["prompts"],
        world["attributes"],
        Embeddings.from_frame(world["prompt_embeddings"], "prompts"),
        Embeddings.from_frame(world["attribute_embeddings"], "attributes"),
        classifier_set,
        round_,
        learn,
        11,
        threads,
    )


def values(results: list[RelevanceResult], stats: StatsSettings) -> dict[str, float]:
    recs = relevance_records(results, stats, "logistic", ["prompt", "user", "item"], 8, 20)
    return {r.key: r.value for r in recs}


def test_human_majority_prefers_individual_votes() -> None:
    base = {"user_id": "u", "prompt_id": "p", "attribute_id": "a", "round": "final"}
    votes = pd.DataFrame(
        [
            {**base, "item_id": "i1", "rater": "h1", "rater_kind": "human", "vote": True},
            {**base, "item_id": "i1", "rater": "h2", "rater_kind": "human", "vote": True},
            {**base, "item_id": "i1", "rater": "h3", "rater_kind": "human", "vote": False},
            {**base, "item_id": "i2", "rater": "h1", "rater_kind": "human", "vote": True},
            {**base, "item_id": "i2", "rater": "h2", "rater_kind": "human", "vote": False},
            {**base, "item_id": "i3", "rater": "m", "rater_kind": "human_majority", "vote": True},
            {**base, "item_id": "i4", "rater": "x", "rater_kind": "model", "vote": True},
        ]
    )
    maj = human_majority(votes, "final").set_index("item_id")["label"]
    assert maj.to_dict() == {"i1": True, "i2": False, "i3": True}  # a tie is not a majority


def test_planted_signal_is_found_and_prompts_stay_unseen(
    learn: LearnConfig, stats: StatsSettings
) -> None:
    result = run(stage2_world(signal=True), learn)
    assert result is not None and result.mode == "grouped_cv"
    v = values([result], stats)
    assert v["stage2.classifier.final.auroc"] > 0.8
    assert v["stage2.classifier.final.f1"] > 0.5
    # the always-yes rater scores below the classifier on the same held-out items
    assert v["stage2.classifier.final.reference.sim-llm-a.f1"] < v["stage2.classifier.final.f1"]
    assert (result.predictions.groupby("prompt_id")["fold"].nunique() == 1).all()


def test_no_signal_is_not_found(learn: LearnConfig, stats: StatsSettings) -> None:
    result = run(stage2_world(signal=False, seed=2), learn)
    assert result is not None
    assert abs(values([result], stats)["stage2.classifier.final.auroc"] - 0.5) < 0.06


def test_baseline_dev_items_are_not_references(learn: LearnConfig) -> None:
    world = stage2_world(n_prompts=12)
    result = run(world, learn)
    assert result is not None
    dev_items = set(world["baseline_votes"].query("split == 'dev'")["item_id"])
    bm25 = result.references[result.references["rater"] == "bm25"]
    assert len(bm25) > 0 and not set(bm25["item_id"]) & dev_items


def test_given_split_is_used_as_given(learn: LearnConfig, stats: StatsSettings) -> None:
    world = stage2_world(n_prompts=12, round_="pilot2", published_majority=True)
    items = world["items"]
    prompt_no = items["prompt_id"].str[1:].astype(int)
    split = np.select([prompt_no < 7, prompt_no < 9], ["train", "val"], "test")
    cset = items.assign(split=split)
    result = run(world, learn, round_="pilot2", classifier_set=cset)
    assert result is not None and result.mode == "given_split"
    ev = result.evaluated
    assert set(ev["item_id"]) == set(cset.loc[cset["split"] == "test", "item_id"])
    v = values([result], stats)
    assert v["stage2.classifier.pilot2.f1"] > 0.5
    # only 3 test prompts: the declared design jackknifes them (fewer than ten levels);
    # the one-way unit falls back to users (fewer than min_clusters prompts)
    recs = relevance_records([result], stats, "logistic", ["prompt", "user", "item"], 8, 20)
    assert all("prompts (3) crossed" in r.method for r in recs if r.text is None)
    one_way = relevance_records(
        [result],
        stats_settings(n_boot=200, design="one_way"),
        "logistic",
        ["prompt", "user"],
        8,
        20,
    )
    assert all(") resampled alone" in r.method and "users (" in r.method for r in one_way)


def test_absent_round_gives_no_result(learn: LearnConfig) -> None:
    assert run(stage2_world(n_prompts=6), learn, round_="pilot") is None


def test_deterministic_with_any_number_of_threads(learn: LearnConfig, stats: StatsSettings) -> None:
    world = stage2_world(n_prompts=10)
    learn.relevance.C_grid = [0.03, 0.3]  # a warm-started grid inside each parallel fit
    a, b = run(world, learn), run(world, learn, threads=2)
    assert a is not None and b is not None
    assert values([a], stats) == values([b], stats)
    pd.testing.assert_frame_equal(a.predictions, b.predictions, check_exact=True)


def test_f1_difference_to_each_zero_shot_model_is_paired(
    learn: LearnConfig, stats: StatsSettings
) -> None:
    """Classifier F1 minus a model's F1 on the same held-out items; none for a baseline."""
    result = run(stage2_world(signal=True), learn)
    assert result is not None
    recs = {
        r.key: r
        for r in relevance_records([result], stats, "logistic", ["prompt", "user", "item"], 8, 20)
    }
    ref = result.references[result.references["rater"] == "sim-llm-a"]
    shared = result.evaluated.merge(ref[["item_id", "vote"]], on="item_id")
    y = shared["label"].to_numpy(bool)
    expected = f1_score(y, shared["predicted"].to_numpy(bool)) - f1_score(
        y, shared["vote"].to_numpy(bool)
    )
    gap = recs["stage2.classifier.final.f1_minus_zero_shot.sim-llm-a"]
    assert gap.value == pytest.approx(expected)
    assert gap.ci_low is not None and gap.ci_low <= gap.value <= gap.ci_high
    # the same resamples as the model's own F1 on these items: the same design and units
    own = recs["stage2.classifier.final.reference.sim-llm-a.f1"]
    assert gap.method.split("; ")[1] == own.method.split("; ")[1] and gap.n == own.n
    assert gap.extra["family"] == "classifier_minus_zero_shot"
    assert not any(k.startswith("stage2.classifier.final.f1_minus_zero_shot.bm25") for k in recs)


def test_the_all_positive_reference_s_recall_is_one_by_construction(
    learn: LearnConfig, stats: StatsSettings
) -> None:
    """On the classifier's items too the all-positive rule's recall is not estimated (no
    interval); its precision is the majority's rate on those items, an estimate."""
    world = stage2_world(signal=True)
    bm25 = world["baseline_votes"]
    world["baseline_votes"] = pd.concat(
        [bm25, bm25.assign(rater="all-positive", vote=True)], ignore_index=True
    )
    result = run(world, learn)
    assert result is not None
    recs = {
        r.key: r
        for r in relevance_records([result], stats, "logistic", ["prompt", "user", "item"], 8, 20)
    }
    recall = recs["stage2.classifier.final.reference.all-positive.recall"]
    assert recall.value == 1.0 and recall.ci_low is None and recall.extra["by_construction"]
    assert "not estimated: the rule marks every item relevant" in recall.method
    precision = recs["stage2.classifier.final.reference.all-positive.precision"]
    assert precision.ci_low is not None and "by_construction" not in precision.extra
    assert recs["stage2.classifier.final.reference.bm25.recall"].ci_low is not None
