"""Baseline scores: point values are the evaluation prompts' P/R/F1, intervals resample prompts."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import f1_score, precision_score, recall_score

from analysis.stats.baseline_scores import (
    BaselineSplit,
    baseline_score_records,
    precision_recall_f1,
)


def _split() -> BaselineSplit:
    rng = np.random.default_rng(7)
    n = 120
    prompts = np.repeat([f"p{i}" for i in range(12)], n // 12)
    gold = rng.random(n) < 0.4
    pred = np.where(rng.random(n) < 0.7, gold, ~gold)
    is_dev = np.isin(prompts, ["p0", "p1", "p2"])
    return BaselineSplit(
        baseline="bm25",
        method_name="rank-bm25 BM25Okapi",
        round="final",
        rule="a test rule",
        selection_rate=0.2,
        pred=pred,
        gold=gold,
        is_dev=is_dev,
        prompt_ids=prompts,
        n_dev_prompts=3,
        n_items_without_text=0,
    )


def test_precision_recall_f1_match_sklearn_and_are_nan_when_undefined() -> None:
    split = _split()
    p, r, f = precision_recall_f1(split.pred, split.gold)
    assert p == pytest.approx(precision_score(split.gold, split.pred))
    assert r == pytest.approx(recall_score(split.gold, split.pred))
    assert f == pytest.approx(f1_score(split.gold, split.pred))
    assert all(np.isnan(precision_recall_f1(np.zeros(3, bool), np.zeros(3, bool))))


def test_records_score_only_evaluation_prompts_with_prompt_cluster_intervals() -> None:
    split = _split()
    recs = {
        r.key: r
        for r in baseline_score_records(
            split, n_boot=200, ci_level=0.95, ci_method="percentile", seed=3
        )
    }
    assert set(recs) == {
        f"stage2.final.{s}_vs_majority.bm25" for s in ("f1", "precision", "recall")
    }
    ev = ~split.is_dev
    f1 = recs["stage2.final.f1_vs_majority.bm25"]
    assert f1.value == pytest.approx(f1_score(split.gold[ev], split.pred[ev]))
    assert f1.n == int(ev.sum())
    assert f1.extra["n_eval_prompts"] == 9
    assert f1.ci_low is not None and f1.ci_high is not None
    assert f1.ci_low <= f1.value <= f1.ci_high
    assert "9 clusters of prompt" in f1.method
