"""Stage 2 retrieval baselines: BM25 and MiniLM similarity between prompt and attribute.

Each baseline scores every (prompt, attribute) item and selects, in each (user, prompt) pair,
its ``k`` highest-scoring attributes, with ``k`` set from the people's relevance rate on a
*development* split of that round's prompts: ``k = round(r * m)`` for a pair of ``m``
attributes, ``r`` the human majority's share of relevant items on the development prompts
(halves round up; equal scores at the cut go by the items' order, a fixed arbitrary order).
Precision, recall and F1 are then measured on the remaining *evaluation* prompts only, with
bootstrap intervals that resample prompts (items of one prompt share its wording, so they are
not independent). No evaluation item ever influences a selection.

Why this rule and not a score threshold chosen to maximize F1: the human majority marks about
one attribute in five relevant, and at that prevalence the F1-maximizing cut of a weak score
marks every attribute relevant (recall 1, precision the prevalence p, F1 = 2p / (1 + p)), so
the "baseline" becomes the all-positive rule; a ``k`` tuned for F1 drifts back to the same
place. A rule that selects as many attributes as people do can say no, so its precision and
recall say something about the score. The all-positive rule is reported as its own row
(``all-positive``), on the same evaluation prompts, for what F1 gives away for free.

BM25 (``rank-bm25``'s Okapi BM25) treats each attribute as a document of the round's corpus
(every distinct attribute of the round) and the prompt as the query, so scores are comparable
across users. Tokens are lower-cased words without English stop words and without "user"
(every attribute starts "The user ..."). The embedding baseline is the cosine between the
MiniLM vectors of prompt and attribute.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from rank_bm25 import BM25Okapi
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from analysis.data.text_tokens import word_tokens
from analysis.data.vocabulary import HUMAN_MAJORITY
from analysis.provenance import Record
from analysis.settings import BaselinesConfig
from analysis.stages.selection import split_groups
from analysis.stats.baseline_scores import ALL_POSITIVE, BaselineSplit, baseline_score_records
from analysis.stats.settings import StatsSettings

BM25 = "bm25"
EMBEDDING = "minilm-embedding"
RAW_NAMES = {
    BM25: "rank-bm25 BM25Okapi",
    EMBEDDING: "all-MiniLM-L6-v2 cosine",
    ALL_POSITIVE: "every attribute marked relevant",
}

STOP_WORDS = frozenset(ENGLISH_STOP_WORDS) | {"user", "users", "s"}

BASELINE_VOTE_COLUMNS = (
    "item_id",
    "user_id",
    "prompt_id",
    "attribute_id",
    "rater",
    "rater_kind",
    "raw_rater",
    "round",
    "vote",
    "split",
    "score",
    "k",
)


def tokenize(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens without stop words (BM25's documents and queries)."""
    return word_tokens(text, drop=STOP_WORDS)


def gold_items(
    votes: pd.DataFrame, prompts_table: pd.DataFrame, attributes: pd.DataFrame
) -> pd.DataFrame:
    """Items with a human-majority label and their texts, per round (``gold`` = majority YES).

    Items whose prompt or attribute has no text are left out; their count is returned in
    ``attrs['n_without_text']`` so a record can state it.
    """
    gold = votes[votes["rater_kind"] == HUMAN_MAJORITY][
        ["item_id", "user_id", "prompt_id", "attribute_id", "round", "vote"]
    ].rename(columns={"vote": "gold"})
    texts = attributes.drop_duplicates(["attribute_id", "user_id"])[
        ["attribute_id", "user_id", "text"]
    ].rename(columns={"text": "attribute_text"})
    merged = gold.merge(
        prompts_table[["prompt_id", "text"]].rename(columns={"text": "prompt_text"}),
        on="prompt_id",
        how="inner",
    ).merge(texts, on=["attribute_id", "user_id"], how="inner")
    merged = merged.sort_values(["round", "prompt_id", "user_id", "item_id"], kind="stable")
    merged = merged.reset_index(drop=True)
    merged["gold"] = merged["gold"].astype(bool)
    merged.attrs["n_without_text"] = int(len(gold) - len(merged))
    return merged


def bm25_scores(items: pd.DataFrame, k1: float = 1.5, b: float = 0.75) -> np.ndarray:
    """BM25 score of each item's attribute for its prompt (corpus: the round's attributes)."""
    scores = np.zeros(len(items), dtype=np.float64)
    for _, rows in items.groupby("round", sort=True):
        docs = rows.drop_duplicates(["attribute_id", "user_id"])
        doc_index = {
            key: i for i, key in enumerate(zip(docs["attribute_id"], docs["user_id"], strict=True))
        }
        corpus = [tokenize(t) or ["_"] for t in docs["attribute_text"]]
        bm25 = BM25Okapi(corpus, k1=k1, b=b)
        pos = items.index.get_indexer(rows.index)
        col = np.array(
            [doc_index[k] for k in zip(rows["attribute_id"], rows["user_id"], strict=True)]
        )
        for prompt_text, idx in rows.groupby("prompt_text", sort=True).indices.items():
            all_scores = bm25.get_scores(tokenize(prompt_text))
            scores[pos[idx]] = all_scores[col[idx]]
    return scores


def embedding_scores(
    items: pd.DataFrame,
    prompt_vectors: Mapping[str, np.ndarray],
    attribute_vectors: Mapping[str, np.ndarray],
) -> np.ndarray:
    """Cosine similarity of prompt and attribute (both normalized MiniLM vectors)."""
    missing_p = sorted(set(items["prompt_id"]) - set(prompt_vectors))
    missing_a = sorted(set(items["attribute_id"]) - set(attribute_vectors))
    if missing_p or missing_a:
        raise KeyError(
            f"embedding_scores: no vector for prompt(s) {missing_p[:3]} / attribute(s) "
            f"{missing_a[:3]}; rerun rule text_embeddings"
        )
    p = np.stack([prompt_vectors[k] for k in items["prompt_id"]]).astype(np.float64)
    a = np.stack([attribute_vectors[k] for k in items["attribute_id"]]).astype(np.float64)
    return np.einsum("ij,ij->i", p, a)


def top_k_per_pair(
    scores: np.ndarray, pairs: np.ndarray, rate: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(k, selected)`` per item: in each pair, the ``k = round(rate * m)`` highest-scoring of
    its ``m`` items are selected (halves round up); equal scores at the cut go by the items'
    order."""
    frame = pd.DataFrame(
        {"pair": pairs, "neg": -np.asarray(scores, dtype=np.float64), "pos": np.arange(len(pairs))}
    )
    ordered = frame.sort_values(["pair", "neg", "pos"], kind="stable")
    rank = ordered.groupby("pair", sort=False).cumcount().to_numpy()
    size = ordered.groupby("pair", sort=False)["pos"].transform("size").to_numpy()
    where = ordered["pos"].to_numpy()
    k = np.zeros(len(pairs), dtype=np.int64)
    k[where] = np.floor(rate * size + 0.5).astype(np.int64)
    selected = np.zeros(len(pairs), dtype=bool)
    selected[where] = rank < k[where]
    return k, selected


@dataclass(frozen=True)
class BaselineEvaluation:
    """One baseline on one round: its selection rate and its votes on every item."""

    baseline: str
    round: str
    selection_rate: float
    votes: pd.DataFrame  # BASELINE_VOTE_COLUMNS
    records: list[Record]


def evaluate_baseline(
    items: pd.DataFrame,
    scores: np.ndarray | None,
    baseline: str,
    *,
    dev_fraction: float,
    seed: int,
    stats: StatsSettings,
) -> list[BaselineEvaluation]:
    """The rate on each round's dev prompts; votes on every item, scores from ``stats``.

    ``scores=None`` is the all-positive rule: every item YES, nothing chosen on dev prompts.
    """
    out: list[BaselineEvaluation] = []
    for rnd, rows in items.groupby("round", sort=True):
        pos = items.index.get_indexer(rows.index)
        prompts = sorted(rows["prompt_id"].unique())
        if len(prompts) < 2:
            continue
        dev_p, _ = split_groups(prompts, dev_fraction, seed, f"stage2.{rnd}.baselines.split")
        is_dev = rows["prompt_id"].isin(dev_p).to_numpy()
        gold = rows["gold"].to_numpy(dtype=bool)
        if not gold[is_dev].any() or not gold[~is_dev].any():
            continue
        rate = float(gold[is_dev].mean())
        if scores is None:
            sc = np.full(len(rows), np.nan)
            k = rows.groupby(["user_id", "prompt_id"])["item_id"].transform("size").to_numpy()
            pred = np.ones(len(rows), dtype=bool)
            rule = "no score: every attribute of every pair is marked relevant"
        else:
            sc = scores[pos]
            pairs = (
                rows["user_id"].astype(str) + "\x1f" + rows["prompt_id"].astype(str)
            ).to_numpy()
            k, pred = top_k_per_pair(sc, pairs, rate)
            rule = (
                "in each (user, prompt) pair the k highest-scoring attributes, "
                f"k = round({rate:.4f} x the pair's attributes), {rate:.4f} being the human "
                f"majority's relevance rate on the {len(dev_p)} development prompts"
            )
        split = BaselineSplit(
            baseline=baseline,
            method_name=RAW_NAMES[baseline],
            round=str(rnd),
            rule=rule,
            selection_rate=rate,
            pred=pred,
            gold=gold,
            is_dev=is_dev,
            user_ids=rows["user_id"].to_numpy(),
            prompt_ids=rows["prompt_id"].to_numpy(),
            n_dev_prompts=int(len(dev_p)),
            n_items_without_text=int(items.attrs.get("n_without_text", 0)),
            marks_every_item=scores is None,
        )
        records = baseline_score_records(split, stats)
        votes = pd.DataFrame(
            {
                "item_id": rows["item_id"].astype(str).to_numpy(),
                "user_id": rows["user_id"].astype(str).to_numpy(),
                "prompt_id": rows["prompt_id"].astype(str).to_numpy(),
                "attribute_id": rows["attribute_id"].astype(str).to_numpy(),
                "rater": baseline,
                "rater_kind": "baseline",
                "raw_rater": RAW_NAMES[baseline],
                "round": str(rnd),
                "vote": pred,
                "split": np.where(is_dev, "dev", "eval"),
                "score": sc,
                "k": np.asarray(k, dtype=np.int64),
            }
        )
        out.append(BaselineEvaluation(baseline, str(rnd), rate, votes, records))
    return out


def baseline_votes_frame(evaluations: list[BaselineEvaluation]) -> pd.DataFrame:
    """All baselines' votes in one table, sorted by round, rater and item."""
    if not evaluations:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in BASELINE_VOTE_COLUMNS})
    frame = pd.concat([e.votes for e in evaluations], ignore_index=True)
    return frame.sort_values(["round", "rater", "item_id"], kind="stable").reset_index(drop=True)


def baseline_step(
    votes: pd.DataFrame,
    prompts_table: pd.DataFrame,
    attributes: pd.DataFrame,
    prompt_vectors: Mapping[str, np.ndarray],
    attribute_vectors: Mapping[str, np.ndarray],
    *,
    baselines: BaselinesConfig,
    stats: StatsSettings,
) -> tuple[pd.DataFrame, list[Record]]:
    """Both baselines and the all-positive rule on every round with a human majority: their
    votes and records."""
    items = gold_items(votes, prompts_table, attributes)
    scores: dict[str, np.ndarray | None] = {
        BM25: bm25_scores(items, k1=float(baselines.bm25_k1), b=float(baselines.bm25_b)),
        EMBEDDING: embedding_scores(items, prompt_vectors, attribute_vectors),
        ALL_POSITIVE: None,
    }
    evaluations: list[BaselineEvaluation] = []
    for name, sc in scores.items():
        evaluations += evaluate_baseline(
            items,
            sc,
            name,
            dev_fraction=float(baselines.dev_fraction),
            seed=stats.seed,
            stats=stats,
        )
    records = [r for e in evaluations for r in e.records]
    return baseline_votes_frame(evaluations), records
