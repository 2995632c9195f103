"""Records of the trained interventions: every metric with its CI, n, method and seed.

Keys (a contract with the paper; absent when the data set lacks the labels, never 0):

Stage 1 (attribute verifier, positive class = *unsupported*, i.e. the human majority did not
accept the attribute):
- ``stage1.verifier.auroc``, ``.kappa``, ``.f1``, ``.precision``, ``.recall`` (kappa: Cohen's
  kappa of the flag with the human majority's "unsupported")
- ``stage1.verifier.acceptance_all``: share of human judgments that are ``accepted``, over
  every evaluated attribute (the study's 58%)
- ``stage1.verifier.acceptance_kept``: the same share over the attributes the verifier keeps
  (the study's "over 90%" after verify-and-refine); ``stage1.verifier.kept_share``
- ``stage1.verifier.zero_shot_acceptance_kept.<model>``, ``.zero_shot_f1.<model>``,
  ``.zero_shot_kept_share.<model>``, ``.zero_shot_auroc.<model>``, ``.zero_shot_kappa.<model>``:
  each zero-shot LLM verifier of stage 1, on the evaluated attributes it labelled
- ``stage1.verifier.minus_zero_shot.<model>.auroc`` / ``.kappa``: the trained verifier minus
  that zero-shot verifier on exactly those attributes (paired: one statistic per resample)

Stage 2 (relevance classifier, per round ``final`` / ``pilot2``):
- ``stage2.classifier.<round>.precision``, ``.recall``, ``.f1``, ``.auroc``,
  ``.predicted_rate``, ``.human_rate``
- ``stage2.classifier.<round>.reference.<rater>.precision`` / ``.recall`` / ``.f1``: every
  LLM and retrieval baseline on exactly the classifier's held-out items
- ``stage2.classifier.<round>.f1_minus_zero_shot.<model>``: the classifier's F1 minus that
  zero-shot LLM's F1 on those shared items (paired, same resamples)

Stage 3 (reward models; ``<variant>`` = ``pointwise``, ``pairwise``, ``ordinal``):
- ``stage3.reward_model.<variant>.spearman``, ``.kendall``
- ``stage3.reward_model.judge.<judge>.spearman``, ``.kendall``: each LLM judge, same targets
- ``stage3.reward_model.human_ceiling.spearman``, ``.kendall``: leave-one-human-out
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from analysis.learn.relevance_classifier import RelevanceResult
from analysis.learn.reward_model import RewardResult
from analysis.learn.verifier import VerifierResult
from analysis.provenance import Record
from analysis.seeds import SeedScheme, derive_seed
from analysis.settings import StatsConfig
from analysis.stats.interval import Interval
from analysis.stats.study_common import DISAGREEMENT_EXPLAINED, RESAMPLE_TEST, resample_test
from analysis.stats.weighted_bootstrap import (
    Statistic,
    bootstrap,
    choose_unit,
    weighted_auroc,
    weighted_difference,
    weighted_kappa,
    weighted_kendall,
    weighted_prf,
    weighted_ratio,
    weighted_spearman,
)

UNIT_WORDS = {"user": "users", "prompt": "prompts", "item": "items"}


def _ci_sentence(est: Interval, stats: StatsConfig) -> str:
    res = est.resamples
    assert res is not None  # the weighted bootstrap keeps its resamples
    unit = UNIT_WORDS.get(res.cluster, res.cluster)
    fallback = (
        ""
        if res.cluster != "item"
        else " (too few users/prompts among the evaluated rows for a cluster bootstrap)"
    )
    return (
        f"{stats.ci_level:.0%} {est.method} bootstrap CI over {res.n_clusters} {unit}{fallback} "
        f"({res.n_boot} resamples, held-out predictions fixed)."
    )


def _test_sentence(null: float, stats: StatsConfig) -> str:
    """The method sentence of a resample test of ``null`` (see ``resample_test``)."""
    text = (
        f" Test of {null:g}: {RESAMPLE_TEST}; p = 2 x the smaller share of resamples on either "
        f"side of {null:g} (floored at 1/B)"
    )
    if stats.ci_method == "bca":
        text += (
            "; the p-value inverts the percentile interval, so with the BCa interval printed "
            f"here the two {DISAGREEMENT_EXPLAINED} near the boundary"
        )
    return text + "."


class _Builder:
    """Collects records of one model; each metric is bootstrapped over the same clusters."""

    def __init__(
        self,
        frame: pd.DataFrame,
        units: list[str],
        min_clusters: int,
        stats: StatsConfig,
        seed: int,
    ) -> None:
        self.unit, self.clusters = choose_unit(frame, units, min_clusters)
        self.stats = stats
        self.seed = seed
        self.records: list[Record] = []

    def with_rows(self, frame: pd.DataFrame, units: list[str], min_clusters: int) -> _Builder:
        child = _Builder(frame, units, min_clusters, self.stats, self.seed)
        child.records = self.records
        return child

    def add(
        self,
        key: str,
        stat: Statistic,
        fmt: str,
        method: str,
        code: str,
        extra: dict[str, object] | None = None,
        test_null: float | None = None,
    ) -> None:
        """Bootstrap ``stat`` and add its record; with ``test_null``, a test of that value on
        the interval's own resamples (a difference's p-value, same resampling unit)."""
        est = bootstrap(
            stat,
            self.clusters,
            unit=self.unit,
            n_boot=self.stats.n_boot,
            seed=self.seed,
            level=self.stats.ci_level,
            method=self.stats.ci_method,
        )
        if est is None:  # undefined on these data: the key stays absent
            return
        assert est.resamples is not None
        test = {} if test_null is None else resample_test(est.resamples, test_null)
        self.records.append(
            Record(
                key=key,
                value=est.value,
                fmt=fmt,
                method=f"{method} {_ci_sentence(est, self.stats)}"
                + (_test_sentence(float(test["null"]), self.stats) if test else ""),
                code=code,
                ci_low=est.low,
                ci_level=est.level,
                ci_high=est.high,
                n=est.n,
                seed=self.seed,
                extra={
                    "bootstrap_unit": est.resamples.cluster,
                    "n_clusters": est.resamples.n_clusters,
                    "n_boot_valid": int(est.resamples.n_valid),
                    **(extra or {}),
                    **test,
                },
            )
        )


def _prf(
    b: _Builder,
    prefix: str,
    y: np.ndarray,
    pred: np.ndarray,
    what: str,
    code: str,
    extra: dict[str, object],
) -> None:
    for metric in ("precision", "recall", "f1"):
        name = {"precision": "Precision", "recall": "Recall", "f1": "F1"}[metric]
        more = dict(extra)
        if metric == "f1" and y.any():  # what flagging every row would score, for reading F1
            more["f1_if_all_positive"] = float(2 * y.mean() / (1 + y.mean()))
        b.add(
            f"{prefix}.{metric}",
            weighted_prf(y, pred, metric),
            ".3f",
            f"{name} of {what}.",
            code,
            more,
        )


def verifier_records(
    result: VerifierResult,
    stats: StatsConfig,
    seed: int,
    learner: str,
    units: list[str],
    min_clusters: int,
) -> list[Record]:
    """Records of the stage-1 verifier and of each zero-shot LLM verifier."""
    code = "analysis.learn.records:verifier_records"
    pred = result.predictions
    b = _Builder(
        pred,
        units,
        min_clusters,
        stats,
        derive_seed(seed, "stage1.verifier.bootstrap", scheme=SeedScheme.learn),
    )
    extra = {
        "round": result.round,
        "learner": learner,
        "n_features": len(result.feature_names),
        "threshold_median": result.threshold,
        "threshold_tuned_on": sorted(set(result.threshold_sources)),
        "chosen_C_per_fold": result.chosen_C,
        "model": "analysis.learn.verifier:train_verifier",
    }
    with_emb = any(n.startswith("attribute_emb") for n in result.feature_names)
    trained = (
        f"the trained verifier ({learner} on attribute/reason text signals"
        f"{' and MiniLM embeddings' if with_emb else ''}), "
        f"out-of-fold over grouped-by-user cross-validation, {result.round} round, against the "
        "human majority (unsupported = not more than half of an attribute's human judgments "
        "'accepted'; decision threshold tuned for F1 on validation users inside each training fold)"
    )
    unsupported = ~pred["accepted"].to_numpy(dtype=bool)
    b.add(
        "stage1.verifier.auroc",
        weighted_auroc(unsupported, pred["p_unsupported"].to_numpy()),
        ".3f",
        f"AUROC of P(unsupported) from {trained}.",
        code,
        extra,
    )
    flagged = pred["flagged"].to_numpy(dtype=bool)
    b.add(
        "stage1.verifier.kappa",
        weighted_kappa(flagged, unsupported),
        ".2f",
        f"Cohen's kappa of flagging by {trained} with the human majority's 'unsupported'.",
        code,
        extra,
    )
    _prf(
        b,
        "stage1.verifier",
        unsupported,
        flagged,
        f"flagging unsupported attributes by {trained}",
        code,
        extra,
    )
    n_judg = pred["n_judgments"].to_numpy(dtype=float)
    n_acc = pred["n_accepted"].to_numpy(dtype=float)
    kept = pred["kept"].to_numpy(dtype=float)
    b.add(
        "stage1.verifier.acceptance_all",
        weighted_ratio(n_acc, n_judg),
        ".1%",
        f"Share of human judgments 'accepted' over all {len(pred)} evaluated attributes "
        f"({result.round} round).",
        code,
        extra,
    )
    b.add(
        "stage1.verifier.acceptance_kept",
        weighted_ratio(n_acc * kept, n_judg * kept),
        ".1%",
        f"Share of human judgments 'accepted' over the attributes kept (not flagged) by {trained}; "
        "verify only, no refinement step.",
        code,
        extra,
    )
    b.add(
        "stage1.verifier.kept_share",
        weighted_ratio(kept, np.ones(len(kept))),
        ".1%",
        f"Share of attributes kept by {trained}.",
        code,
        extra,
    )
    zs = result.zero_shot
    for rater in sorted(zs["rater"].unique()) if len(zs) else []:
        z = zs[zs["rater"] == rater].merge(pred, on="attribute_id", how="inner")
        if len(z) == 0:
            continue
        zb = b.with_rows(z, units, min_clusters)
        z_keep = z["keeps"].to_numpy(dtype=float)
        z_extra = {**extra, "rater": rater, "model": "analysis.learn.verifier:zero_shot_labels"}
        what = (
            f"the zero-shot LLM verifier {rater} of stage 1 (keeps an attribute it labels "
            f"'accepted'), on the {len(z)} evaluated attributes it labelled"
        )
        zb.add(
            f"stage1.verifier.zero_shot_acceptance_kept.{rater}",
            weighted_ratio(
                z["n_accepted"].to_numpy(float) * z_keep, z["n_judgments"].to_numpy(float) * z_keep
            ),
            ".1%",
            f"Share of human judgments 'accepted' over the attributes kept by {what}.",
            code,
            z_extra,
        )
        zb.add(
            f"stage1.verifier.zero_shot_kept_share.{rater}",
            weighted_ratio(z_keep, np.ones(len(z))),
            ".1%",
            f"Share of attributes kept by {what}.",
            code,
            z_extra,
        )
        zb.add(
            f"stage1.verifier.zero_shot_f1.{rater}",
            weighted_prf(~z["accepted"].to_numpy(bool), ~z["keeps"].to_numpy(bool), "f1"),
            ".3f",
            f"F1 of flagging unsupported attributes by {what}, against the human majority.",
            code,
            z_extra,
        )
        _versus_zero_shot(zb, z, rater, what, code, z_extra)
    return b.records


def _versus_zero_shot(
    zb: _Builder, z: pd.DataFrame, rater: str, what: str, code: str, extra: dict[str, object]
) -> None:
    """AUROC and kappa of a zero-shot verifier and the trained one's advantage, same rows.

    Both verifiers are scored on the attributes the zero-shot model labelled, and each
    difference is one statistic of the resampled rows, so its interval is paired.
    """
    y = ~z["accepted"].to_numpy(dtype=bool)
    trained = {
        "auroc": weighted_auroc(y, z["p_unsupported"].to_numpy(float)),
        "kappa": weighted_kappa(z["flagged"].to_numpy(bool), y),
    }
    zero_shot = {
        "auroc": weighted_auroc(y, z["zs_unsupported"].to_numpy(float)),
        "kappa": weighted_kappa(~z["keeps"].to_numpy(bool), y),
    }
    words = {
        "auroc": "AUROC of the score for 'unsupported' (for the zero-shot verifier: the share "
        "of its labels that do not accept the attribute)",
        "kappa": "Cohen's kappa of the flag with the human majority's 'unsupported'",
    }
    for metric, fmt in (("auroc", ".3f"), ("kappa", ".2f")):
        zb.add(
            f"stage1.verifier.zero_shot_{metric}.{rater}",
            zero_shot[metric],
            fmt,
            f"{words[metric]} by {what}.",
            code,
            extra,
        )
        zb.add(
            f"stage1.verifier.minus_zero_shot.{rater}.{metric}",
            weighted_difference(trained[metric], zero_shot[metric]),
            fmt,
            f"{words[metric]}: the trained verifier (out of fold) minus {what}; both on the "
            "same attributes, the difference computed on each resample (paired).",
            code,
            extra,
            test_null=0.0,
        )


def relevance_records(
    results: list[RelevanceResult],
    stats: StatsConfig,
    seed: int,
    learner: str,
    units: list[str],
    min_clusters: int,
    min_reference_items: int,
) -> list[Record]:
    """Records of the relevance classifier per round, and of every reference on its items."""
    code = "analysis.learn.records:relevance_records"
    records: list[Record] = []
    for res in results:
        ev = res.evaluated
        b = _Builder(
            ev,
            units,
            min_clusters,
            stats,
            derive_seed(seed, f"stage2.classifier.{res.round}", scheme=SeedScheme.learn),
        )
        b.records = records
        split_words = (
            "trained on the round's own train split, threshold tuned on its val split, scored "
            "on its test split (prompts disjoint)"
            if res.mode == "given_split"
            else "out-of-fold over cross-validation grouped by prompt (test prompts unseen), "
            "threshold tuned for F1 on validation prompts inside each training fold"
        )
        what = (
            f"the trained relevance classifier ({learner} on prompt-attribute MiniLM cosine, "
            f"elementwise products, attribute embedding and word overlap), {split_words}, "
            f"against the human majority, {res.round} round"
        )
        extra = {
            "round": res.round,
            "mode": res.mode,
            "learner": learner,
            "n_features": len(res.feature_names),
            "threshold_median": res.threshold,
            "threshold_tuned_on": sorted(set(res.threshold_sources)),
            "chosen_C_per_fold": res.chosen_C,
            "model": "analysis.learn.relevance_classifier:train_relevance_classifier",
        }
        y = ev["label"].to_numpy(dtype=bool)
        prefix = f"stage2.classifier.{res.round}"
        _prf(b, prefix, y, ev["predicted"].to_numpy(dtype=bool), what, code, extra)
        b.add(
            f"{prefix}.auroc",
            weighted_auroc(y, ev["score"].to_numpy()),
            ".3f",
            f"AUROC of {what}.",
            code,
            extra,
        )
        b.add(
            f"{prefix}.predicted_rate",
            weighted_ratio(ev["predicted"].to_numpy(float), np.ones(len(ev))),
            ".1%",
            f"Share of held-out items marked relevant by {what}.",
            code,
            extra,
        )
        b.add(
            f"{prefix}.human_rate",
            weighted_ratio(y.astype(float), np.ones(len(ev))),
            ".1%",
            f"Share of the classifier's held-out items ({res.round} round) that the human "
            "majority marks relevant.",
            code,
            extra,
        )
        for rater in sorted(res.references["rater"].unique()) if len(res.references) else []:
            ref = res.references[res.references["rater"] == rater]
            shared = ev.merge(ref[["item_id", "vote", "rater_kind"]], on="item_id", how="inner")
            if len(shared) < min_reference_items:
                continue
            rb = b.with_rows(shared, units, min_clusters)
            kind = str(shared["rater_kind"].iloc[0])
            on_items = (
                f"on the {len(shared)} held-out items of the trained classifier "
                f"it also voted on, against the human majority, {res.round} round"
            )
            shared_y = shared["label"].to_numpy(bool)
            _prf(
                rb,
                f"{prefix}.reference.{rater}",
                shared_y,
                shared["vote"].to_numpy(bool),
                f"{rater} ({kind}) {on_items}",
                code,
                {**extra, "rater": rater, "rater_kind": kind},
            )
            if kind == "model":
                rb.add(
                    f"{prefix}.f1_minus_zero_shot.{rater}",
                    weighted_difference(
                        weighted_prf(shared_y, shared["predicted"].to_numpy(bool), "f1"),
                        weighted_prf(shared_y, shared["vote"].to_numpy(bool), "f1"),
                    ),
                    ".3f",
                    f"F1 of the trained relevance classifier minus F1 of the zero-shot model "
                    f"{rater}, both {on_items} (paired: the difference on each resample).",
                    code,
                    {**extra, "rater": rater, "rater_kind": kind},
                    test_null=0.0,
                )
    return records


def _corr_pair(
    b: _Builder,
    prefix: str,
    x: np.ndarray,
    y: np.ndarray,
    what: str,
    code: str,
    extra: dict[str, object],
) -> None:
    stats_of: dict[str, Callable[[np.ndarray, np.ndarray], Statistic]] = {
        "spearman": weighted_spearman,
        "kendall": weighted_kendall,
    }
    names = {"spearman": "Spearman's rho", "kendall": "Kendall's tau-b"}
    for metric, fn in stats_of.items():
        b.add(
            f"{prefix}.{metric}",
            fn(x, y),
            ".2f" if metric == "spearman" else ".3f",
            f"{names[metric]} of {what}.",
            code,
            extra,
        )


def reward_records(
    result: RewardResult,
    stats: StatsConfig,
    seed: int,
    learner: str,
    units: list[str],
    min_clusters: int,
    min_ceiling_examples: int,
) -> list[Record]:
    """Records of each reward-model variant, each LLM judge and the human ceiling."""
    code = "analysis.learn.records:reward_records"
    pred = result.predictions
    boot_seed = derive_seed(seed, "stage3.reward_model.bootstrap", scheme=SeedScheme.learn)
    b = _Builder(pred, units, min_clusters, stats, boot_seed)
    target = pred["human_mean"].to_numpy(dtype=float)
    base_extra = {
        "round": result.round,
        "learner": learner,
        "n_features": len(result.feature_names),
    }
    described = {
        "pointwise": "ridge regression of the mean human rating"
        if learner == "logistic"
        else "gradient-boosted regression of the mean human rating",
        "pairwise": "a linear pairwise ranker (logistic regression on feature differences of "
        "training pairs with different ratings)",
        "ordinal": "an all-threshold ordinal logistic model of the 1-5 scale (Frank & Hall)",
    }
    for v in result.variants:
        what = (
            f"the held-out scores of the {v} reward model ({described[v]} on embedding "
            "differences personalized-generic, attribute/prompt-response similarity gains, "
            "length ratio and explicit-mention signals; cross-validation grouped by user) with "
            f"the mean human rating of each example, {result.round} round"
        )
        _corr_pair(
            b,
            f"stage3.reward_model.{v}",
            pred[f"score_{v}"].to_numpy(float),
            target,
            what,
            code,
            {
                **base_extra,
                "variant": v,
                "model": "analysis.learn.reward_model:train_reward_models",
            },
        )
    judges = result.judges
    for rater in sorted(judges["rater"].unique()) if len(judges) else []:
        j = judges[judges["rater"] == rater].merge(
            pred[["user_id", "prompt_id", "generator", "attribute_id", "human_mean"]],
            on=["user_id", "prompt_id", "generator", "attribute_id"],
            how="inner",
        )
        if len(j) < 2:
            continue
        jb = b.with_rows(j, units, min_clusters)
        _corr_pair(
            jb,
            f"stage3.reward_model.judge.{rater}",
            j["rating"].to_numpy(float),
            j["human_mean"].to_numpy(float),
            f"the LLM judge {rater}'s rating with the mean human rating on the {len(j)} "
            f"examples both rated, {result.round} round",
            code,
            {**base_extra, "rater": rater, "model": "analysis.learn.reward_model:judge_ratings"},
        )
    ceil = result.ceiling
    n_examples = ceil.drop_duplicates(["user_id", "prompt_id", "generator", "attribute_id"]).shape[
        0
    ]
    if n_examples >= min_ceiling_examples:
        cb = b.with_rows(ceil, units, min_clusters)
        _corr_pair(
            cb,
            "stage3.reward_model.human_ceiling",
            ceil["rating"].to_numpy(float),
            ceil["others_mean"].to_numpy(float),
            f"each human's rating with the mean of the other humans on the {n_examples} "
            f"examples rated by two or more people (leave-one-human-out, pooled over humans), "
            f"{result.round} round",
            code,
            {**base_extra, "model": "analysis.learn.reward_model:human_ceiling_pairs"},
        )
    return b.records
