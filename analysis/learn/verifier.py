"""Stage-1 intervention: a trained verifier that flags attributes people would not accept.

The study trains a small verifier (RoBERTa) on human stage-1 judgments and uses it in a
verify-and-refine loop that lifts human acceptance from 58% to over 90%. Here the verifier
is a scikit-learn classifier on :func:`analysis.learn.features.verifier_features`, trained
to predict that an attribute is *unsupported* (the human majority did not accept it),
cross-validated grouped by user. Its effect is measured the way the study measures it:
the human acceptance rate of the attributes the verifier keeps, against all attributes and
against the attributes each zero-shot LLM verifier of stage 1 keeps, and head to head with
each zero-shot verifier on the attributes both judged (AUROC and kappa with the human
majority, paired differences). Only the "verify" half is reproduced: refining a flagged
attribute needs a generator, and its human acceptance a new annotation round, so the paper
speaks of a verification step, not of verify-and-refine.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.pipeline import Pipeline

from analysis.learn.features import Embeddings, FeatureError, verifier_features
from analysis.learn.learners import classifier_factory, cross_fit_classifier, fit_on_all_rows
from analysis.learn.splits import grouped_folds
from analysis.settings import LearnConfig

log = logging.getLogger(__name__)

ACCEPTED = "accepted"
LABELS = frozenset({"accepted", "uncertain", "rejected"})


def human_acceptance(judgments: pd.DataFrame, round_: str) -> pd.DataFrame:
    """Per attribute of ``round_``: human judgments, accepted ones, and the majority label.

    An attribute is *accepted* when strictly more than half of its human judgments are
    ``accepted`` (``uncertain`` counts as not accepted, as in the study's acceptance rate).
    """
    for col in ("attribute_id", "user_id", "rater_kind", "round", "label"):
        if col not in judgments.columns:
            raise FeatureError(f"stage1/attribute_judgments.parquet: missing column {col!r}")
    human = judgments[(judgments["rater_kind"] == "human") & (judgments["round"] == round_)]
    bad = sorted(set(human["label"].dropna()) - LABELS)
    if bad:
        raise FeatureError(
            f"stage1/attribute_judgments.parquet: unknown label {bad[0]!r} (field label)"
        )
    grouped = (
        human.assign(is_accepted=(human["label"] == ACCEPTED).astype(int))
        .groupby("attribute_id", sort=True)
        .agg(
            user_id=("user_id", "first"),
            n_judgments=("label", "size"),
            n_accepted=("is_accepted", "sum"),
        )
        .reset_index()
    )
    grouped["attribute_id"] = grouped["attribute_id"].astype(str)
    grouped["user_id"] = grouped["user_id"].astype(str)
    grouped["accepted"] = 2 * grouped["n_accepted"] > grouped["n_judgments"]
    return grouped


def choose_round(judgments: pd.DataFrame, rounds: list[str], min_examples: int) -> str | None:
    """The first configured round with ``min_examples`` human-judged attributes of both kinds."""
    for round_ in rounds:
        acc = human_acceptance(judgments, round_)
        if len(acc) >= min_examples and acc["accepted"].nunique() == 2:
            return round_
    return None


def zero_shot_labels(judgments: pd.DataFrame, attribute_ids: pd.Index) -> pd.DataFrame:
    """Each LLM verifier's keep decision per attribute (majority of its labels = accepted).

    ``zs_unsupported`` is the share of its labels that do not accept the attribute: the
    model's score for an AUROC beside the trained verifier's probability (a binary verifier's
    AUROC is then its balanced accuracy).
    """
    model = judgments[
        (judgments["rater_kind"] == "model")
        & judgments["attribute_id"].astype(str).isin(attribute_ids)
        & judgments["label"].notna()
    ]
    if model.empty:
        return pd.DataFrame(columns=["attribute_id", "rater", "keeps", "zs_unsupported"])
    share = (
        model.assign(
            attribute_id=model["attribute_id"].astype(str),
            acc=(model["label"] == ACCEPTED).astype(float),
        )
        .groupby(["rater", "attribute_id"], sort=True)["acc"]
        .mean()
    )
    return pd.DataFrame(
        {"keeps": share.gt(0.5), "zs_unsupported": 1.0 - share}, index=share.index
    ).reset_index()


@dataclass
class VerifierResult:
    """Out-of-fold predictions, the model fit on all rows, and the zero-shot comparison."""

    round: str
    predictions: pd.DataFrame
    zero_shot: pd.DataFrame
    model: Pipeline
    threshold: float
    feature_names: list[str]
    threshold_sources: list[str] = field(default_factory=list)
    chosen_C: list[float | None] = field(default_factory=list)

    @property
    def n_attributes(self) -> int:
        return len(self.predictions)


def train_verifier(
    attributes: pd.DataFrame,
    judgments: pd.DataFrame,
    conversations: pd.DataFrame | None,
    attribute_embeddings: Embeddings | None,
    reason_embeddings: Embeddings | None,
    learn: LearnConfig,
    seed: int,
    threads: int = 1,
) -> VerifierResult | None:
    """Cross-validate the verifier grouped by user; ``None`` when no round has enough labels.

    The folds are fit on up to ``threads`` threads (the same bytes with any number).
    """
    cfg = learn.verifier
    round_ = choose_round(judgments, list(cfg.rounds), learn.min_examples)
    if round_ is None:
        log.info("verifier: no round of %s has enough human judgments; skipped", cfg.rounds)
        return None
    acc = human_acceptance(judgments, round_)
    attrs = attributes.assign(attribute_id=attributes["attribute_id"].astype(str))
    attrs = attrs.drop_duplicates("attribute_id").set_index("attribute_id", drop=False)
    missing = sorted(set(acc["attribute_id"]) - set(attrs.index))
    if missing:
        raise FeatureError(
            f"tables/attributes.parquet lacks {len(missing)} judged attribute_id(s), "
            f"e.g. {missing[0]!r}"
        )
    rows = attrs.loc[acc["attribute_id"]].reset_index(drop=True)
    rows["user_id"] = acc["user_id"].to_numpy()
    use_emb = cfg.use_embeddings and attribute_embeddings is not None
    fm = verifier_features(
        rows,
        conversations,
        attribute_embeddings if use_emb else None,
        reason_embeddings if use_emb else None,
    )
    X = fm.X
    y = ~acc["accepted"].to_numpy(dtype=bool)  # positive class: unsupported
    groups = acc["user_id"].to_numpy()
    factory, grid = classifier_factory(
        cfg.learner, cfg.C_grid, cfg.class_weight, learn.gradient_boosting, seed
    )
    folds = grouped_folds(groups, learn.n_folds, learn.inner_val_fraction, seed)
    cv = cross_fit_classifier(factory, grid, X, y, folds, threads)
    final = fit_on_all_rows(factory, cv, X, y)
    predictions = acc.assign(
        fold=cv.fold_of, p_unsupported=cv.score, flagged=cv.predicted, kept=~cv.predicted
    ).reset_index(drop=True)
    return VerifierResult(
        round=round_,
        predictions=predictions,
        zero_shot=zero_shot_labels(judgments, pd.Index(acc["attribute_id"])),
        model=final,
        threshold=float(np.median(cv.thresholds)),
        feature_names=fm.names,
        threshold_sources=cv.sources,
        chosen_C=cv.params,
    )
