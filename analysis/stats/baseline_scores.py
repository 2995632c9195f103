"""How well a retrieval baseline's YES/NO votes match the human majority on held-out prompts.

The stage (:mod:`analysis.stages.baselines`) scores items, sets how many to select from the
development prompts and writes the votes table; this module turns the evaluation prompts' votes into
precision, recall and F1 with intervals from the stage-2 design ``relevance_items`` (users
and prompts crossed: the items of one prompt share its wording, those of one user its
profile). They are the same statistics, on the same rows and resamples, as the relevance
classifier's reference scores of the baseline (:mod:`analysis.learn.records`), so the two
tables print one interval. The recall of the all-positive rule is 1 by construction and is
reported as such, without an interval (:data:`analysis.stats.records.BY_CONSTRUCTION`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from analysis.provenance import Record
from analysis.stats.records import SHARE, Statistic, make_records
from analysis.stats.resampling import Units, plan, weighted_rows
from analysis.stats.settings import StatsSettings
from analysis.stats.weighted_bootstrap import evaluate_counts, weighted_prf

MODULE = "analysis.stats.baseline_scores"
#: the rule reported beside the retrieval baselines that marks every attribute relevant (a
#: rater of the baselines' votes, and so of the relevance classifier's references)
ALL_POSITIVE = "all-positive"
#: why the recall of a rule that marks every item relevant is not an estimate
EVERY_ITEM_RECALL = (
    "the rule marks every item relevant, so it misses none of the items the majority marks "
    "relevant: its recall is 1 on any items"
)


@dataclass(frozen=True)
class BaselineSplit:
    """One baseline's votes on one round, split into development and evaluation prompts."""

    baseline: str
    method_name: str  # e.g. "rank-bm25 BM25Okapi"
    round: str
    rule: str  # how the votes were made from the scores, for the method sentence
    selection_rate: float  # the human majority's rate on the development prompts
    pred: np.ndarray  # bool, every item of the round
    gold: np.ndarray  # bool, human majority YES
    is_dev: np.ndarray  # bool, item's prompt is a development prompt
    user_ids: np.ndarray  # each item's user
    prompt_ids: np.ndarray  # each item's prompt
    n_dev_prompts: int
    n_items_without_text: int
    #: the rule marks every item relevant whatever the item (the all-positive rule): its recall
    #: is 1 by construction, not an estimate
    marks_every_item: bool = False


def baseline_score_records(split: BaselineSplit, settings: StatsSettings) -> list[Record]:
    """F1, precision and recall against the majority on the evaluation prompts, with CIs."""
    ev = ~split.is_dev
    ev_pred, ev_gold = split.pred[ev], split.gold[ev]
    ev_prompts = split.prompt_ids[ev]
    units = Units(
        n=int(ev.sum()),
        users=np.asarray(split.user_ids[ev], dtype=str).astype(object),
        prompts=np.asarray(ev_prompts, dtype=str).astype(object),
        noun="items",
    )
    items = plan(settings, "relevance_items", units, one_way="prompt")
    n_eval_prompts = len(set(ev_prompts))
    extra: dict[str, Any] = {
        "dev_majority_yes_rate": split.selection_rate,
        "n_dev_prompts": split.n_dev_prompts,
        "n_eval_prompts": n_eval_prompts,
        "n_dev_items": int(split.is_dev.sum()),
        "n_eval_items": int(ev.sum()),
        "n_items_without_text": split.n_items_without_text,
        "eval_majority_yes_rate": float(ev_gold.mean()),
        "eval_predicted_yes_rate": float(ev_pred.mean()),
    }
    denominators = {"f1": None, "precision": ev_pred, "recall": ev_gold}
    statistics = [
        Statistic(
            key=f"stage2.{split.round}.{stat}_vs_majority.{split.baseline}",
            estimate=weighted_rows(
                items, weighted_prf(ev_gold, ev_pred, stat), units.n, evaluate_counts
            ),
            fmt=".3f",
            what=(
                f"{split.method_name}: {split.rule}; {stat} against the human majority on "
                f"the other {n_eval_prompts} prompts"
            ),
            code=f"{MODULE}:baseline_score_records",
            n=units.n,
            unit="items",
            extra=extra,
            units=None if den is None else items.units_with(den),
            limits=SHARE,
            by_construction=(
                EVERY_ITEM_RECALL if split.marks_every_item and stat == "recall" else ""
            ),
        )
        for stat, den in denominators.items()
    ]
    return make_records(statistics, settings)
