"""Feature matrices for the three trained interventions.

Each learner sees the same kind of evidence a careful reader would: what the attribute says
and how (hedges, sweeping wording, length), what supports it (its reason, how many
conversations it was merged from, whether its words occur in the user's own turns), and how
it relates to the prompt or to the two responses (MiniLM cosine similarities and elementwise
products). Embeddings come from rule ``text_embeddings`` as tables ``id, embedding``; the
functions here only look rows up, so the same code runs on the workflow's embeddings and on
embeddings a test computes itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.data.text_tokens import word_tokens

#: Words that soften a claim; a hedged attribute is a guess the extractor itself doubted.
HEDGE_WORDS: frozenset[str] = frozenset(
    {
        "may",
        "might",
        "possibly",
        "possible",
        "likely",
        "perhaps",
        "probably",
        "maybe",
        "seems",
        "seem",
        "appears",
        "appear",
        "could",
        "suggests",
        "suggest",
        "suggesting",
        "potentially",
        "presumably",
        "somewhat",
        "unclear",
    }
)

#: Words that turn one request into a trait ("is learning French" from one translation);
#: the study's most common failure among flagged attributes (entry
#: ``flagged_overgeneralization`` of ``config/study/published.yaml``).
OVERGENERALIZATION_WORDS: frozenset[str] = frozenset(
    {
        "always",
        "generally",
        "usually",
        "often",
        "regularly",
        "frequently",
        "constantly",
        "typically",
        "passionate",
        "enthusiast",
        "enthusiastic",
        "avid",
        "dedicated",
        "devoted",
        "expert",
        "professional",
        "experienced",
        "deeply",
        "loves",
        "fluent",
        "learning",
        "studying",
        "career",
        "lifestyle",
        "identity",
    }
)

#: Evidence that rests on a single request rather than a pattern.
SINGLE_INSTANCE_WORDS: frozenset[str] = frozenset(
    {"asked", "asks", "requested", "request", "once", "single", "specific", "translate"}
)

#: Phrases that signal the conversation was a task about someone or something else (a
#: fictional cover letter is not the user's CV): the study's task-context confusion.
TASK_CONTEXT_PATTERN = re.compile(
    r"\b(cover letter|story|fiction(?:al)?|character|role[- ]?play|essay|draft|pretend|"
    r"hypothetical|scenario|template|sample|on behalf|for (?:a|his|her|their) )",
)

#: Phrases with which a response addresses the user's profile outright.
ADDRESSING_PATTERN = re.compile(
    r"\b(given your|since you|as you (?:mentioned|said|noted)|you mentioned|your interest|"
    r"as someone who|because you|as a fellow|based on your|considering your|for someone like you)"
)

STOPWORDS: frozenset[str] = frozenset(
    (
        "a an the and or but if of to in on at by for with from as is are was were be been being "
        "this that these those it its their they them he she his her we our you your i me my "
        "user users who whom which what when where how why has have had do does did not no so "
        "such than then there here about into over under up down out very also just more most "
        "some any all each other can will would should shall"
    ).split()
)


class FeatureError(ValueError):
    """An input table lacks a row or column the features need; the message names it."""


def tokens(text: str | None) -> list[str]:
    """Lower-case word tokens (apostrophes kept); ``None`` (a missing reason) has none."""
    return word_tokens(text, keep_apostrophes=True)


def content_words(text: str | None) -> set[str]:
    """Tokens that carry meaning: no stopwords, no one-letter tokens."""
    return set(word_tokens(text, keep_apostrophes=True, drop=STOPWORDS, min_length=2))


def count_in(words: Iterable[str], vocabulary: frozenset[str]) -> int:
    return sum(1 for w in words if w in vocabulary)


@dataclass(frozen=True)
class FeatureMatrix:
    """Rows aligned with ``ids``; ``names`` label the columns (for inspection and tests)."""

    ids: np.ndarray
    X: np.ndarray
    names: list[str]

    def __post_init__(self) -> None:
        if self.X.shape != (len(self.ids), len(self.names)):
            raise FeatureError(
                f"feature matrix shape {self.X.shape} does not match "
                f"{len(self.ids)} ids x {len(self.names)} names"
            )


class Embeddings:
    """Unit-normalized sentence embeddings looked up by id.

    ``kind`` names the source (``attributes``, ``reasons``, ``prompts``, ``responses``) so a
    missing id is reported as ``embeddings/<kind>.parquet lacks id ...``.
    """

    def __init__(self, ids: Sequence[str], matrix: np.ndarray, kind: str) -> None:
        matrix = np.asarray(matrix, dtype=np.float64)
        if matrix.ndim != 2 or matrix.shape[0] != len(ids):
            raise FeatureError(f"embeddings/{kind}: {len(ids)} ids but matrix {matrix.shape}")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        self.kind = kind
        self.matrix = matrix / norms
        self.index = pd.Index([str(i) for i in ids])
        if self.index.has_duplicates:
            dup = self.index[self.index.duplicated()][0]
            raise FeatureError(f"embeddings/{kind}.parquet: id {dup!r} appears twice")

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, kind: str) -> Embeddings:
        """Build from the ``text_embeddings`` rule's table (columns ``id``, ``embedding``)."""
        for col in ("id", "embedding"):
            if col not in frame.columns:
                raise FeatureError(f"embeddings/{kind}.parquet: missing column {col!r}")
        if len(frame) == 0:  # a data set without such texts: any lookup names the table
            return cls([], np.zeros((0, 0)), kind)
        matrix = np.vstack([np.asarray(v, dtype=np.float64) for v in frame["embedding"]])
        return cls(frame["id"].astype(str).tolist(), matrix, kind)

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def positions(self, ids: Iterable[str]) -> np.ndarray:
        """Row positions of ``ids``; an unknown id is an error naming the table and the id."""
        keys = pd.Index([str(i) for i in ids])
        pos = self.index.get_indexer(keys)
        if (pos < 0).any():
            missing = keys[pos < 0]
            raise FeatureError(
                f"embeddings/{self.kind}.parquet lacks {len(missing)} id(s), e.g. {missing[0]!r}"
            )
        return pos

    def lookup(self, ids: Iterable[str]) -> np.ndarray:
        """Rows for ``ids`` in order (see :meth:`positions`)."""
        return self.matrix[self.positions(ids)]


#: rows of embedding features computed at once (bounds the float64 temporaries)
_ROWS_PER_CHUNK = 20_000


def row_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of matching rows of two unit-normalized matrices."""
    return np.einsum("ij,ij->i", a, b)


def _require(frame: pd.DataFrame, columns: Iterable[str], table: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise FeatureError(f"{table}: missing column(s) {missing}")


def _by_id(frame: pd.DataFrame, id_col: str) -> pd.DataFrame:
    """One row per id (the first), indexed by the id as a string."""
    out = frame.assign(**{id_col: frame[id_col].astype(str)}).drop_duplicates(id_col)
    return out.set_index(id_col, drop=False)


def _text_signals(texts: Sequence[str | None], prefix: str) -> tuple[np.ndarray, list[str]]:
    """Length, hedges, sweeping words, single-instance and task-context cues of each text."""
    toks = [tokens(t) for t in texts]
    lowered = ["" if t is None else str(t).lower() for t in texts]
    cols = np.column_stack(
        [
            np.log1p([len(t) for t in toks]),
            [count_in(t, HEDGE_WORDS) for t in toks],
            [count_in(t, OVERGENERALIZATION_WORDS) for t in toks],
            [count_in(t, SINGLE_INSTANCE_WORDS) for t in toks],
            [len(TASK_CONTEXT_PATTERN.findall(t)) for t in lowered],
        ]
    ).astype(np.float64)
    names = [
        f"{prefix}_log_words",
        f"{prefix}_hedges",
        f"{prefix}_overgeneralization_cues",
        f"{prefix}_single_instance_cues",
        f"{prefix}_task_context_cues",
    ]
    return cols, names


def _confidence(values: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Confidence, missing values imputed at 0.5, plus a missing flag (real data has gaps)."""
    conf = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
    missing = np.isnan(conf)
    conf = np.where(missing, 0.5, conf)
    return np.column_stack([conf, missing.astype(np.float64)]), [
        "confidence",
        "confidence_missing",
    ]


def evidence_overlap(
    attributes: pd.DataFrame, conversations: pd.DataFrame | None
) -> tuple[np.ndarray, np.ndarray]:
    """Share of an attribute's content words found in its user's own turns, and turn count.

    An attribute whose words never occur in what the user wrote is more often unsupported;
    users with no conversation text (the real snapshot's WildChat users) get 0 and 0.
    """
    n = len(attributes)
    if conversations is None or len(conversations) == 0:
        return np.zeros(n), np.zeros(n)
    _require(conversations, ["user_id", "role", "text"], "tables/conversations.parquet")
    user_turns = conversations[conversations["role"] == "user"]
    vocab: dict[str, set[str]] = {}
    n_turns: dict[str, int] = {}
    for uid, texts in user_turns.groupby("user_id", sort=True)["text"]:
        words: set[str] = set()
        for t in texts:
            words |= content_words(t)
        vocab[str(uid)] = words
        n_turns[str(uid)] = len(texts)
    share = np.zeros(n)
    turns = np.zeros(n)
    for i, (uid, text) in enumerate(
        zip(attributes["user_id"].astype(str), attributes["text"], strict=True)
    ):
        words = content_words(text)
        if words and uid in vocab:
            share[i] = len(words & vocab[uid]) / len(words)
        turns[i] = n_turns.get(uid, 0)
    return share, np.log1p(turns)


def verifier_features(
    attributes: pd.DataFrame,
    conversations: pd.DataFrame | None = None,
    attribute_embeddings: Embeddings | None = None,
    reason_embeddings: Embeddings | None = None,
) -> FeatureMatrix:
    """Stage-1 features of each attribute: text signals, support, and optional embeddings.

    ``attributes`` needs attribute_id, user_id, text, reason, confidence (n_originals is
    used when present: an attribute merged from several conversations is a pattern, not a
    one-off). Embeddings of the attribute and its reason add what the words mean; the
    attribute-reason cosine measures whether the evidence is about the claim at all.
    """
    _require(
        attributes,
        ["attribute_id", "user_id", "text", "reason", "confidence"],
        "tables/attributes.parquet",
    )
    ids = attributes["attribute_id"].astype(str).to_numpy()
    blocks: list[np.ndarray] = []
    names: list[str] = []
    for texts, prefix in ((attributes["text"], "attribute"), (attributes["reason"], "reason")):
        cols, cnames = _text_signals(texts.tolist(), prefix)
        blocks.append(cols)
        names += cnames
    conf, cnames = _confidence(attributes["confidence"])
    blocks.append(conf)
    names += cnames
    if "n_originals" in attributes.columns:
        n_orig = pd.to_numeric(attributes["n_originals"], errors="coerce").fillna(1).to_numpy()
    else:
        n_orig = np.ones(len(attributes))
    blocks.append(np.log(np.maximum(n_orig.astype(np.float64), 1.0))[:, None])
    names.append("log_n_originals")
    share, turns = evidence_overlap(attributes, conversations)
    blocks.append(np.column_stack([share, turns]))
    names += ["evidence_word_share", "log_user_turns"]
    if attribute_embeddings is not None and reason_embeddings is not None:
        a = attribute_embeddings.lookup(ids)
        r = reason_embeddings.lookup(ids)
        blocks += [row_cosine(a, r)[:, None], a, r]
        names += ["cos_attribute_reason"]
        names += [f"attribute_emb_{j}" for j in range(a.shape[1])]
        names += [f"reason_emb_{j}" for j in range(r.shape[1])]
    return FeatureMatrix(ids, np.hstack(blocks), names)


def relevance_features(
    items: pd.DataFrame,
    prompts: pd.DataFrame,
    attributes: pd.DataFrame,
    prompt_embeddings: Embeddings,
    attribute_embeddings: Embeddings,
) -> FeatureMatrix:
    """Stage-2 features of each (prompt, attribute) item.

    The prompt-attribute cosine is the embedding baseline's whole signal; the elementwise
    product lets a linear model weigh which directions of agreement matter, and the
    attribute's own embedding lets it learn which kinds of attributes people rarely find
    relevant (most are not: humans mark about 20%). Word overlap and text signals complete it.
    """
    _require(items, ["item_id", "prompt_id", "attribute_id"], "relevance items")
    _require(prompts, ["prompt_id", "text"], "tables/prompts.parquet")
    _require(attributes, ["attribute_id", "text"], "tables/attributes.parquet")
    p_text = _by_id(prompts, "prompt_id")
    a_text = _by_id(attributes, "attribute_id")
    pid = items["prompt_id"].astype(str)
    aid = items["attribute_id"].astype(str)
    for ids, table, name in (
        (pid, p_text, "tables/prompts.parquet"),
        (aid, a_text, "tables/attributes.parquet"),
    ):
        missing = sorted(set(ids) - set(table.index))
        if missing:
            raise FeatureError(f"{name} lacks {len(missing)} id(s) used by items: {missing[0]!r}")
    prompt_texts = p_text.loc[pid, "text"].tolist()
    attr_texts = a_text.loc[aid, "text"].tolist()
    p_pos = prompt_embeddings.positions(pid)
    a_pos = attribute_embeddings.positions(aid)
    prompt_words = [content_words(t) for t in prompt_texts]
    attr_words = [content_words(t) for t in attr_texts]
    overlap = np.array(
        [
            len(pw & aw) / len(aw) if aw else 0.0
            for pw, aw in zip(prompt_words, attr_words, strict=True)
        ]
    )
    attr_signals, attr_names = _text_signals(attr_texts, "attribute")
    signals = [
        overlap[:, None],
        np.log1p([len(tokens(t)) for t in prompt_texts])[:, None],
        attr_signals,
    ]
    names = ["cos_prompt_attribute", "attribute_word_overlap", "prompt_log_words", *attr_names]
    if "confidence" in a_text.columns:
        conf, cnames = _confidence(a_text.loc[aid, "confidence"])
        signals.append(conf)
        names += cnames
    dim = attribute_embeddings.dim
    names += [f"product_emb_{j}" for j in range(dim)]
    names += [f"attribute_emb_{j}" for j in range(dim)]
    # The classifiers take float32 (learners.classifier_input): the matrix is written in it
    # directly, in chunks of rows, each value computed in float64 and rounded once, so no
    # items x features float64 copy exists (gigabytes on a study 100 times this size).
    X = np.empty((len(items), len(names)), dtype=np.float32)
    k = 1 + sum(b.shape[1] for b in signals)
    X[:, 1:k] = np.hstack(signals)
    for s in range(0, len(items), _ROWS_PER_CHUNK):
        rows = slice(s, s + _ROWS_PER_CHUNK)
        p = prompt_embeddings.matrix[p_pos[rows]]
        a = attribute_embeddings.matrix[a_pos[rows]]
        X[rows, 0] = row_cosine(p, a)
        X[rows, k : k + dim] = p * a
        X[rows, k + dim :] = a
    return FeatureMatrix(items["item_id"].astype(str).to_numpy(), X, names)


def mention_score(attribute_text: str, response_text: str) -> float:
    """Share of the attribute's content words that the response repeats (0 when none)."""
    aw = content_words(attribute_text)
    if not aw:
        return 0.0
    return len(aw & content_words(response_text)) / len(aw)


def reward_features(
    examples: pd.DataFrame,
    responses: pd.DataFrame,
    attributes: pd.DataFrame,
    response_embeddings: Embeddings,
    attribute_embeddings: Embeddings,
    prompt_embeddings: Embeddings | None = None,
    mention_threshold: float = 0.5,
) -> FeatureMatrix:
    """Stage-3 features of each (personalized, generic, attribute, prompt) example.

    ``examples`` carries personalized_response_id and generic_response_id (see
    :func:`analysis.learn.reward_model.pair_responses`). Features: the embedding difference
    personalized - generic (what personalization changed), how much closer the personalized
    response moved to the attribute, the prompt and each other, the length ratio, and an
    explicit-mention flag (attribute words repeated in the personalized response but not in
    the generic one, or a phrase that addresses the profile outright).
    """
    _require(
        examples,
        ["attribute_id", "prompt_id", "personalized_response_id", "generic_response_id"],
        "reward examples",
    )
    _require(responses, ["response_id", "text"], "stage3/responses.parquet")
    _require(attributes, ["attribute_id", "text"], "tables/attributes.parquet")
    r_text = _by_id(responses, "response_id")["text"]
    a_text = _by_id(attributes, "attribute_id")["text"]
    pers_ids = examples["personalized_response_id"].astype(str)
    gen_ids = examples["generic_response_id"].astype(str)
    aid = examples["attribute_id"].astype(str)
    pers_text = r_text.reindex(pers_ids).tolist()
    gen_text = r_text.reindex(gen_ids).tolist()
    attr_text = a_text.reindex(aid).tolist()
    for values, ids, name in (
        (pers_text, pers_ids, "stage3/responses.parquet"),
        (gen_text, gen_ids, "stage3/responses.parquet"),
        (attr_text, aid, "tables/attributes.parquet"),
    ):
        bad = [i for v, i in zip(values, ids, strict=True) if not isinstance(v, str)]
        if bad:
            raise FeatureError(f"{name} lacks {len(bad)} id(s) used by examples: {bad[0]!r}")
    ep = response_embeddings.lookup(pers_ids)
    eg = response_embeddings.lookup(gen_ids)
    ea = attribute_embeddings.lookup(aid)
    cos_ap = row_cosine(ea, ep)
    cos_ag = row_cosine(ea, eg)
    len_p = np.array([len(tokens(t)) for t in pers_text], dtype=np.float64)
    len_g = np.array([len(tokens(t)) for t in gen_text], dtype=np.float64)
    m_p = np.array([mention_score(a, t) for a, t in zip(attr_text, pers_text, strict=True)])
    m_g = np.array([mention_score(a, t) for a, t in zip(attr_text, gen_text, strict=True)])
    addressing = np.array([len(ADDRESSING_PATTERN.findall(t.lower())) for t in pers_text])
    explicit = ((m_p - m_g >= mention_threshold) | (addressing > 0)).astype(np.float64)
    blocks = [
        np.column_stack(
            [
                cos_ap,
                cos_ap - cos_ag,
                row_cosine(ep, eg),
                np.log((len_p + 1.0) / (len_g + 1.0)),
                np.log1p(len_p),
                m_p - m_g,
                addressing.astype(np.float64),
                explicit,
            ]
        )
    ]
    names = [
        "cos_attribute_personalized",
        "cos_attribute_gain",
        "cos_personalized_generic",
        "log_length_ratio",
        "personalized_log_words",
        "mention_word_gain",
        "addressing_phrases",
        "explicit_mention",
    ]
    if prompt_embeddings is not None:
        pe = prompt_embeddings.lookup(examples["prompt_id"].astype(str))
        blocks.append(
            np.column_stack([row_cosine(pe, ep), row_cosine(pe, ep) - row_cosine(pe, eg)])
        )
        names += ["cos_prompt_personalized", "cos_prompt_gain"]
    blocks.append(ep - eg)
    names += [f"diff_emb_{j}" for j in range(ep.shape[1])]
    ids = (
        examples[["user_id", "prompt_id", "generator", "attribute_id"]]
        .astype(str)
        .agg("|".join, axis=1)
        .to_numpy()
        if {"user_id", "generator"} <= set(examples.columns)
        else np.arange(len(examples)).astype(str)
    )
    return FeatureMatrix(ids, np.hstack(blocks), names)
