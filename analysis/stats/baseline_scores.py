"""How well a retrieval baseline's YES/NO votes match the human majority on held-out prompts.

The stage (:mod:`analysis.stages.baselines`) scores items, sets how many to select from the
development prompts and writes the votes table; this module turns the evaluation prompts' votes into
precision, recall and F1 with cluster-bootstrap intervals that resample prompts (items of
one prompt share its wording, so they are not independent).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from analysis.provenance import Record
from analysis.stats.bootstrap import bootstrap_precision_recall_f1

MODULE = "analysis.stats.baseline_scores"


def precision_recall_f1(pred: np.ndarray, gold: np.ndarray) -> tuple[float, float, float]:
    """P, R, F1 of boolean predictions (NaN where undefined)."""
    pred, gold = np.asarray(pred, bool), np.asarray(gold, bool)
    tp = float(np.sum(pred & gold))
    fp = float(np.sum(pred & ~gold))
    fn = float(np.sum(~pred & gold))
    p = tp / (tp + fp) if tp + fp else float("nan")
    r = tp / (tp + fn) if tp + fn else float("nan")
    f = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else float("nan")
    return p, r, f


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
    prompt_ids: np.ndarray  # each item's prompt (the resampling cluster)
    n_dev_prompts: int
    n_items_without_text: int


def baseline_score_records(
    split: BaselineSplit, *, n_boot: int, ci_level: float, ci_method: str, seed: int
) -> list[Record]:
    """F1, precision and recall against the majority on the evaluation prompts, with CIs."""
    ev_pred, ev_gold = split.pred[~split.is_dev], split.gold[~split.is_dev]
    ev_prompts = split.prompt_ids[~split.is_dev]
    boot = bootstrap_precision_recall_f1(
        ev_pred, ev_gold, clusters=ev_prompts, cluster_name="prompt", n_boot=n_boot, seed=seed
    )
    point = dict(
        zip(("precision", "recall", "f1"), precision_recall_f1(ev_pred, ev_gold), strict=True)
    )
    n_eval_prompts = len(set(ev_prompts))
    records = []
    for stat in ("f1", "precision", "recall"):
        if not np.isfinite(point[stat]):
            continue
        ci = boot[stat].ci(ci_level, ci_method)  # type: ignore[arg-type]
        extra: dict[str, Any] = {
            "dev_majority_yes_rate": split.selection_rate,
            "n_dev_prompts": split.n_dev_prompts,
            "n_eval_prompts": n_eval_prompts,
            "n_dev_items": int(split.is_dev.sum()),
            "n_eval_items": int((~split.is_dev).sum()),
            "n_items_without_text": split.n_items_without_text,
            "eval_majority_yes_rate": float(ev_gold.mean()),
            "eval_predicted_yes_rate": float(ev_pred.mean()),
        }
        records.append(
            Record(
                key=f"stage2.{split.round}.{stat}_vs_majority.{split.baseline}",
                value=float(point[stat]),
                fmt=".3f",
                method=(
                    f"{split.method_name}: {split.rule}; {stat} against the human majority on "
                    f"the other {n_eval_prompts} prompts; {ci.text}"
                ),
                code=f"{MODULE}:baseline_score_records",
                ci_low=ci.low,
                ci_level=ci.level,
                ci_high=ci.high,
                n=int((~split.is_dev).sum()),
                seed=seed,
                unit="items",
                extra=extra,
            )
        )
    return records
