"""The stage-1 verifier finds a planted signal, finds none where there is none."""

from __future__ import annotations

import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score, roc_auc_score

from analysis.learn.features import Embeddings
from analysis.learn.records import verifier_records
from analysis.learn.verifier import VerifierResult, human_acceptance, train_verifier
from analysis.settings import LearnConfig
from analysis.stats.settings import StatsSettings
from tests.learn.synthetic import stage1_world


def run(
    world: dict[str, pd.DataFrame], learn: LearnConfig, seed: int = 7, threads: int = 1
) -> VerifierResult | None:
    return train_verifier(
        world["attributes"],
        world["judgments"],
        world["conversations"],
        Embeddings.from_frame(world["attribute_embeddings"], "attributes"),
        Embeddings.from_frame(world["reason_embeddings"], "reasons"),
        learn,
        seed,
        threads,
    )


def records(
    result: VerifierResult,
    world: dict[str, pd.DataFrame],
    stats: StatsSettings,
    units: list[str] | None = None,
) -> list:
    return verifier_records(
        result, world["judgments"], world["users"], stats, "logistic", units or ["user"], 8
    )


def values(
    result: VerifierResult, world: dict[str, pd.DataFrame], stats: StatsSettings
) -> dict[str, float]:
    return {r.key: r.value for r in records(result, world, stats, ["user", "item"])}


def test_human_acceptance_is_a_strict_majority() -> None:
    j = pd.DataFrame(
        {
            "attribute_id": ["a", "a", "a", "b", "b"],
            "user_id": ["u"] * 5,
            "rater_kind": ["human"] * 5,
            "round": ["final"] * 5,
            "label": ["accepted", "uncertain", "accepted", "accepted", "rejected"],
        }
    )
    acc = human_acceptance(j, "final").set_index("attribute_id")
    assert bool(acc.loc["a", "accepted"]) and not bool(
        acc.loc["b", "accepted"]
    )  # 1 of 2 is no majority
    assert acc.loc["a", "n_accepted"] == 2 and acc.loc["b", "n_judgments"] == 2


def acceptance_all(world: dict[str, pd.DataFrame], result: VerifierResult) -> float:
    """People's acceptance of every evaluated attribute (stage 1's record on the bundled world)."""
    j = world["judgments"]
    j = j[(j["rater_kind"] == "human") & (j["round"] == result.round)]
    j = j[j["attribute_id"].isin(result.predictions["attribute_id"])]
    return float((j["label"] == "accepted").mean())


def test_planted_signal_is_found(learn: LearnConfig, stats: StatsSettings) -> None:
    world = stage1_world(signal=True)
    result = run(world, learn)
    assert result is not None
    v = values(result, world, stats)
    assert v["stage1.verifier.auroc"] > 0.85
    assert v["stage1.verifier.f1"] > 0.75
    # verify: the kept attributes are accepted far more often than all of them
    assert v["stage1.verifier.acceptance_kept"] > acceptance_all(world, result) + 0.2
    # the zero-shot labeller in the world ignores support: it barely lifts acceptance
    assert (
        v["stage1.verifier.zero_shot_acceptance_kept.sim-llm-a"]
        < v["stage1.verifier.acceptance_kept"]
    )


def test_no_signal_is_not_found(learn: LearnConfig, stats: StatsSettings) -> None:
    world = stage1_world(signal=False, seed=1)
    result = run(world, learn)
    assert result is not None
    recs = {r.key: r for r in records(result, world, stats)}
    assert abs(recs["stage1.verifier.auroc"].value - 0.5) < 0.08
    kept = recs["stage1.verifier.acceptance_kept"]
    assert kept.ci_low is not None and kept.ci_high is not None
    # keeping does not raise acceptance
    assert kept.ci_low <= acceptance_all(world, result) <= kept.ci_high


def test_folds_are_grouped_by_user(learn: LearnConfig) -> None:
    result = run(stage1_world(n_users=20), learn)
    assert result is not None
    folds_per_user = result.predictions.groupby("user_id")["fold"].nunique()
    assert (folds_per_user == 1).all()  # each user's attributes are held out together
    assert (result.predictions["fold"] >= 0).all()


def test_deterministic_with_any_number_of_threads(learn: LearnConfig, stats: StatsSettings) -> None:
    world = stage1_world(n_users=20)
    a, b = run(world, learn), run(world, learn, threads=2)
    assert a is not None and b is not None
    pd.testing.assert_frame_equal(a.predictions, b.predictions, check_exact=True)
    assert records(a, world, stats) == records(b, world, stats)


def test_no_human_labels_no_result(learn: LearnConfig) -> None:
    world = stage1_world(n_users=10)
    world["judgments"] = world["judgments"][world["judgments"]["rater_kind"] == "model"]
    assert run(world, learn) is None


def test_rounds_are_never_pooled(learn: LearnConfig) -> None:
    world = stage1_world(n_users=20)
    j = world["judgments"]
    world["judgments"] = j.assign(round="pilot")  # no final round: falls back to the pilot
    result = run(world, learn)
    assert result is not None and result.round == "pilot"
    learn.verifier.rounds = ["final"]
    assert run(world, learn) is None


def test_gradient_boosting_learner_also_finds_the_signal(
    learn: LearnConfig, stats: StatsSettings
) -> None:
    learn.verifier.learner = "gradient_boosting"
    learn.verifier.use_embeddings = False  # text signals only: boosting stays fast
    learn.gradient_boosting.max_iter = 25
    world = stage1_world(n_users=20)
    result = run(world, learn)
    assert result is not None
    assert values(result, world, stats)["stage1.verifier.auroc"] > 0.8


def test_unknown_label_is_an_error(learn: LearnConfig) -> None:
    world = stage1_world(n_users=10)
    world["judgments"].loc[0, "label"] = "maybe"
    with pytest.raises(ValueError, match="unknown label 'maybe'"):
        run(world, learn)


def test_trained_and_zero_shot_verifiers_on_the_same_attributes(
    learn: LearnConfig, stats: StatsSettings
) -> None:
    """AUROC and kappa of both on the zero-shot model's attributes; the paired differences."""
    world = stage1_world(signal=True)
    result = run(world, learn)
    assert result is not None
    recs = {r.key: r for r in records(result, world, stats, ["user", "item"])}
    z = result.zero_shot[result.zero_shot["rater"] == "sim-llm-a"].merge(
        result.predictions, on="attribute_id"
    )
    y = ~z["accepted"].to_numpy(bool)
    trained_auroc = roc_auc_score(y, z["p_unsupported"])
    zero_auroc = roc_auc_score(y, z["zs_unsupported"])
    trained_kappa = cohen_kappa_score(z["flagged"].to_numpy(bool), y)
    zero_kappa = cohen_kappa_score(~z["keeps"].to_numpy(bool), y)
    prefix = "stage1.verifier"
    assert recs[f"{prefix}.zero_shot_auroc.sim-llm-a"].value == pytest.approx(zero_auroc)
    assert recs[f"{prefix}.zero_shot_kappa.sim-llm-a"].value == pytest.approx(zero_kappa)
    auroc_gap = recs[f"{prefix}.minus_zero_shot.sim-llm-a.auroc"]
    kappa_gap = recs[f"{prefix}.minus_zero_shot.sim-llm-a.kappa"]
    assert auroc_gap.value == pytest.approx(trained_auroc - zero_auroc)
    assert kappa_gap.value == pytest.approx(trained_kappa - zero_kappa)
    # the world's zero-shot labeller ignores support: the trained verifier clearly beats it
    assert auroc_gap.ci_low > 0 and kappa_gap.ci_low > 0
    assert "paired" in auroc_gap.method
    whole = cohen_kappa_score(
        result.predictions["flagged"].to_numpy(bool), ~result.predictions["accepted"].to_numpy(bool)
    )
    assert recs[f"{prefix}.kappa"].value == pytest.approx(whole)
