"""Baseline thresholds come from development prompts only; BM25 and MiniLM are sane."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.stages import baselines
from analysis.stages.baselines import (
    BM25,
    EMBEDDING,
    bm25_scores,
    choose_threshold,
    evaluate_baseline,
    gold_items,
    tokenize,
)
from analysis.stages.selection import split_groups
from analysis.stats.baseline_scores import precision_recall_f1


def test_choose_threshold_maximizes_f1() -> None:
    scores = np.array([0.9, 0.8, 0.7, 0.4, 0.2, 0.1])
    gold = np.array([True, True, False, True, False, False])
    t = choose_threshold(scores, gold)
    # cut after 0.4 -> tp 3, fp 1: F1 = 6/7, the best; halfway to the next score
    assert t == pytest.approx(0.3)
    assert precision_recall_f1(scores >= t, gold)[2] == pytest.approx(6 / 7)
    with pytest.raises(ValueError):
        choose_threshold(scores, np.zeros(6, bool))


def test_ties_are_never_split() -> None:
    t = choose_threshold(np.array([0.5, 0.5, 0.5, 0.1]), np.array([True, False, False, False]))
    assert t == pytest.approx(0.3)  # all three 0.5s go together


def _synthetic_items(n_prompts: int = 10, per_prompt: int = 6, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(n_prompts):
        for k in range(per_prompt):
            rows.append(
                {
                    "item_id": f"i{p}-{k}",
                    "user_id": f"u{k}",
                    "prompt_id": f"p{p:02d}",
                    "attribute_id": f"a{k}",
                    "round": "final",
                    "gold": bool(rng.random() < 0.3),
                }
            )
    return pd.DataFrame(rows)


def test_threshold_ignores_evaluation_labels() -> None:
    items = _synthetic_items()
    scores = np.random.default_rng(1).random(len(items)) + items["gold"].to_numpy() * 0.3
    kw = dict(dev_fraction=0.3, seed=11, n_boot=50, ci_level=0.95, ci_method="percentile")
    base = evaluate_baseline(items, scores, BM25, **kw)[0]
    dev_prompts, _ = split_groups(
        sorted(items["prompt_id"].unique()), 0.3, 11, "stage2.final.baselines.split"
    )
    # flip every evaluation label (keeping at least one positive): the threshold must not move
    flipped = items.copy()
    is_eval = ~flipped["prompt_id"].isin(dev_prompts)
    flipped.loc[is_eval, "gold"] = ~flipped.loc[is_eval, "gold"]
    again = evaluate_baseline(flipped, scores, BM25, **kw)[0]
    assert again.threshold == base.threshold
    # ... while changing a development label can move it
    assert set(base.votes.loc[base.votes["split"] == "dev", "prompt_id"]) == set(dev_prompts)
    dev_only = items[items["prompt_id"].isin(dev_prompts)]
    assert base.threshold == choose_threshold(scores[dev_only.index], dev_only["gold"].to_numpy())


def test_records_use_evaluation_items_only_with_prompt_cluster_ci() -> None:
    items = _synthetic_items()
    scores = np.random.default_rng(2).random(len(items)) + items["gold"].to_numpy() * 0.5
    ev = evaluate_baseline(
        items,
        scores,
        EMBEDDING,
        dev_fraction=0.3,
        seed=11,
        n_boot=200,
        ci_level=0.95,
        ci_method="percentile",
    )[0]
    recs = {r.key: r for r in ev.records}
    assert set(recs) == {
        f"stage2.final.{s}_vs_majority.minilm-embedding" for s in ("f1", "precision", "recall")
    }
    f1 = recs["stage2.final.f1_vs_majority.minilm-embedding"]
    eval_votes = ev.votes[ev.votes["split"] == "eval"]
    gold = items.set_index("item_id").loc[eval_votes["item_id"], "gold"].to_numpy()
    assert f1.value == pytest.approx(precision_recall_f1(eval_votes["vote"].to_numpy(), gold)[2])
    assert f1.n == len(eval_votes) and f1.ci_low <= f1.value <= f1.ci_high
    assert "clusters of prompt" in f1.method


def test_bm25_prefers_attributes_sharing_words_with_the_prompt() -> None:
    assert tokenize("The user keeps BEES.") == ["keeps", "bees"]
    items = pd.DataFrame(
        {
            "round": "final",
            "user_id": "u",
            "prompt_id": "p",
            "attribute_id": ["a1", "a2", "a3"],
            "prompt_text": "Which flowers do bees like in a garden?",
            "attribute_text": [
                "The user keeps bees.",
                "The user likes jazz.",
                "The user owns a garden.",
            ],
        }
    )
    s = bm25_scores(items)
    assert s[0] > s[1] and s[2] > s[1] and s[1] == 0.0


def test_embedding_baseline_ranks_related_above_unrelated(world: dict[str, pd.DataFrame]) -> None:
    from analysis.stages.embeddings import embedding_table

    items = gold_items(world["relevance_votes"], world["prompts"], world["attributes"])
    assert len(items) == 18 and items.attrs["n_without_text"] == 0
    pv = embedding_table(world["prompts"]["prompt_id"], world["prompts"]["text"])
    av = embedding_table(world["attributes"]["attribute_id"], world["attributes"]["text"])
    scores = baselines.embedding_scores(
        items,
        dict(zip(pv["id"], pv["embedding"], strict=True)),
        dict(zip(av["id"], av["embedding"], strict=True)),
    )
    row = {
        (a, p): s
        for a, p, s in zip(items["attribute_text"], items["prompt_text"], scores, strict=True)
    }
    # a dinner recipe: being vegan matters more than writing poetry
    recipe = "Suggest a dinner recipe."
    assert row[("The user is vegan.", recipe)] > row[("The user writes poetry.", recipe)]
