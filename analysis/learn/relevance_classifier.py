"""Stage-2 intervention: a relevance classifier trained on the human majority.

The study's stage-2 intervention is a GRPO-trained Qwen3-4B whose F1 against the human
majority beats the best zero-shot LLM and the retrieval baselines (BM25, embeddings); the
published figures are entries of ``config/study/published.yaml``. Here the classifier is a
scikit-learn model on :func:`analysis.learn.features.relevance_features` of (prompt,
attribute) pairs. Test prompts are never seen in training: on a round with the data set's
own split (the real round-2 classifier set, table ``relevance_classifier_set``) that split
is used as given (train fits, val tunes the threshold, test is scored); on any other round,
grouped K-fold by prompt gives every item one held-out prediction, with the threshold tuned
on validation prompts inside each training fold. Every LLM and baseline of the same round is
scored on exactly the held-out items, so the comparison is like for like.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.pipeline import Pipeline

from analysis.learn.features import Embeddings, FeatureError, relevance_features
from analysis.learn.learners import classifier_factory, cross_fit_classifier, fit_on_all_rows
from analysis.learn.splits import Fold, given_split, grouped_folds
from analysis.settings import LearnConfig

log = logging.getLogger(__name__)

ITEM_COLUMNS = ["item_id", "user_id", "prompt_id", "attribute_id"]


def human_majority(votes: pd.DataFrame, round_: str) -> pd.DataFrame:
    """The human-majority label of every item of ``round_``.

    Items with individual human votes: relevant when strictly more than half said yes (the
    study's three annotators never tie). Items with only a published majority
    (``rater_kind == 'human_majority'``, as in the real final round and round 2): that label.
    """
    for col in [*ITEM_COLUMNS, "rater_kind", "round", "vote"]:
        if col not in votes.columns:
            raise FeatureError(f"stage2/relevance_votes.parquet: missing column {col!r}")
    r = votes[(votes["round"] == round_) & votes["vote"].notna()]
    r = r.assign(**{c: r[c].astype(str) for c in ITEM_COLUMNS})
    human = r[r["rater_kind"] == "human"]
    agg = (
        human.assign(yes=human["vote"].astype(bool).astype(int))
        .groupby("item_id", sort=True)
        .agg(
            user_id=("user_id", "first"),
            prompt_id=("prompt_id", "first"),
            attribute_id=("attribute_id", "first"),
            n_humans=("yes", "size"),
            n_yes=("yes", "sum"),
        )
        .reset_index()
    )
    agg["label"] = 2 * agg["n_yes"] > agg["n_humans"]
    published = r[(r["rater_kind"] == "human_majority") & ~r["item_id"].isin(agg["item_id"])]
    pub = (
        published.sort_values("item_id")
        .drop_duplicates("item_id")
        .assign(label=lambda d: d["vote"].astype(bool), n_humans=0, n_yes=np.nan)
    )[["item_id", "user_id", "prompt_id", "attribute_id", "n_humans", "n_yes", "label"]]
    out = pd.concat([agg[pub.columns], pub], ignore_index=True) if len(pub) else agg
    out = out.sort_values("item_id").reset_index(drop=True)
    out["label"] = out["label"].astype(bool)
    return out


def reference_votes(
    votes: pd.DataFrame, baseline_votes: pd.DataFrame | None, round_: str
) -> pd.DataFrame:
    """Every LLM's and baseline's vote per item of ``round_`` (majority if a rater voted twice).

    A baseline's votes on the items its own threshold was tuned on (``split == 'dev'`` in
    ``stage2/baseline_votes.parquet``) are left out: they are in-sample.
    """
    parts = []
    model = votes[(votes["round"] == round_) & (votes["rater_kind"] == "model")]
    parts.append(model[["item_id", "rater", "rater_kind", "vote"]])
    if baseline_votes is not None and len(baseline_votes):
        for col in ("item_id", "rater", "vote"):
            if col not in baseline_votes.columns:
                raise FeatureError(f"stage2/baseline_votes.parquet: missing column {col!r}")
        base = baseline_votes
        if "round" in base.columns:
            base = base[base["round"] == round_]
        if "split" in base.columns:  # a baseline's threshold was tuned on its dev items
            base = base[base["split"] != "dev"]
        kind = base["rater_kind"] if "rater_kind" in base.columns else "baseline"
        parts.append(base.assign(rater_kind=kind)[["item_id", "rater", "rater_kind", "vote"]])
    ref = pd.concat(parts, ignore_index=True)
    ref = ref[ref["vote"].notna()]
    if ref.empty:
        return pd.DataFrame(columns=["item_id", "rater", "rater_kind", "vote"])
    ref = ref.assign(item_id=ref["item_id"].astype(str), yes=ref["vote"].astype(bool).astype(float))
    out = (
        ref.groupby(["rater", "item_id"], sort=True)
        .agg(rater_kind=("rater_kind", "first"), yes=("yes", "mean"))
        .reset_index()
    )
    out["vote"] = out["yes"] > 0.5
    return out.drop(columns="yes")


@dataclass
class RelevanceResult:
    """Held-out predictions of one round, the fitted model and the references' votes."""

    round: str
    mode: str  # "given_split" or "grouped_cv"
    predictions: pd.DataFrame
    references: pd.DataFrame
    model: Pipeline
    threshold: float
    feature_names: list[str]
    threshold_sources: list[str]
    chosen_C: list[float | None]

    @property
    def evaluated(self) -> pd.DataFrame:
        return self.predictions[self.predictions["evaluated"]].reset_index(drop=True)


def _given_fold(labels: pd.DataFrame, classifier_set: pd.DataFrame | None) -> Fold | None:
    """The data set's own split for these items, if it covers all of them."""
    if classifier_set is None or len(classifier_set) == 0:
        return None
    for col in ("item_id", "split"):
        if col not in classifier_set.columns:
            raise FeatureError(f"tables/relevance_classifier_set.parquet: missing column {col!r}")
    split = classifier_set.assign(item_id=classifier_set["item_id"].astype(str))
    split = split.drop_duplicates("item_id").set_index("item_id")["split"]
    covered = labels["item_id"].isin(split.index)
    if not covered.any():
        return None
    if not covered.all():
        missing = labels.loc[~covered, "item_id"].iloc[0]
        raise FeatureError(
            f"tables/relevance_classifier_set.parquet covers only part of the round's items; "
            f"item_id {missing!r} has no split"
        )
    return given_split(split.loc[labels["item_id"]].to_numpy(), labels["prompt_id"].to_numpy())


def train_relevance_classifier(
    votes: pd.DataFrame,
    baseline_votes: pd.DataFrame | None,
    prompts: pd.DataFrame,
    attributes: pd.DataFrame,
    prompt_embeddings: Embeddings,
    attribute_embeddings: Embeddings,
    classifier_set: pd.DataFrame | None,
    round_: str,
    learn: LearnConfig,
    seed: int,
    threads: int = 1,
) -> RelevanceResult | None:
    """Train and evaluate on one round; ``None`` when it lacks enough human-majority labels.

    The folds are fit on up to ``threads`` threads (the same bytes with any number).
    """
    cfg = learn.relevance
    labels = human_majority(votes, round_)
    if len(labels) < learn.min_examples or labels["label"].nunique() < 2:
        log.info(
            "relevance classifier: round %s has %d labelled items; skipped", round_, len(labels)
        )
        return None
    fm = relevance_features(labels, prompts, attributes, prompt_embeddings, attribute_embeddings)
    X, y = fm.X, labels["label"].to_numpy(dtype=bool)
    prompts_of = labels["prompt_id"].to_numpy()
    fold = _given_fold(labels, classifier_set)
    folds = [fold] if fold is not None else None
    mode = "given_split" if folds else "grouped_cv"
    if folds is None:
        if labels["prompt_id"].nunique() < 3:
            log.info("relevance classifier: round %s has < 3 prompts; skipped", round_)
            return None
        folds = list(grouped_folds(prompts_of, learn.n_folds, learn.inner_val_fraction, seed))
    factory, grid = classifier_factory(
        cfg.learner, cfg.C_grid, cfg.class_weight, learn.gradient_boosting, seed
    )
    cv = cross_fit_classifier(factory, grid, X, y, folds, threads)
    final = cv.last_model
    if mode == "grouped_cv":  # the shipped model sees every prompt; its cut is the folds' median
        final = fit_on_all_rows(factory, cv, X, y)
    assert final is not None
    split = np.full(len(y), "cv", dtype=object)
    if mode == "given_split":
        split[folds[0].train], split[folds[0].val], split[folds[0].test] = "train", "val", "test"
    evaluated = cv.fold_of >= 0
    predictions = labels.assign(
        split=split, fold=cv.fold_of, score=cv.score, predicted=cv.predicted, evaluated=evaluated
    )
    refs = reference_votes(votes, baseline_votes, round_)
    refs = refs[refs["item_id"].isin(labels.loc[evaluated, "item_id"])].reset_index(drop=True)
    return RelevanceResult(
        round=round_,
        mode=mode,
        predictions=predictions,
        references=refs,
        model=final,
        threshold=float(np.median(cv.thresholds)),
        feature_names=fm.names,
        threshold_sources=cv.sources,
        chosen_C=cv.params,
    )


def train_relevance_rounds(
    votes: pd.DataFrame,
    baseline_votes: pd.DataFrame | None,
    prompts: pd.DataFrame,
    attributes: pd.DataFrame,
    prompt_embeddings: Embeddings,
    attribute_embeddings: Embeddings,
    classifier_set: pd.DataFrame | None,
    learn: LearnConfig,
    seed: int,
    threads: int = 1,
) -> list[RelevanceResult]:
    """One result per configured round that has the labels (rounds are never pooled)."""
    results = []
    for round_ in learn.relevance.rounds:
        res = train_relevance_classifier(
            votes,
            baseline_votes,
            prompts,
            attributes,
            prompt_embeddings,
            attribute_embeddings,
            classifier_set,
            round_,
            learn,
            seed,
            threads,
        )
        if res is not None:
            results.append(res)
    return results
