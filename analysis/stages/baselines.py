"""Stage 2 retrieval baselines: BM25 and MiniLM similarity between prompt and attribute.

Each baseline scores every (prompt, attribute) item and turns the score into YES/NO with one
threshold per round, chosen to maximize F1 against the human majority on a *development*
split of that round's prompts. Precision, recall and F1 are then measured on the remaining
*evaluation* prompts only, with bootstrap intervals that resample prompts (items of one prompt
share its wording, so they are not independent). No evaluation item ever influences a
threshold.

BM25 (``rank-bm25``'s Okapi BM25) treats each attribute as a document of the round's corpus
(every distinct attribute of the round) and the prompt as the query, so scores are comparable
across users and one threshold means the same everywhere. Tokens are lower-cased words without
English stop words and without "user" (every attribute starts "The user ..."). The embedding
baseline is the cosine between the MiniLM vectors of prompt and attribute.
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
from analysis.seeds import SeedScheme, derive_seed
from analysis.settings import BaselinesConfig, StatsConfig
from analysis.stages.selection import split_groups
from analysis.stats.baseline_scores import BaselineSplit, baseline_score_records

BM25 = "bm25"
EMBEDDING = "minilm-embedding"
RAW_NAMES = {BM25: "rank-bm25 BM25Okapi", EMBEDDING: "all-MiniLM-L6-v2 cosine"}

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
    "threshold",
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


def choose_threshold(scores: np.ndarray, gold: np.ndarray) -> float:
    """The cut maximizing F1 of ``score >= t`` on these (development) items.

    Candidates are the distinct scores; the chosen cut sits halfway to the next lower score,
    so an unseen score equal to a dev score falls on the same side. Ties in F1 go to the
    higher threshold (fewer YES votes).
    """
    scores = np.asarray(scores, dtype=np.float64)
    gold = np.asarray(gold, dtype=bool)
    if not gold.any():
        raise ValueError("choose_threshold: the development items have no positive label")
    order = np.argsort(-scores, kind="stable")
    s, g = scores[order], gold[order]
    tp = np.cumsum(g)
    k = np.arange(1, len(s) + 1)
    # only cut after the last of a run of equal scores
    last = np.r_[s[1:] != s[:-1], True]
    f1 = np.where(last, 2 * tp / (k + g.sum()), -1.0)
    best = int(np.argmax(f1))  # first maximum = highest threshold among ties
    if best + 1 < len(s):
        return float((s[best] + s[best + 1]) / 2)
    return float(s[best])


@dataclass(frozen=True)
class BaselineEvaluation:
    """One baseline on one round: the threshold and its votes on every item."""

    baseline: str
    round: str
    threshold: float
    votes: pd.DataFrame  # BASELINE_VOTE_COLUMNS
    records: list[Record]


def evaluate_baseline(
    items: pd.DataFrame,
    scores: np.ndarray,
    baseline: str,
    *,
    dev_fraction: float,
    seed: int,
    n_boot: int,
    ci_level: float,
    ci_method: str,
) -> list[BaselineEvaluation]:
    """Threshold on each round's dev prompts; votes on every item, scores from ``stats``."""
    out: list[BaselineEvaluation] = []
    for rnd, rows in items.groupby("round", sort=True):
        pos = items.index.get_indexer(rows.index)
        sc = scores[pos]
        prompts = sorted(rows["prompt_id"].unique())
        if len(prompts) < 2:
            continue
        dev_p, _ = split_groups(prompts, dev_fraction, seed, f"stage2.{rnd}.baselines.split")
        is_dev = rows["prompt_id"].isin(dev_p).to_numpy()
        gold = rows["gold"].to_numpy(dtype=bool)
        if not gold[is_dev].any() or not gold[~is_dev].any():
            continue
        t = choose_threshold(sc[is_dev], gold[is_dev])
        pred = sc >= t
        boot_seed = derive_seed(seed, f"stage2.{rnd}.baselines.bootstrap", scheme=SeedScheme.stages)
        split = BaselineSplit(
            baseline=baseline,
            method_name=RAW_NAMES[baseline],
            round=str(rnd),
            threshold=t,
            pred=pred,
            gold=gold,
            is_dev=is_dev,
            prompt_ids=rows["prompt_id"].to_numpy(),
            n_dev_prompts=int(len(dev_p)),
            n_items_without_text=int(items.attrs.get("n_without_text", 0)),
        )
        records = baseline_score_records(
            split, n_boot=n_boot, ci_level=ci_level, ci_method=ci_method, seed=boot_seed
        )
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
                "threshold": t,
            }
        )
        out.append(BaselineEvaluation(baseline, str(rnd), t, votes, records))
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
    stats: StatsConfig,
    seed: int,
) -> tuple[pd.DataFrame, list[Record]]:
    """Both baselines on every round with a human majority: their votes and records."""
    items = gold_items(votes, prompts_table, attributes)
    scores = {
        BM25: bm25_scores(items, k1=float(baselines.bm25_k1), b=float(baselines.bm25_b)),
        EMBEDDING: embedding_scores(items, prompt_vectors, attribute_vectors),
    }
    evaluations: list[BaselineEvaluation] = []
    for name, sc in scores.items():
        evaluations += evaluate_baseline(
            items,
            sc,
            name,
            dev_fraction=float(baselines.dev_fraction),
            seed=seed,
            n_boot=stats.n_boot,
            ci_level=float(stats.ci_level),
            ci_method=str(stats.ci_method),
        )
    records = [r for e in evaluations for r in e.records]
    return baseline_votes_frame(evaluations), records
