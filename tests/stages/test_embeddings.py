"""MiniLM embeddings: offline, normalized float32, deterministic, written as list<float32>."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from analysis.stages.embeddings import (
    DIM,
    TextEmbedder,
    embedding_table,
    kind_texts,
    read_embedding_table,
    write_embedding_table,
)


def test_vectors_are_normalized_deterministic_and_order_free() -> None:
    texts = ["The user keeps bees.", "How do I bake bread?", "The user keeps bees."]
    a = TextEmbedder().encode(texts)
    b = TextEmbedder().encode(list(reversed(texts)))
    assert a.shape == (3, DIM) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(a, b[::-1])
    assert np.array_equal(a[0], a[2])


def test_table_roundtrip(tmp_path: Path) -> None:
    table = embedding_table(["b", "a", "b"], ["two", "one", "two"])
    assert list(table["id"]) == ["a", "b"]
    path = tmp_path / "e.parquet"
    write_embedding_table(table, path)
    schema = pq.read_schema(path)
    assert str(schema.field("embedding").type) == "list<element: float>"
    back = read_embedding_table(path)
    assert np.array_equal(back["a"], table["embedding"][0])
    with pytest.raises(ValueError, match="different texts"):
        embedding_table(["a", "a"], ["x", "y"])


def test_kind_texts_picks_one_text_per_id() -> None:
    attrs = pd.DataFrame(
        {
            "attribute_id": ["a1", "a1", "a2"],
            "set": ["stage2", "stage1", "stage1"],
            "text": ["T1", "T1", "T2"],
            "reason": ["late", "early", None],
        }
    )
    assert kind_texts("reasons", attrs) == (["a1", "a2"], ["early", ""])
    assert kind_texts("attributes", attrs) == (["a1", "a2"], ["T1", "T2"])
    with pytest.raises(ValueError):
        kind_texts("nope", attrs)
