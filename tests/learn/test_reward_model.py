"""Reward models find a planted signal, not an absent one; ceilings and judges line up."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.learn.features import Embeddings
from analysis.learn.records import reward_records
from analysis.learn.reward_model import (
    RewardResult,
    human_ceiling_pairs,
    pair_responses,
    rated_responses,
    train_reward_models,
)
from analysis.settings import LearnConfig
from analysis.stats.settings import StatsSettings
from tests.learn.synthetic import stage3_world


def run(
    world: dict[str, pd.DataFrame], learn: LearnConfig, threads: int = 1
) -> RewardResult | None:
    return train_reward_models(
        world["ratings"],
        world["responses"],
        world["attributes"],
        Embeddings.from_frame(world["response_embeddings"], "responses"),
        Embeddings.from_frame(world["attribute_embeddings"], "attributes"),
        Embeddings.from_frame(world["prompt_embeddings"], "prompts"),
        learn,
        5,
        threads,
    )


def records(result: RewardResult, stats: StatsSettings) -> dict[str, float]:
    recs = reward_records(result, stats, "logistic", ["user", "item"], 8, 20)
    return {r.key: r.value for r in recs}


def test_planted_signal_is_found_by_every_variant(learn: LearnConfig, stats: StatsSettings) -> None:
    result = run(stage3_world(n_users=20, signal=True), learn)
    assert result is not None
    v = records(result, stats)
    for variant in ("pointwise", "pairwise", "ordinal"):
        assert v[f"stage3.reward_model.{variant}.spearman"] > 0.6
        assert v[f"stage3.reward_model.{variant}.kendall"] > 0.45
    assert "stage3.reward_model.judge.sim-judge-a.spearman" in v
    assert not any(k.startswith("stage3.reward_model.human_ceiling") for k in v)  # one human each
    assert (result.predictions.groupby("user_id")["fold"].nunique() == 1).all()


def test_no_signal_is_not_found(learn: LearnConfig, stats: StatsSettings) -> None:
    result = run(stage3_world(n_users=30, signal=False, seed=4), learn)
    assert result is not None
    v = records(result, stats)
    for variant in ("pointwise", "pairwise", "ordinal"):
        assert abs(v[f"stage3.reward_model.{variant}.spearman"]) < 0.12


def test_human_ceiling_leave_one_out() -> None:
    key = {"prompt_id": "p", "generator": "g", "round": "final", "rater_kind": "human"}
    ratings = pd.DataFrame(
        [
            {**key, "user_id": "u", "attribute_id": "a", "rater": "h1", "rating": 5},
            {**key, "user_id": "u", "attribute_id": "a", "rater": "h2", "rating": 3},
            {**key, "user_id": "u", "attribute_id": "a", "rater": "h3", "rating": 1},
            {**key, "user_id": "u", "attribute_id": "b", "rater": "h1", "rating": 4},
        ]
    )
    pairs = human_ceiling_pairs(ratings, "final").set_index("rater")
    assert pairs["others_mean"].to_dict() == {"h1": 2.0, "h2": 3.0, "h3": 4.0}  # b: one human only


def test_ceiling_with_several_humans(learn: LearnConfig, stats: StatsSettings) -> None:
    result = run(stage3_world(n_users=12, humans_per_example=3), learn)
    assert result is not None
    v = records(result, stats)
    assert v["stage3.reward_model.human_ceiling.spearman"] > 0.5


def test_generic_response_shared_across_users_is_matched() -> None:
    examples = pd.DataFrame(
        {
            "user_id": ["u1", "u2"],
            "prompt_id": ["p", "p"],
            "generator": ["g", "g"],
            "attribute_id": ["a", "b"],
        }
    )
    responses = pd.DataFrame(
        {
            "response_id": ["r1", "r2", "rg"],
            "user_id": ["u1", "u2", "any"],
            "prompt_id": ["p", "p", "p"],
            "generator": ["g", "g", "g"],
            "condition": ["personalized", "personalized", "generic"],
        }
    )
    out = pair_responses(examples, responses)
    assert out["generic_response_id"].tolist() == ["rg", "rg"]
    assert out["personalized_response_id"].tolist() == ["r1", "r2"]


def test_the_responses_embedded_are_exactly_those_the_reward_models_read(
    learn: LearnConfig,
) -> None:
    """Rule text_embeddings embeds only ``rated_responses``: the models trained on those
    responses' vectors alone give the same bytes as with every response's; the responses of
    an example only a model rated, and the other conditions, are left out."""
    world = stage3_world(n_users=8)
    model_only = (
        world["responses"]
        .iloc[:2]
        .assign(response_id=["rm-gen", "rm-pers"], prompt_id="p-model-only")
    )
    profile = world["responses"].iloc[:1].assign(response_id="r-profile", condition="full_profile")
    world["responses"] = pd.concat([world["responses"], model_only, profile], ignore_index=True)
    judged = world["ratings"].iloc[:1].assign(prompt_id="p-model-only", rater_kind="model")
    world["ratings"] = pd.concat([world["ratings"], judged], ignore_index=True)

    kept = rated_responses(world["ratings"], world["responses"])
    left_out = set(world["responses"]["response_id"]) - set(kept["response_id"])
    assert left_out == {"rm-gen", "rm-pers", "r-profile"}
    everything = run(world, learn)
    only_kept = run(
        {
            **world,
            "response_embeddings": world["response_embeddings"][
                world["response_embeddings"]["id"].isin(kept["response_id"])
            ],
        },
        learn,
    )
    assert everything is not None and only_kept is not None
    pd.testing.assert_frame_equal(everything.predictions, only_kept.predictions, check_exact=True)

    humans = world["ratings"]["rater_kind"] == "human"
    assert rated_responses(world["ratings"][~humans], world["responses"]).empty


def test_without_human_ratings_no_result(learn: LearnConfig) -> None:
    world = stage3_world(n_users=6)
    world["ratings"] = world["ratings"][world["ratings"]["rater_kind"] == "model"]
    assert run(world, learn) is None


def test_rating_out_of_range_is_an_error(learn: LearnConfig) -> None:
    world = stage3_world(n_users=6)
    world["ratings"].loc[3, "rating"] = 7
    with pytest.raises(ValueError, match="row 3 field rating is 7"):
        run(world, learn)


def test_deterministic_with_any_number_of_threads(learn: LearnConfig, stats: StatsSettings) -> None:
    world = stage3_world(n_users=10)
    learn.reward.C_grid = [0.01, 0.1]  # a warm-started grid inside each parallel fit
    a, b = run(world, learn), run(world, learn, threads=2)
    assert a is not None and b is not None
    pd.testing.assert_frame_equal(a.predictions, b.predictions, check_exact=True)
    assert a.chosen_params == b.chosen_params
    assert records(a, stats) == records(b, stats)
