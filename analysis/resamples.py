"""Each record's bootstrap resamples, stored compactly beside its records.

Why: a difference between two builds (``recenter diff``) has an interval of its own only if
both sides' estimates were resampled on the same draws; then the change on each resample is
one replicate of the change, and its quantiles are the paired interval, with no rebuild. So
every record whose interval came from a bootstrap keeps its replicates (one float per
resample) and the digest of the resample weights they were computed on
(:attr:`analysis.stats.bootstrap.BootstrapResult.weights_digest`: the same digest means the
same clusters drawn the same number of times in every resample).

Storage: ``records/<rule>.resamples.npz`` beside ``records/<rule>.json`` (written by
:func:`analysis.provenance.write_records`), merged by rule ``numbers`` into the build's
``resamples.npz`` beside ``numbers.json``. The file is a zip of ``.npy`` arrays that
``numpy.load`` reads (keys, digests, offsets, and every replicate as float32 in one array),
written byte-stable (fixed member times and order), so the same build gives the same bytes.
This module is the storage only: the record maker (``analysis.stats``) hands each record's
:class:`Resamples` to the :class:`analysis.provenance.Record` it makes.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "Resamples",
    "merge_resample_files",
    "read_resamples",
    "resamples_path",
    "write_resamples",
]

#: the suffix of a rule's resample file, beside its ``records/<rule>.json``
SUFFIX = ".resamples.npz"
#: replicates are stored in single precision: a difference of two needs no more digits than
#: an interval prints, and the file is half the size
DTYPE = np.float32
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
_MEMBERS = ("keys", "digests", "offsets", "values")


class ResampleError(ValueError):
    """A resample file is unreadable or inconsistent; the message names the file."""


@dataclass(frozen=True)
class Resamples:
    """One record's bootstrap replicates and the digest of the resample weights behind them."""

    replicates: np.ndarray
    digest: str

    @classmethod
    def of(cls, result: Any) -> Resamples | None:
        """From a scalar bootstrap result (``replicates`` of shape ``(B,)`` and its
        ``weights_digest``); None for anything else (a vector, no digest)."""
        replicates = np.asarray(getattr(result, "replicates", None), dtype=np.float64)
        digest = getattr(result, "weights_digest", None)
        if replicates.ndim != 1 or not replicates.size or not digest:
            return None
        return cls(replicates, str(digest))

    @property
    def n_boot(self) -> int:
        return int(self.replicates.shape[0])


def resamples_path(records: Path | str) -> str:
    """The resample file of a records file: ``records/<rule>.json`` ->
    ``records/<rule>.resamples.npz``; ``numbers.json`` -> ``resamples.npz``."""
    text = str(records)
    if text.endswith("numbers.json"):
        return text[: -len("numbers.json")] + "resamples.npz"
    if not text.endswith(".json"):
        raise ValueError(f"{text} is not a records file (.json)")
    return text[: -len(".json")] + SUFFIX


def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, allow_pickle=False)
    return buf.getvalue()


def write_resamples(resamples: Mapping[str, Resamples], path: Path | str) -> None:
    """Write ``key -> Resamples`` (sorted by key) as one byte-stable ``.npz`` file."""
    keys = sorted(resamples)
    lengths = [resamples[k].n_boot for k in keys]
    arrays = {
        "keys": np.array(keys, dtype=str) if keys else np.zeros(0, dtype="<U1"),
        "digests": np.array([resamples[k].digest for k in keys], dtype=str)
        if keys
        else np.zeros(0, dtype="<U1"),
        "offsets": np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        "values": np.concatenate([resamples[k].replicates for k in keys]).astype(DTYPE)
        if keys
        else np.zeros(0, dtype=DTYPE),
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in _MEMBERS:
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, _npy(arrays[name]))
    tmp.replace(path)


def read_resamples(path: Path | str) -> dict[str, Resamples]:
    """``key -> Resamples`` of one file (empty when the build kept none)."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in _MEMBERS}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as err:
        raise ResampleError(f"{path}: not a resample file ({err})") from err
    keys, digests, offsets, values = (arrays[n] for n in _MEMBERS)
    if len(keys) != len(digests) or len(offsets) != len(keys) + 1 or offsets[-1] != len(values):
        raise ResampleError(f"{path}: keys, digests and offsets do not agree")
    return {
        str(k): Resamples(values[offsets[i] : offsets[i + 1]].astype(np.float64), str(d))
        for i, (k, d) in enumerate(zip(keys, digests, strict=True))
    }


def merge_resample_files(paths: Iterable[Path | str]) -> dict[str, Resamples]:
    """Every file's resamples in one map; a key in two files is an error naming both."""
    merged: dict[str, Resamples] = {}
    origin: dict[str, str] = {}
    for p in sorted({str(p) for p in paths}):
        for key, res in read_resamples(p).items():
            if key in merged:
                raise ResampleError(f"resamples of {key} are in {origin[key]} and {p}")
            merged[key], origin[key] = res, p
    return merged
