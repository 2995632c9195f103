"""Baselines select as many attributes per pair as people do on development prompts; the
all-positive rule is its own row; BM25 and MiniLM are sane."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score

from analysis.stages import baselines
from analysis.stages.baselines import (
    ALL_POSITIVE,
    BM25,
    EMBEDDING,
    bm25_scores,
    evaluate_baseline,
    gold_items,
    tokenize,
    top_k_per_pair,
)
from analysis.stages.selection import split_groups
from tests.settings_defaults import stats_settings

KW = dict(dev_fraction=0.3, seed=11, stats=stats_settings(n_boot=50))


def test_top_k_takes_the_people_s_share_of_each_pair() -> None:
    pairs = np.array(["a"] * 5 + ["b"] * 10)
    scores = np.r_[[0.1, 0.9, 0.3, 0.3, 0.2], np.arange(10) / 10]
    k, selected = top_k_per_pair(scores, pairs, 0.25)
    # round(1.25) = 1 of five, round(2.5) = 3 of ten (halves up)
    assert k.tolist() == [1] * 5 + [3] * 10
    assert selected[:5].tolist() == [False, True, False, False, False]
    assert selected[5:].tolist() == [False] * 7 + [True] * 3
    # equal scores at the cut go by the items' order
    _, tied = top_k_per_pair(np.array([0.5, 0.5, 0.5, 0.1]), np.array(["p"] * 4), 0.5)
    assert tied.tolist() == [True, True, False, False]


def _synthetic_items(n_prompts: int = 10, per_prompt: int = 6, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(n_prompts):
        for k in range(per_prompt):
            rows.append(
                {
                    "item_id": f"i{p}-{k}",
                    "user_id": f"u{k // 3}",
                    "prompt_id": f"p{p:02d}",
                    "attribute_id": f"a{k}",
                    "round": "final",
                    "gold": bool(rng.random() < 0.3),
                }
            )
    return pd.DataFrame(rows)


def test_the_selection_ignores_evaluation_labels() -> None:
    items = _synthetic_items()
    scores = np.random.default_rng(1).random(len(items)) + items["gold"].to_numpy() * 0.3
    base = evaluate_baseline(items, scores, BM25, **KW)[0]
    dev_prompts, _ = split_groups(
        sorted(items["prompt_id"].unique()), 0.3, 11, "stage2.final.baselines.split"
    )
    dev = items["prompt_id"].isin(dev_prompts)
    assert base.selection_rate == pytest.approx(items.loc[dev, "gold"].mean())
    # flip every evaluation label: the votes must not move
    flipped = items.copy()
    flipped.loc[~dev, "gold"] = ~flipped.loc[~dev, "gold"]
    again = evaluate_baseline(flipped, scores, BM25, **KW)[0]
    assert again.votes["vote"].tolist() == base.votes["vote"].tolist()
    assert set(base.votes.loc[base.votes["split"] == "dev", "prompt_id"]) == set(dev_prompts)
    # each pair gets round(rate x its items), here three items per (user, prompt) pair
    k = int(np.floor(base.selection_rate * 3 + 0.5))
    per_pair = base.votes.groupby(["user_id", "prompt_id"])["vote"].sum()
    assert (per_pair == k).all() and (base.votes["k"] == k).all()


def test_the_rule_can_say_no_where_an_f1_cut_marks_everything() -> None:
    """At a prevalence of about one in five, a weak score's F1-maximizing cut marks every item
    (F1 = 2p / (1 + p)); the top-k rule selects the people's share and keeps recall below one.
    The all-positive rule is its own row: recall 1, precision the prevalence."""
    items = _synthetic_items(n_prompts=20, per_prompt=10, seed=3)
    items["gold"] = np.random.default_rng(4).random(len(items)) < 0.2
    scores = np.random.default_rng(5).random(len(items))  # no signal at all
    top_k = evaluate_baseline(items, scores, EMBEDDING, **KW)[0]
    assert top_k.votes["vote"].mean() < 0.5
    everything = evaluate_baseline(items, None, ALL_POSITIVE, **KW)[0]
    assert everything.votes["vote"].all()
    recs = {r.key: r for r in everything.records}
    ev = everything.votes["split"] == "eval"
    p = items.set_index("item_id").loc[everything.votes.loc[ev, "item_id"], "gold"].mean()
    assert recs["stage2.final.recall_vs_majority.all-positive"].value == 1.0
    assert recs["stage2.final.precision_vs_majority.all-positive"].value == pytest.approx(p)
    assert recs["stage2.final.f1_vs_majority.all-positive"].value == pytest.approx(2 * p / (1 + p))
    assert (
        "every attribute of every pair" in recs["stage2.final.f1_vs_majority.all-positive"].method
    )


def test_records_use_evaluation_items_only_with_prompt_cluster_ci() -> None:
    items = _synthetic_items()
    scores = np.random.default_rng(2).random(len(items)) + items["gold"].to_numpy() * 0.5
    ev = evaluate_baseline(
        items,
        scores,
        EMBEDDING,
        dev_fraction=0.3,
        seed=11,
        stats=stats_settings(n_boot=200),
    )[0]
    recs = {r.key: r for r in ev.records}
    assert set(recs) == {
        f"stage2.final.{s}_vs_majority.minilm-embedding" for s in ("f1", "precision", "recall")
    }
    f1 = recs["stage2.final.f1_vs_majority.minilm-embedding"]
    eval_votes = ev.votes[ev.votes["split"] == "eval"]
    gold = items.set_index("item_id").loc[eval_votes["item_id"], "gold"].to_numpy()
    assert f1.value == pytest.approx(f1_score(gold, eval_votes["vote"].to_numpy(dtype=bool)))
    assert f1.n == len(eval_votes) and f1.ci_low <= f1.value <= f1.ci_high
    assert "design relevance_items:" in f1.method


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
