"""Baseline scores: the evaluation prompts' P/R/F1, with the stage-2 design's intervals."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from sklearn.metrics import f1_score

from analysis.stats.baseline_scores import BaselineSplit, baseline_score_records
from tests.settings_defaults import stats_settings


def _split() -> BaselineSplit:
    rng = np.random.default_rng(7)
    n = 120
    prompts = np.repeat([f"p{i}" for i in range(12)], n // 12)
    users = np.tile([f"u{i}" for i in range(10)], n // 10)
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
        user_ids=users,
        prompt_ids=prompts,
        n_dev_prompts=3,
        n_items_without_text=0,
    )


def test_records_score_only_evaluation_prompts_with_the_stage2_design() -> None:
    split = _split()
    recs = {r.key: r for r in baseline_score_records(split, stats_settings(n_boot=200, seed=3))}
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
    # the evaluation items' users and prompts, crossed (prompts: 9, a jackknife)
    assert "design relevance_items: users (10) x prompts (9) crossed" in f1.method
    one_way = baseline_score_records(split, stats_settings(n_boot=200, design="one_way"))
    assert "prompts (9) resampled alone" in one_way[0].method


def test_the_all_positive_rule_s_recall_is_one_by_construction_without_an_interval() -> None:
    """Its recall is not estimated: no Clopper-Pearson interval at 1, the method says why;
    its precision and F1 are estimates as any rule's are."""
    split = _split()
    every = replace(
        split, baseline="all-positive", pred=np.ones_like(split.pred), marks_every_item=True
    )
    recs = {r.key: r for r in baseline_score_records(every, stats_settings(n_boot=200, seed=3))}
    recall = recs["stage2.final.recall_vs_majority.all-positive"]
    assert recall.value == 1.0 and recall.ci_low is None and recall.ci_high is None
    assert recall.extra["by_construction"] is True and "exact" not in recall.extra
    assert recall.method.endswith(
        "not estimated: the rule marks every item relevant, so it misses none of the items "
        "the majority marks relevant: its recall is 1 on any items, so it has no sampling "
        "error and no interval"
    )
    assert "Clopper" not in recall.method and "design" not in recall.method
    precision = recs["stage2.final.precision_vs_majority.all-positive"]
    assert precision.ci_low is not None and precision.ci_low < precision.value
    # a rule that happens to find every relevant item on these items is still an estimate
    lucky = replace(split, pred=split.gold | split.pred)
    recs = {r.key: r for r in baseline_score_records(lucky, stats_settings(n_boot=200, seed=3))}
    estimated = recs["stage2.final.recall_vs_majority.bm25"]
    assert estimated.value == 1.0 and estimated.extra.get("exact") is True
    assert estimated.ci_low is not None and estimated.ci_low < 1.0
