"""Stage 1, step 2: merge each user's near-duplicate attributes, keeping the originals.

Different conversations of one user often yield the same fact in different words. As in the
study, the per-conversation attributes of a user are clustered (agglomerative, average linkage
on cosine distances between MiniLM embeddings) and each cluster becomes one merged attribute
that keeps its originals. The threshold is a config value: clusters never join above it.
The merged sentence is the cluster's medoid (the original most similar on average to the
others; an original sentence, never a paraphrase), its reason the medoid's reason, and its
confidence the mean of the originals' confidences (our choice; the study's rule is unknown).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.provenance import Record

ORIGINAL_COLUMNS = (
    "original_id",
    "user_id",
    "conversation_id",
    "model",
    "text",
    "reason",
    "confidence",
)
MERGED_COLUMNS = (
    "attribute_id",
    "user_id",
    "model",
    "text",
    "reason",
    "confidence",
    "n_originals",
)


def explode_extractions(extractions: pd.DataFrame) -> pd.DataFrame:
    """One row per extracted (original) attribute; conversations that failed to parse add none.

    Parse failures are not lost: they stay in the extraction table and are counted there.
    """
    rows = []
    parsed = extractions[extractions["attributes_json"].notna()]
    for cid, uid, model, blob in zip(
        parsed["conversation_id"],
        parsed["user_id"],
        parsed["model"],
        parsed["attributes_json"],
        strict=True,
    ):
        for k, att in enumerate(json.loads(blob)):
            rows.append(
                {
                    "original_id": f"{model}:{cid}:{k}",
                    "user_id": str(uid),
                    "conversation_id": str(cid),
                    "model": str(model),
                    "text": att["sentence"],
                    "reason": att["reason"],
                    "confidence": float(att["confidence"]),
                }
            )
    out = pd.DataFrame(rows, columns=list(ORIGINAL_COLUMNS))
    return out.sort_values("original_id", kind="stable").reset_index(drop=True)


def cluster_labels(vectors: np.ndarray, threshold: float) -> np.ndarray:
    """Cluster labels (0..k-1, numbered by first member) for normalized vectors of one user."""
    n = len(vectors)
    if n == 0:
        return np.zeros(0, dtype=int)
    if n == 1:
        return np.zeros(1, dtype=int)
    # imported here: scikit-learn costs a job about a CPU-second to import, and rule
    # extracted_attribute_counts, which reads this module for count_records, never clusters
    from sklearn.cluster import AgglomerativeClustering

    raw = AgglomerativeClustering(
        n_clusters=None, distance_threshold=threshold, metric="cosine", linkage="average"
    ).fit_predict(vectors.astype(np.float64))
    _, first = np.unique(raw, return_index=True)
    order = np.argsort(first)  # clusters in order of their first member
    relabel = np.empty_like(order)
    relabel[np.unique(raw)[order]] = np.arange(len(order))
    return relabel[raw]


def medoid(vectors: np.ndarray) -> int:
    """Index of the row with the highest mean cosine to the others (first on ties)."""
    sims = vectors @ vectors.T
    return int(np.argmax(sims.mean(axis=1)))


def merge_user_attributes(
    originals: pd.DataFrame, vectors: np.ndarray, threshold: float
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Merged attributes (``MERGED_COLUMNS``) and the originals with their ``attribute_id``.

    ``vectors`` are the normalized embeddings of ``originals.text``, row for row.
    """
    if len(originals) != len(vectors):
        raise ValueError(f"merge: {len(originals)} originals but {len(vectors)} vectors")
    if not 0.0 < threshold <= 2.0:
        raise ValueError(f"merge distance threshold must be in (0, 2], got {threshold}")
    merged_rows = []
    assigned = pd.Series("", index=originals.index, dtype=object)
    for (model, uid), group in originals.groupby(["model", "user_id"], sort=True):
        pos = originals.index.get_indexer(group.index)
        vecs = vectors[pos]
        labels = cluster_labels(vecs, threshold)
        for k in range(labels.max() + 1 if len(labels) else 0):
            members = np.flatnonzero(labels == k)
            rep = members[medoid(vecs[members])]
            aid = f"{model}:{uid}:m{k}"
            assigned.loc[group.index[members]] = aid
            merged_rows.append(
                {
                    "attribute_id": aid,
                    "user_id": str(uid),
                    "model": str(model),
                    "text": group["text"].iloc[rep],
                    "reason": group["reason"].iloc[rep],
                    "confidence": float(group["confidence"].iloc[members].mean()),
                    "n_originals": int(len(members)),
                }
            )
    merged = pd.DataFrame(merged_rows, columns=list(MERGED_COLUMNS))
    merged["n_originals"] = merged["n_originals"].astype("int64")
    with_ids = originals.assign(attribute_id=assigned.astype(str))
    return merged.reset_index(drop=True), with_ids.reset_index(drop=True)


def count_records(
    models: Sequence[str],
    merged_tables: Sequence[pd.DataFrame],
    original_tables: Sequence[pd.DataFrame],
    caveats: Mapping[str, str] | None = None,
) -> list[Record]:
    """Per extractor: attributes extracted (originals) and attributes after merging."""
    records = []
    for model, merged, originals in zip(models, merged_tables, original_tables, strict=True):
        extra = {"caveat": caveats[model]} if caveats and model in caveats else {}
        for key, n, what in (
            (f"stage1.extracted_attributes.{model}", len(originals), "extracted"),
            (f"stage1.merged_attributes.{model}", len(merged), "left after per-user merging"),
        ):
            records.append(
                Record(
                    key=key,
                    value=int(n),
                    fmt=",d",
                    method=f"attributes {what} by {model} on the sampled conversations",
                    code="analysis.stages.merging:count_records",
                    n=int(originals["conversation_id"].nunique()) if len(originals) else 0,
                    extra=dict(extra),
                )
            )
    return records
