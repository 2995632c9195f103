"""Explicit-mention detection: does a response refer to an attribute of the user outright?

The study finds that LLM judges reward responses that say "Given your interest in X, ..."
while humans barely react, and that how often a model mentions attributes as a generator
predicts its bias as a judge. This detector is local and cheap: a response mentions an
attribute when one of its *second-person* sentences (you / your / yourself ...) either
contains most of the attribute's content words (light stemming) or is close to it in MiniLM
space. Sentences without a second-person word only share a topic; they do not address the
person's trait. Both thresholds live in config and were chosen on the calibration half of a
project-written, hand-checked sample (:mod:`analysis.stages.mention_sample`); the other half
measures its accuracy.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.data.vocabulary import GENERIC, PERSONALIZED
from analysis.provenance import Record
from analysis.stages.baselines import tokenize
from analysis.stages.mention_sample import CALIBRATION, CHECK, MentionCase
from analysis.stats.records import Statistic, exact_share, make_records
from analysis.stats.resampling import design_info
from analysis.stats.settings import StatsSettings

METHOD = "second-person sentence with attribute content-word overlap or MiniLM cosine"
METHOD_ID = "lexical-minilm-v1"

_SECOND_PERSON = re.compile(
    r"\b(you|your|yours|yourself|yourselves|you're|you've|you'll|you'd)\b", re.IGNORECASE
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_LEADING_SUBJECT = re.compile(r"^\s*(the\s+)?user('s)?\s+", re.IGNORECASE)
_SUFFIXES = ("ing", "ed", "es", "er", "s")

MENTION_COLUMNS = (
    "response_id",
    "attribute_id",
    "mentioned",
    "method",
    "lexical_score",
    "embedding_score",
)


def stem(word: str) -> str:
    """A light suffix stripper: 'keeps', 'keeping' -> 'keep'; short words stay as they are."""
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_stems(text: str) -> set[str]:
    return {stem(t) for t in tokenize(text)}


def attribute_core(attribute: str) -> str:
    """The attribute without its "The user" subject: what a response would have to say."""
    return _LEADING_SUBJECT.sub("", attribute.strip()).rstrip(".")


def second_person_sentences(response: str) -> list[str]:
    """Sentences of a response that address the reader."""
    parts = (s.strip() for s in _SENTENCE_END.split(response or ""))
    return [s for s in parts if s and _SECOND_PERSON.search(s)]


@dataclass(frozen=True)
class MentionScores:
    """Best lexical and embedding score over a response's second-person sentences."""

    lexical: float
    embedding: float

    def mentioned(self, lexical_threshold: float, embedding_threshold: float) -> bool:
        return self.lexical >= lexical_threshold or self.embedding >= embedding_threshold


def score_pairs(attributes: Sequence[str], responses: Sequence[str]) -> list[MentionScores]:
    """Scores of each (attribute, response) pair, all sentences embedded in one batch."""
    from analysis.stages.embeddings import default_embedder

    if len(attributes) != len(responses):
        raise ValueError("score_pairs: attributes and responses differ in length")
    cores = [attribute_core(a) for a in attributes]
    sentences = [second_person_sentences(r) for r in responses]
    embedder = default_embedder()
    flat = sorted(set(itertools.chain.from_iterable(sentences)))
    sent_vecs = dict(zip(flat, embedder.encode(flat), strict=True)) if flat else {}
    core_vecs = dict(zip(sorted(set(cores)), embedder.encode(sorted(set(cores))), strict=True))
    out = []
    for core, sents in zip(cores, sentences, strict=True):
        stems = content_stems(core)
        if not sents or not stems:
            out.append(MentionScores(0.0, 0.0))
            continue
        lexical = max(len(stems & content_stems(s)) / len(stems) for s in sents)
        vecs = np.stack([sent_vecs[s] for s in sents])
        embedding = float(np.max(vecs @ core_vecs[core]))
        out.append(MentionScores(float(lexical), embedding))
    return out


def detect(
    attributes: Sequence[str],
    responses: Sequence[str],
    lexical_threshold: float,
    embedding_threshold: float,
) -> tuple[np.ndarray, list[MentionScores]]:
    """``mentioned`` per pair and the scores behind each decision."""
    scores = score_pairs(attributes, responses)
    flags = np.array([s.mentioned(lexical_threshold, embedding_threshold) for s in scores], bool)
    return flags, scores


def calibrate(
    cases: Sequence[MentionCase] = CALIBRATION,
    lexical_grid: Sequence[float] = tuple(np.round(np.arange(0.3, 1.01, 0.1), 2)),
    embedding_grid: Sequence[float] = tuple(np.round(np.arange(0.40, 0.801, 0.02), 2)),
) -> tuple[float, float, float]:
    """``(lexical_threshold, embedding_threshold, accuracy)`` maximizing accuracy on ``cases``.

    Ties go to the strictest pair (highest thresholds): a mention claimed is a finding.
    """
    scores = score_pairs([c.attribute for c in cases], [c.response for c in cases])
    lex = np.array([s.lexical for s in scores])
    emb = np.array([s.embedding for s in scores])
    gold = np.array([c.mentioned for c in cases])
    best = (-1.0, 0.0, 0.0)
    for lt in sorted(lexical_grid, reverse=True):
        for et in sorted(embedding_grid, reverse=True):
            acc = float(np.mean(((lex >= lt) | (emb >= et)) == gold))
            if acc > best[0]:
                best = (acc, float(lt), float(et))
    return best[1], best[2], best[0]


def sample_accuracy(
    cases: Sequence[MentionCase], lexical_threshold: float, embedding_threshold: float
) -> float:
    """Share of ``cases`` the detector labels as the hand check did."""
    flags, _ = detect(
        [c.attribute for c in cases],
        [c.response for c in cases],
        lexical_threshold,
        embedding_threshold,
    )
    return float(np.mean(flags == np.array([c.mentioned for c in cases])))


def mention_slots(
    responses: pd.DataFrame, relevant: pd.DataFrame, ratings: pd.DataFrame
) -> pd.DataFrame:
    """(response, attribute) pairs to check: each generic/personalized response x its slots.

    Slots are the human-majority relevant attributes of the response's (user, prompt) plus
    any attribute rated for that (user, prompt, generator).
    """
    gen = responses[responses["condition"].isin([GENERIC, PERSONALIZED])]
    by_pair = gen.merge(relevant, on=["user_id", "prompt_id"], how="inner")
    rated = ratings[["user_id", "prompt_id", "generator", "attribute_id"]].drop_duplicates()
    by_rating = gen.merge(rated, on=["user_id", "prompt_id", "generator"], how="inner")
    cols = ["response_id", "user_id", "prompt_id", "generator", "condition", "attribute_id"]
    slots = pd.concat([by_pair[cols], by_rating[cols]], ignore_index=True).drop_duplicates(
        ["response_id", "attribute_id"]
    )
    return slots.sort_values(["response_id", "attribute_id"], kind="stable").reset_index(drop=True)


def mention_table(
    slots: pd.DataFrame,
    responses: pd.DataFrame,
    attributes: pd.DataFrame,
    lexical_threshold: float,
    embedding_threshold: float,
) -> pd.DataFrame:
    """``MENTION_COLUMNS`` for every slot."""
    resp_text = dict(zip(responses["response_id"], responses["text"], strict=True))
    att_text = {
        (a, u): t
        for a, u, t in zip(
            attributes["attribute_id"], attributes["user_id"], attributes["text"], strict=True
        )
    }
    atts = [att_text[(a, u)] for a, u in zip(slots["attribute_id"], slots["user_id"], strict=True)]
    texts = [str(resp_text[r]) for r in slots["response_id"]]
    flags, scores = detect(atts, texts, lexical_threshold, embedding_threshold)
    return pd.DataFrame(
        {
            "response_id": slots["response_id"].astype(str).to_numpy(),
            "attribute_id": slots["attribute_id"].astype(str).to_numpy(),
            "mentioned": flags,
            "method": METHOD_ID,
            "lexical_score": np.array([s.lexical for s in scores], dtype=np.float64),
            "embedding_score": np.array([s.embedding for s in scores], dtype=np.float64),
        }
    )


def detector_records(
    lexical_threshold: float, embedding_threshold: float, settings: StatsSettings
) -> list[Record]:
    """Accuracy, sensitivity and specificity on the held-back check half, exact intervals.

    Each is a share of independent hand-checked cases (design ``check_cases``): of all
    cases, of the cases that mention the attribute, of those that do not. With a few dozen
    cases the interval is Clopper-Pearson's (:func:`analysis.stats.records.exact_share`).
    The calibration half's accuracy is in ``extra`` (the thresholds were chosen on it).
    """
    flags, _ = detect(
        [c.attribute for c in CHECK],
        [c.response for c in CHECK],
        lexical_threshold,
        embedding_threshold,
    )
    gold = np.array([c.mentioned for c in CHECK])
    calib = sample_accuracy(CALIBRATION, lexical_threshold, embedding_threshold)
    detector = (
        f"explicit-mention detector ({METHOD}; lexical >= {lexical_threshold}, "
        f"cosine >= {embedding_threshold}) against hand labels of {len(CHECK)} "
        "project-written check cases not used to choose the thresholds"
    )
    extra = {
        "calibration_accuracy": calib,
        "n_calibration": len(CALIBRATION),
        "lexical_threshold": lexical_threshold,
        "embedding_threshold": embedding_threshold,
        "sample": "analysis/stages/mention_sample.py (project-written, not real data)",
    }
    shares = {
        "detector_accuracy": (flags == gold, "share of all check cases labelled as by hand"),
        "detector_sensitivity": (
            flags[gold],
            "share of the check cases that mention the attribute which it flags",
        ),
        "detector_specificity": (
            ~flags[~gold],
            "share of the check cases that do not mention the attribute which it leaves",
        ),
    }
    statistics = [
        Statistic(
            key=f"stage3.mentions.{name}",
            estimate=exact_share(int(hits.sum()), int(hits.size), settings.ci_level),
            fmt=".0%",
            what=f"{what}: {detector}",
            code="analysis.stages.mentions:detector_records",
            n=int(hits.size),
            extra={**extra, "hits": int(hits.sum())},
            design=design_info(settings, "check_cases", {"cases": int(hits.size)}),
        )
        for name, (hits, what) in shares.items()
        if hits.size
    ]
    return make_records(statistics, settings)
