"""Stage-3 intervention: reward models that predict how people rate personalization.

An example is one (user, prompt, generator, attribute): a personalized and a generic
response to the prompt, and one attribute of the user that the human majority found
relevant. People rate it 1-5 (5 = personalized much better). The study trained reward
models on these ratings and found only rho ~0.3 with held-out human ratings, no better than
the best LLM judge. Here three variants learn from
:func:`analysis.learn.features.reward_features`, cross-validated grouped by user:

- ``pointwise``: ridge regression (or gradient boosting) of the mean human rating,
- ``pairwise``: a linear ranker fit on pairs of training examples with different ratings,
- ``ordinal``: all-threshold logistic model of the 1-5 order (Frank & Hall).

Every variant's held-out scores, every LLM judge's ratings and (where two or more people
rated an example) each human's rating against the other humans' mean are compared with the
same human targets in :mod:`analysis.learn.records`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analysis.learn.features import Embeddings, FeatureError, reward_features
from analysis.learn.learners import (
    FoldFit,
    OrdinalThresholds,
    PairwiseRanker,
    fit_fold_regressor,
    make_regressor,
    most_common,
)
from analysis.learn.parallel_fits import run_fits
from analysis.learn.splits import Fold, grouped_folds
from analysis.settings import LearnConfig

log = logging.getLogger(__name__)

EXAMPLE_KEY = ["user_id", "prompt_id", "generator", "attribute_id"]
VARIANTS = ("pointwise", "pairwise", "ordinal")


def _check_ratings(ratings: pd.DataFrame) -> None:
    for col in [*EXAMPLE_KEY, "rater", "rater_kind", "round", "rating"]:
        if col not in ratings.columns:
            raise FeatureError(f"stage3/preference_ratings.parquet: missing column {col!r}")
    r = pd.to_numeric(ratings["rating"], errors="coerce")
    bad = ratings.index[r.notna() & ((r < 1) | (r > 5))]
    if len(bad):
        raise FeatureError(
            f"stage3/preference_ratings.parquet: row {int(bad[0])} field rating is "
            f"{ratings.loc[bad[0], 'rating']}, outside 1-5"
        )


def _keyed(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(**{c: frame[c].astype(str) for c in EXAMPLE_KEY})


def _human_ratings(ratings: pd.DataFrame, round_: str | None = None) -> pd.DataFrame:
    """The people's ratings (rows with a rating) of ``round_``, or of every round, keyed, the
    rating as float: what the examples, the ceiling and the embedded responses start from."""
    keep = (ratings["rater_kind"] == "human") & ratings["rating"].notna()
    if round_ is not None:
        keep &= ratings["round"] == round_
    return _keyed(ratings[keep]).assign(rating=lambda d: d["rating"].astype(float))


def human_examples(ratings: pd.DataFrame, round_: str) -> pd.DataFrame:
    """One row per human-rated example of ``round_``: mean rating and number of raters."""
    _check_ratings(ratings)
    return (
        _human_ratings(ratings, round_)
        .groupby(EXAMPLE_KEY, sort=True)
        .agg(human_mean=("rating", "mean"), n_humans=("rating", "size"))
        .reset_index()
    )


def choose_round(ratings: pd.DataFrame, rounds: list[str], min_examples: int) -> str | None:
    """The first configured round with ``min_examples`` human-rated examples of 2+ ratings."""
    for round_ in rounds:
        ex = human_examples(ratings, round_)
        if len(ex) >= min_examples and ex["human_mean"].nunique() >= 2:
            return round_
    return None


def pair_responses(examples: pd.DataFrame, responses: pd.DataFrame) -> pd.DataFrame:
    """Attach the personalized and the generic response id to each example.

    Responses are matched on (user, prompt, generator); a generic response written once per
    (prompt, generator) for all users is matched on those two. Examples without both
    responses are dropped (and counted in the log).
    """
    out = _attach_responses(examples, responses)
    complete = out["personalized_response_id"].notna() & out["generic_response_id"].notna()
    if (~complete).any():
        log.warning("reward models: %d example(s) lack a response pair; dropped", (~complete).sum())
    return out[complete].reset_index(drop=True)


def rated_responses(ratings: pd.DataFrame, responses: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``responses`` a reward model can read: the personalized and the generic
    response paired (as :func:`pair_responses` pairs them) with an example a person rated, in
    any round.

    Why: the reward models are the only reader of the responses' embeddings, and a response is
    the costliest text to embed (MiniLM reads up to 256 of its tokens); the other responses'
    vectors would be computed for nothing, and on a dataset without human stage-3 ratings no
    response is embedded at all.
    """
    _check_ratings(ratings)
    rated = _human_ratings(ratings)[EXAMPLE_KEY].drop_duplicates()
    paired = _attach_responses(rated, responses)
    ids = set(paired["personalized_response_id"].dropna()) | set(
        paired["generic_response_id"].dropna()
    )
    return responses[responses["response_id"].astype(str).isin(ids)]


def _attach_responses(examples: pd.DataFrame, responses: pd.DataFrame) -> pd.DataFrame:
    """``examples`` with ``personalized_response_id`` and ``generic_response_id`` (missing
    where the responses have none), for :func:`pair_responses`."""
    for col in ("response_id", "user_id", "prompt_id", "generator", "condition"):
        if col not in responses.columns:
            raise FeatureError(f"stage3/responses.parquet: missing column {col!r}")
    resp = responses.assign(
        **{
            c: responses[c].astype(str)
            for c in ("response_id", "user_id", "prompt_id", "generator")
        }
    ).sort_values("response_id")
    key = ["user_id", "prompt_id", "generator"]
    pers = (
        resp[resp["condition"] == "personalized"]
        .drop_duplicates(key)[[*key, "response_id"]]
        .rename(columns={"response_id": "personalized_response_id"})
    )
    gen = resp[resp["condition"] == "generic"]
    gen_user = gen.drop_duplicates(key)[[*key, "response_id"]].rename(
        columns={"response_id": "generic_response_id"}
    )
    gen_any = gen.drop_duplicates(["prompt_id", "generator"])[
        ["prompt_id", "generator", "response_id"]
    ].rename(columns={"response_id": "generic_any"})
    out = examples.merge(pers, on=key, how="left").merge(gen_user, on=key, how="left")
    out = out.merge(gen_any, on=["prompt_id", "generator"], how="left")
    out["generic_response_id"] = out["generic_response_id"].fillna(out["generic_any"])
    return out.drop(columns="generic_any")


def judge_ratings(ratings: pd.DataFrame, examples: pd.DataFrame, round_: str) -> pd.DataFrame:
    """Each LLM judge's mean rating per example (the judge's rows of ``round_`` if it has any)."""
    m = _keyed(ratings[(ratings["rater_kind"] == "model") & ratings["rating"].notna()])
    if m.empty:
        return pd.DataFrame(columns=[*EXAMPLE_KEY, "rater", "rating"])
    in_round = m["round"] == round_
    has_round = m.groupby("rater")["round"].transform(lambda r: (r == round_).any())
    m = m[in_round | ~has_round]
    out = (
        m.assign(rating=m["rating"].astype(float))
        .groupby(["rater", *EXAMPLE_KEY], sort=True)["rating"]
        .mean()
        .reset_index()
    )
    return out.merge(examples[EXAMPLE_KEY], on=EXAMPLE_KEY, how="inner")


def human_ceiling_pairs(ratings: pd.DataFrame, round_: str) -> pd.DataFrame:
    """Leave-one-human-out rows: each human's rating beside the mean of the other humans.

    Only examples rated by two or more people contribute; the correlation of the two columns
    is what one person achieves against the others, the ceiling a model can be read against.
    """
    h = _human_ratings(ratings, round_)
    h = h.groupby([*EXAMPLE_KEY, "rater"], sort=True)["rating"].mean().reset_index()
    g = h.groupby(EXAMPLE_KEY)["rating"]
    total, count = g.transform("sum"), g.transform("size")
    h = h.assign(others_mean=(total - h["rating"]) / (count - 1), n_humans=count)
    return h[h["n_humans"] >= 2].reset_index(drop=True)


@dataclass
class RewardResult:
    """Held-out scores per variant, judges' ratings and the ceiling pairs of one round."""

    round: str
    predictions: pd.DataFrame  # examples with score_<variant> and fold
    judges: pd.DataFrame
    ceiling: pd.DataFrame
    models: dict[str, object]
    feature_names: list[str]
    variants: list[str]
    chosen_params: dict[str, list[float | None]]


def _variant_factory(
    variant: str, learn: LearnConfig, seed: int
) -> tuple[Callable[[float | None], Any], list[float] | None]:
    """``factory(param)`` of one variant and its grid (strongest regularization first)."""
    cfg = learn.reward
    if variant == "pointwise":
        grid = sorted(cfg.ridge_alpha_grid, reverse=True) if cfg.learner == "logistic" else None
        return (
            lambda a: make_regressor(
                cfg.learner, 1.0 if a is None else a, learn.gradient_boosting, seed
            ),
            grid or None,
        )
    if variant == "pairwise":
        return (
            lambda c: PairwiseRanker(
                C=1.0 if c is None else c, pairs_per_example=cfg.pairs_per_example, seed=seed
            ),
            sorted(cfg.C_grid) or None,
        )
    if variant == "ordinal":
        return lambda c: OrdinalThresholds(C=1.0 if c is None else c, seed=seed), sorted(
            cfg.C_grid
        ) or None
    raise ValueError(f"learn.reward.variants: unknown variant {variant!r}; use {VARIANTS}")


def train_reward_models(
    ratings: pd.DataFrame,
    responses: pd.DataFrame,
    attributes: pd.DataFrame,
    response_embeddings: Embeddings,
    attribute_embeddings: Embeddings,
    prompt_embeddings: Embeddings | None,
    learn: LearnConfig,
    seed: int,
    threads: int = 1,
) -> RewardResult | None:
    """Cross-validate every configured variant grouped by user; ``None`` without human ratings.

    The folds' and the variants' fits run on up to ``threads`` threads (:func:`run_fits`: the
    same bytes with any number).
    """
    cfg = learn.reward
    for v in cfg.variants:
        if v not in VARIANTS:
            raise ValueError(f"learn.reward.variants: unknown variant {v!r}; use {VARIANTS}")
    _check_ratings(ratings)
    round_ = choose_round(ratings, list(cfg.rounds), learn.min_examples)
    if round_ is None:
        log.info("reward models: no round of %s has human ratings; skipped", cfg.rounds)
        return None
    examples = pair_responses(human_examples(ratings, round_), responses)
    if len(examples) < learn.min_examples or examples["user_id"].nunique() < 2:
        log.info("reward models: %d examples with responses; skipped", len(examples))
        return None
    fm = reward_features(
        examples,
        responses,
        attributes,
        response_embeddings,
        attribute_embeddings,
        prompt_embeddings,
        cfg.mention_threshold,
    )
    X = fm.X
    y = examples["human_mean"].to_numpy(dtype=np.float64)
    groups = examples["user_id"].to_numpy()
    scores = {v: np.full(len(y), np.nan) for v in cfg.variants}
    chosen: dict[str, list[float | None]] = {v: [] for v in cfg.variants}
    fold_of = np.full(len(y), -1)
    folds = list(grouped_folds(groups, learn.n_folds, learn.inner_val_fraction, seed))

    def fold_fit(fold: Fold, v: str) -> tuple[FoldFit, np.ndarray]:
        """The fold's fit and its test rows' scores, both under run_fits' one-thread BLAS."""
        factory, grid = _variant_factory(v, learn, seed)
        target = np.round if v == "ordinal" else (lambda t: t)
        fit = fit_fold_regressor(factory, grid, X, y, fold.train, fold.val, target)
        return fit, fit.model.predict(X[fold.test])

    tasks = [(fold, v) for fold in folds for v in cfg.variants]
    fits = run_fits([lambda f=f, v=v: fold_fit(f, v) for f, v in tasks], threads)
    for (fold, v), (fit, test_scores) in zip(tasks, fits, strict=True):
        scores[v][fold.test] = test_scores
        chosen[v].append(fit.param)
        fold_of[fold.test] = fold.index

    def full_fit(v: str) -> Any:
        factory, _ = _variant_factory(v, learn, seed)
        return factory(most_common(chosen[v])).fit(X, np.round(y) if v == "ordinal" else y)

    full = run_fits([lambda v=v: full_fit(v) for v in cfg.variants], threads)
    models = dict(zip(cfg.variants, full, strict=True))
    predictions = examples.assign(fold=fold_of, **{f"score_{v}": s for v, s in scores.items()})
    return RewardResult(
        round=round_,
        predictions=predictions,
        judges=judge_ratings(ratings, examples, round_),
        ceiling=human_ceiling_pairs(ratings, round_),
        models=models,
        feature_names=fm.names,
        variants=list(cfg.variants),
        chosen_params=chosen,
    )
