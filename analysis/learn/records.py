"""Records of the trained interventions: every metric with its CI, n, method and seed.

Keys (a contract with the paper; absent when the data set lacks the labels, never 0):

Stage 1 (attribute verifier, positive class = *unsupported*, i.e. the human majority did not
accept the attribute):
- ``stage1.verifier.auroc``, ``.kappa``, ``.f1``, ``.precision``, ``.recall`` (kappa: Cohen's
  kappa of the flag with the human majority's "unsupported")
- ``stage1.verifier.acceptance_kept``: the share of human judgments that are ``accepted``
  over the attributes the verifier keeps (the study's "over 90%" after verify-and-refine),
  beside people's acceptance of every attribute (``stage1.acceptance_rate.overall``, the
  same estimand, made once by rule ``stage1_statistics``); ``stage1.verifier.kept_share``
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

Every interval comes from the record maker (:mod:`analysis.stats.records`) under the
family's declared design (``stats.designs``), with the run's seed, so a statistic of the
held-out predictions that another rule also reports (a zero-shot model's F1 against the
human majority, a judge's rho with people) draws the same resamples and gets the same
interval: the verifier's scores ``attribute_labels`` and people's acceptance over judgments
``attribute_judgments``, the classifier ``relevance_items``, the reward models and judges
against people's ratings ``rating_reference`` and the human ceiling ``rating_people``.
The held-out predictions are fixed while users, prompts (and annotators) are resampled, so
an interval covers the sampling of evaluation data, not the variability of retraining.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis.learn.relevance_classifier import RelevanceResult
from analysis.learn.reward_model import RewardResult
from analysis.learn.verifier import VerifierResult
from analysis.provenance import Record
from analysis.stats.baseline_scores import ALL_POSITIVE, EVERY_ITEM_RECALL
from analysis.stats.records import (
    AGREEMENT,
    SHARE,
    NullTest,
    Statistic,
    make_records,
)
from analysis.stats.resampling import Plan, Resamples, Units, plan, spearman, weighted_rows
from analysis.stats.settings import StatsSettings
from analysis.stats.weighted_bootstrap import (
    Statistic as RowStatistic,
)
from analysis.stats.weighted_bootstrap import (
    choose_unit,
    evaluate_counts,
    weighted_auroc,
    weighted_difference,
    weighted_kappa,
    weighted_kendall,
    weighted_prf,
    weighted_ratio,
    weighted_spearman,
)

HELD_OUT = "held-out predictions fixed"


@dataclass
class _Builder:
    """The statistics of one set of held-out rows under one design (their records made at once).

    ``units``/``min_clusters``: the one-way unit under ``stats.design = one_way`` (the first
    of ``units`` with enough clusters among these rows).
    """

    frame: pd.DataFrame
    design: str
    settings: StatsSettings
    units: Sequence[str]
    min_clusters: int
    strata: pd.Series | None = None
    annotators: np.ndarray | None = None  # each row's annotator, for a design with people
    statistics: list[Statistic] = field(default_factory=list)

    def __post_init__(self) -> None:
        unit, labels = choose_unit(self.frame, list(self.units), self.min_clusters)
        people = () if self.annotators is None else tuple(sorted(set(self.annotators)))
        rows = Units(
            n=len(self.frame),
            users=self._column("user_id"),
            prompts=self._column("prompt_id"),
            strata=self.strata,
            annotators=people,
            items=labels if unit == "item" else None,
            noun="held-out rows",
        )
        self.plan: Plan = plan(self.settings, self.design, rows, one_way=unit)

    def _column(self, name: str) -> np.ndarray | None:
        return (
            self.frame[name].astype(str).to_numpy(dtype=object)
            if name in self.frame.columns
            else None
        )

    def with_rows(self, frame: pd.DataFrame, design: str | None = None, **kw: object) -> _Builder:
        """Another set of rows whose statistics join these (one call of the record maker)."""
        child = _Builder(
            frame, design or self.design, self.settings, self.units, self.min_clusters, **kw
        )
        child.statistics = self.statistics
        return child

    def resamples(self, stat: RowStatistic) -> Resamples:
        return weighted_rows(
            self.plan, stat, len(self.frame), evaluate_counts, annotator_rows=self.annotators
        )

    def add(
        self,
        key: str,
        estimate: Resamples,
        fmt: str,
        what: str,
        code: str,
        extra: dict[str, object] | None = None,
        test: NullTest | None = None,
        units: int | None = None,
        n: int | None = None,
        limits: tuple[float, float] | None = None,
        by_construction: str = "",
    ) -> None:
        """A statistic of these rows (absent where it is undefined: the record maker drops it);
        ``n``: the units it is about, where they are not the rows (attributes, not judgments)."""
        self.statistics.append(
            Statistic(
                key=key,
                estimate=estimate,
                fmt=fmt,
                what=f"{what} ({HELD_OUT})",
                code=code,
                n=len(self.frame) if n is None else n,
                extra=extra or {},
                test=test,
                units=units,
                limits=limits,
                by_construction=by_construction,
            )
        )

    def share(self, numerator: np.ndarray, denominator: np.ndarray) -> tuple[Resamples, int]:
        """A share of weighted rows and the design's units behind its denominator."""
        den = np.asarray(denominator, dtype=np.float64)
        return self.resamples(weighted_ratio(numerator, den)), self.plan.units_with(den)


def _prf(
    b: _Builder,
    prefix: str,
    y: np.ndarray,
    pred: np.ndarray,
    what: str,
    code: str,
    extra: dict[str, object],
    marks_every_item: bool = False,
) -> None:
    """Precision, recall and F1 of ``pred`` against ``y`` (recall and precision are shares:
    the units behind their denominators go with them). ``marks_every_item``: ``pred`` is a rule
    that says YES to any item (the all-positive rule), whose recall is 1 by construction."""
    y, pred = np.asarray(y, dtype=bool), np.asarray(pred, dtype=bool)
    denominators = {"precision": pred, "recall": y, "f1": None}
    for metric, den in denominators.items():
        name = {"precision": "Precision", "recall": "Recall", "f1": "F1"}[metric]
        more = dict(extra)
        if metric == "f1" and y.any():  # what flagging every row would score, for reading F1
            more["f1_if_all_positive"] = float(2 * y.mean() / (1 + y.mean()))
        b.add(
            f"{prefix}.{metric}",
            b.resamples(weighted_prf(y, pred, metric)),
            ".3f",
            f"{name} of {what}",
            code,
            more,
            units=None if den is None else b.plan.units_with(den),
            limits=SHARE,
            by_construction=(EVERY_ITEM_RECALL if marks_every_item and metric == "recall" else ""),
        )


def _judgment_rows(
    judgments: pd.DataFrame, result: VerifierResult, users: pd.DataFrame
) -> pd.DataFrame:
    """The human judgments of the verifier's round on its evaluated attributes, each with its
    user's source, whether it accepts, and the verifier's decision on its attribute."""
    human = judgments[
        (judgments["rater_kind"] == "human") & (judgments["round"].astype(str) == result.round)
    ]
    pred = result.predictions[["attribute_id", "kept"]]
    rows = human.assign(attribute_id=human["attribute_id"].astype(str)).merge(
        pred, on="attribute_id", how="inner"
    )
    sources = users.assign(user_id=users["user_id"].astype(str))[["user_id", "source"]]
    rows = rows.assign(user_id=rows["user_id"].astype(str)).merge(
        sources, on="user_id", how="left", validate="many_to_one"
    )
    return rows.assign(accepts=(rows["label"] == "accepted")).reset_index(drop=True)


def _sources(frame: pd.DataFrame, users: pd.DataFrame) -> pd.Series:
    """Each row's user's source (the strata of the stage-1 designs)."""
    sources = users.assign(user_id=users["user_id"].astype(str)).set_index("user_id")["source"]
    return sources.reindex(frame["user_id"].astype(str)).rename("source").reset_index(drop=True)


def verifier_records(
    result: VerifierResult,
    judgments: pd.DataFrame,
    users: pd.DataFrame,
    settings: StatsSettings,
    learner: str,
    units: list[str],
    min_clusters: int,
) -> list[Record]:
    """Records of the stage-1 verifier and of each zero-shot LLM verifier."""
    code = "analysis.learn.records:verifier_records"
    pred = result.predictions
    b = _Builder(
        pred, "attribute_labels", settings, units, min_clusters, strata=_sources(pred, users)
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
        b.resamples(weighted_auroc(unsupported, pred["p_unsupported"].to_numpy())),
        ".3f",
        f"AUROC of P(unsupported) from {trained}",
        code,
        extra,
        limits=SHARE,
    )
    flagged = pred["flagged"].to_numpy(dtype=bool)
    b.add(
        "stage1.verifier.kappa",
        b.resamples(weighted_kappa(flagged, unsupported)),
        ".2f",
        f"Cohen's kappa of flagging by {trained} with the human majority's 'unsupported'",
        code,
        extra,
        limits=AGREEMENT,
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
    kept = pred["kept"].to_numpy(dtype=float)
    share, n_units = b.share(kept, np.ones(len(kept)))
    b.add(
        "stage1.verifier.kept_share",
        share,
        ".1%",
        f"Share of attributes kept by {trained}",
        code,
        extra,
        units=n_units,
    )
    rows = _judgment_rows(judgments, result, users)
    people = b.with_rows(
        rows,
        "attribute_judgments",
        strata=rows["source"].rename("source"),
        annotators=rows["rater"].astype(str).to_numpy(dtype=object),
    )
    accepts = rows["accepts"].to_numpy(dtype=float)
    keeps = rows["kept"].to_numpy(dtype=float)
    share, n_units = people.share(accepts * keeps, keeps)
    people.add(
        "stage1.verifier.acceptance_kept",
        share,
        ".1%",
        f"Share of human judgments 'accepted' over the attributes kept (not flagged) by {trained}; "
        f"verify only, no refinement step (of all {len(pred)} evaluated attributes: "
        "stage1.acceptance_rate.overall)",
        code,
        extra,
        units=n_units,
        n=len(pred),
    )
    zs = result.zero_shot
    for rater in sorted(zs["rater"].unique()) if len(zs) else []:
        z = zs[zs["rater"] == rater].merge(pred, on="attribute_id", how="inner")
        if len(z) == 0:
            continue
        zb = b.with_rows(z, strata=_sources(z, users))
        z_keep = z["keeps"].to_numpy(dtype=float)
        z_extra = {**extra, "rater": rater, "model": "analysis.learn.verifier:zero_shot_labels"}
        what = (
            f"the zero-shot LLM verifier {rater} of stage 1 (keeps an attribute it labels "
            f"'accepted'), on the {len(z)} evaluated attributes it labelled"
        )
        judged = rows[rows["attribute_id"].isin(z["attribute_id"])].reset_index(drop=True)
        judged_keeps = (
            judged["attribute_id"].map(dict(zip(z["attribute_id"], z["keeps"], strict=True)))
        ).to_numpy(dtype=float)
        zp = b.with_rows(
            judged,
            "attribute_judgments",
            strata=judged["source"].rename("source"),
            annotators=judged["rater"].astype(str).to_numpy(dtype=object),
        )
        share, n_units = zp.share(
            judged["accepts"].to_numpy(dtype=float) * judged_keeps, judged_keeps
        )
        zp.add(
            f"stage1.verifier.zero_shot_acceptance_kept.{rater}",
            share,
            ".1%",
            f"Share of human judgments 'accepted' over the attributes kept by {what}",
            code,
            z_extra,
            units=n_units,
            n=len(z),
        )
        share, n_units = zb.share(z_keep, np.ones(len(z)))
        zb.add(
            f"stage1.verifier.zero_shot_kept_share.{rater}",
            share,
            ".1%",
            f"Share of attributes kept by {what}",
            code,
            z_extra,
            units=n_units,
        )
        zb.add(
            f"stage1.verifier.zero_shot_f1.{rater}",
            zb.resamples(
                weighted_prf(~z["accepted"].to_numpy(bool), ~z["keeps"].to_numpy(bool), "f1")
            ),
            ".3f",
            f"F1 of flagging unsupported attributes by {what}, against the human majority",
            code,
            z_extra,
            limits=SHARE,
        )
        _versus_zero_shot(zb, z, rater, what, code, z_extra)
    return make_records(b.statistics, settings)


#: the values each verifier score can take
LIMITS = {"auroc": SHARE, "kappa": AGREEMENT}


def _versus_zero_shot(
    zb: _Builder, z: pd.DataFrame, rater: str, what: str, code: str, extra: dict[str, object]
) -> None:
    """AUROC and kappa of a zero-shot verifier and the trained one's advantage, same rows.

    Both verifiers are scored on the attributes the zero-shot model labelled, and each
    difference is one statistic of the resampled rows, so its interval is paired; its test
    belongs to the family ``verifier_minus_zero_shot``.
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
            zb.resamples(zero_shot[metric]),
            fmt,
            f"{words[metric]} by {what}",
            code,
            extra,
            limits=LIMITS[metric],
        )
        zb.add(
            f"stage1.verifier.minus_zero_shot.{rater}.{metric}",
            zb.resamples(weighted_difference(trained[metric], zero_shot[metric])),
            fmt,
            f"{words[metric]}: the trained verifier (out of fold) minus {what}; both on the "
            "same attributes, the difference computed on each resample (paired)",
            code,
            extra,
            test=NullTest(0.0, "verifier_minus_zero_shot"),
        )


def relevance_records(
    results: list[RelevanceResult],
    settings: StatsSettings,
    learner: str,
    units: list[str],
    min_clusters: int,
    min_reference_items: int,
) -> list[Record]:
    """Records of the relevance classifier per round, and of every reference on its items."""
    code = "analysis.learn.records:relevance_records"
    statistics: list[Statistic] = []
    for res in results:
        ev = res.evaluated
        b = _Builder(ev, "relevance_items", settings, units, min_clusters)
        b.statistics = statistics
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
            b.resamples(weighted_auroc(y, ev["score"].to_numpy())),
            ".3f",
            f"AUROC of {what}",
            code,
            extra,
            limits=SHARE,
        )
        share, n_units = b.share(ev["predicted"].to_numpy(float), np.ones(len(ev)))
        b.add(
            f"{prefix}.predicted_rate",
            share,
            ".1%",
            f"Share of held-out items marked relevant by {what}",
            code,
            extra,
            units=n_units,
        )
        share, n_units = b.share(y.astype(float), np.ones(len(ev)))
        b.add(
            f"{prefix}.human_rate",
            share,
            ".1%",
            f"Share of the classifier's held-out items ({res.round} round) that the human "
            "majority marks relevant",
            code,
            extra,
            units=n_units,
        )
        for rater in sorted(res.references["rater"].unique()) if len(res.references) else []:
            ref = res.references[res.references["rater"] == rater]
            shared = ev.merge(ref[["item_id", "vote", "rater_kind"]], on="item_id", how="inner")
            if len(shared) < min_reference_items:
                continue
            rb = b.with_rows(shared)
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
                marks_every_item=rater == ALL_POSITIVE,
            )
            if kind == "model":
                rb.add(
                    f"{prefix}.f1_minus_zero_shot.{rater}",
                    rb.resamples(
                        weighted_difference(
                            weighted_prf(shared_y, shared["predicted"].to_numpy(bool), "f1"),
                            weighted_prf(shared_y, shared["vote"].to_numpy(bool), "f1"),
                        )
                    ),
                    ".3f",
                    f"F1 of the trained relevance classifier minus F1 of the zero-shot model "
                    f"{rater}, both {on_items} (paired: the difference on each resample)",
                    code,
                    {**extra, "rater": rater, "rater_kind": kind},
                    test=NullTest(0.0, "classifier_minus_zero_shot", res.round),
                )
    return make_records(statistics, settings)


def _corr_pair(
    b: _Builder,
    prefix: str,
    x: np.ndarray,
    y: np.ndarray,
    what: str,
    code: str,
    extra: dict[str, object],
) -> None:
    """Spearman's rho (the resampling engine's table form, as the stage-3 statistics compute a
    judge's rho; weighted rows where annotators are deleted) and Kendall's tau-b of ``x`` and
    ``y`` over the builder's rows."""
    rows = np.arange(len(b.frame))
    rho = (
        b.resamples(weighted_spearman(x, y))
        if b.plan.annotators
        else spearman(b.plan, x, y, rows, len(b.frame))
    )
    b.add(
        f"{prefix}.spearman",
        rho,
        ".2f",
        f"Spearman's rho of {what}",
        code,
        extra,
        limits=AGREEMENT,
    )
    b.add(
        f"{prefix}.kendall",
        b.resamples(weighted_kendall(x, y)),
        ".3f",
        f"Kendall's tau-b of {what}",
        code,
        extra,
        limits=AGREEMENT,
    )


def reward_records(
    result: RewardResult,
    settings: StatsSettings,
    learner: str,
    units: list[str],
    min_clusters: int,
    min_ceiling_examples: int,
) -> list[Record]:
    """Records of each reward-model variant, each LLM judge and the human ceiling."""
    code = "analysis.learn.records:reward_records"
    pred = result.predictions
    b = _Builder(pred, "rating_reference", settings, units, min_clusters)
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
        _corr_pair(
            b.with_rows(j),
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
        _corr_pair(
            b.with_rows(
                ceil, "rating_people", annotators=ceil["rater"].astype(str).to_numpy(dtype=object)
            ),
            "stage3.reward_model.human_ceiling",
            ceil["rating"].to_numpy(float),
            ceil["others_mean"].to_numpy(float),
            f"each human's rating with the mean of the other humans on the {n_examples} "
            f"examples rated by two or more people (leave-one-human-out, pooled over humans), "
            f"{result.round} round",
            code,
            {**base_extra, "model": "analysis.learn.reward_model:human_ceiling_pairs"},
        )
    return make_records(b.statistics, settings)
