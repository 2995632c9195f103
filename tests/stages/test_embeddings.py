"""MiniLM embeddings: offline, normalized float32, deterministic, written as list<float32>."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from analysis.software import EMBEDDING_CACHE_VARIABLE
from analysis.stages import embeddings
from analysis.stages.embeddings import (
    BATCH_SIZE,
    DIM,
    TextEmbedder,
    embedding_table,
    kind_texts,
    read_embedding_table,
    stored_vectors_path,
    write_embedding_table,
)
from tests.conftest import assert_python_succeeds


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


def _texts(n: int) -> list[str]:
    """``n`` distinct sentences of 3 to 60 words: batches with real padding."""
    words = "the user keeps bees bakes bread in a small flat near the sea and asks how".split()
    return [
        f"Text {i}: " + " ".join(words[(i * 7 + j) % len(words)] for j in range(3 + i % 58))
        for i in range(n)
    ]


def test_stored_vectors_are_the_encoded_bytes_keyed_by_texts_and_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = _texts(70)
    monkeypatch.delenv(EMBEDDING_CACHE_VARIABLE, raising=False)
    encoded = TextEmbedder().encode(texts)
    monkeypatch.setenv(EMBEDDING_CACHE_VARIABLE, str(tmp_path))
    assert np.array_equal(TextEmbedder().encode(texts), encoded)  # encoded, then stored
    stored = stored_vectors_path(tmp_path, sorted(texts), BATCH_SIZE)
    assert [p.name for p in tmp_path.iterdir()] == [stored.name]
    monkeypatch.setattr(embeddings, "_encoded", lambda *a: pytest.fail("encoded again"))
    assert np.array_equal(TextEmbedder().encode(texts), encoded)  # read back, same bytes
    # another set of texts or another batch size is another entry
    assert stored_vectors_path(tmp_path, sorted(texts)[1:], BATCH_SIZE) != stored
    assert stored_vectors_path(tmp_path, sorted(texts), BATCH_SIZE // 2) != stored
    # an entry of the wrong shape is not served: the set is encoded again
    np.save(stored, encoded[:3], allow_pickle=False)
    monkeypatch.setattr(embeddings, "_encoded", lambda *a: encoded[np.argsort(texts)])
    assert np.array_equal(TextEmbedder().encode(texts), encoded)
    assert np.load(stored).shape == encoded.shape


def test_vectors_are_the_same_bytes_in_another_process_on_two_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What lets builds share stored vectors, and what the determinism test's twin no longer
    checks by encoding again: another process, with torch allowed two threads, encodes the
    same set to the same bytes (the embedder runs MiniLM on one thread)."""
    texts = _texts(200)
    monkeypatch.delenv(EMBEDDING_CACHE_VARIABLE, raising=False)
    here = TextEmbedder().encode(texts)
    out = tmp_path / "there.npy"
    code = (
        "import json, sys, numpy as np, torch\n"
        "torch.set_num_threads(2)\n"
        "from analysis.stages.embeddings import TextEmbedder\n"
        f"texts = json.loads({json.dumps(json.dumps(texts))})\n"
        f"np.save({str(out)!r}, TextEmbedder().encode(texts))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != EMBEDDING_CACHE_VARIABLE}
    assert_python_succeeds(code, env=dict(env, OMP_NUM_THREADS="2", HF_HUB_OFFLINE="1"))
    assert np.load(out).tobytes() == here.tobytes()
