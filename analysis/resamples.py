"""Each record's resamples under its design, stored compactly beside its records.

Why: a difference between two builds (``recenter diff``) has an interval of its own only if
both sides' estimates were resampled on the same draws of the same design; then the change on
each resample (and on each deleted level of a jackknifed factor) is one resample of the
change, and the record maker's one interval reader reads the change's interval off them, with
no rebuild. So every record whose interval came from resamples keeps its *parts*: one per
random factor of its design (users, prompts, the user x prompt cells of a crossed design, the
annotator clusterings), each the bootstrap replicates of that factor (one value per resample)
or its delete-one jackknife values (one per deleted level), with what the interval reader
needs to read them again (the factor, its levels, its sign in a two-way variance, its strata),
the digest of the resample weights they were computed on
(:attr:`analysis.stats.bootstrap.BootstrapResult.weights_digest`: the same digest means the
same clusters drawn the same number of times in every resample) and, for an annotator
clustering, the name of each deleted level (the annotator, or a rater pair, with the user,
prompt or cell it is crossed with), by which two builds' deletions are matched. Which parts
pair, and how, is the record maker's to decide
(:func:`analysis.stats.records.pair_resamples`).

Storage: ``records/<rule>.resamples.npz`` beside ``records/<rule>.json`` (written by
:func:`analysis.provenance.write_records`), merged by rule ``numbers`` into the build's
``resamples.npz`` beside ``numbers.json``. The file is a zip of ``.npy`` arrays that
``numpy.load`` reads (keys and estimates, then the parts' descriptions and their values in
flat arrays with offsets), written byte-stable (fixed member times and order), so the same
build gives the same bytes. Values are kept in double precision: a paired difference of two
close variants subtracts nearly equal numbers, and the interval it reads must be the one the
same statistic computed on the differenced data would get.

This module is the storage only: the record maker (:mod:`analysis.stats.records`) turns a
statistic's resamples into the :class:`Resamples` its :class:`analysis.provenance.Record`
carries, and reads a paired difference of two of them back through its interval reader.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "Part",
    "Resamples",
    "ResampleError",
    "merge_resample_files",
    "read_resamples",
    "resamples_path",
    "write_resamples",
]

#: the suffix of a rule's resample file, beside its ``records/<rule>.json``
SUFFIX = ".resamples.npz"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
#: per part, in the ``ints`` member: sign, levels, strata, seed (-1: none), whether the part
#: has jackknife values, whether it has each level's stratum
_INTS = ("sign", "n_clusters", "n_strata", "seed", "has_jackknife", "has_strata")
#: the members of per-part values, each with its ``<name>_offsets`` member
_VALUES = ("replicates", "jackknife", "strata")
_MEMBERS = (
    "keys",
    "estimates",
    "part_offsets",
    "clusters",
    "digests",
    "stratified_by",
    "ints",
    *(m for v in _VALUES for m in (f"{v}_offsets", v)),
)


#: members a file may lack (written since the deleted levels were named; an older file reads
#: with ``levels`` None): each level-name set once, and each part's set (-1: none)
_LEVEL_MEMBERS = ("level_names", "level_set_offsets", "level_set_of")


class ResampleError(ValueError):
    """A resample file is unreadable or inconsistent; the message names the file."""


@dataclass(frozen=True)
class Part:
    """One random factor's resamples of a scalar statistic.

    ``replicates``: the statistic on each bootstrap resample of the factor, shape ``(B,)``
    (``B = 0``: the factor is only jackknifed); ``jackknife``: the statistic with each level
    (cluster) deleted, shape ``(C,)``, or None where it was not computed.
    """

    cluster: str
    digest: str
    replicates: np.ndarray
    jackknife: np.ndarray | None
    n_clusters: int
    sign: int = 1
    stratified_by: str | None = None
    n_strata: int = 1
    seed: int | None = None
    cluster_strata: np.ndarray | None = None
    #: each deleted level's name, for an annotator clustering (None: not named)
    levels: tuple[str, ...] | None = None

    @property
    def n_boot(self) -> int:
        return int(self.replicates.shape[0])

    @property
    def n_deleted(self) -> int:
        return 0 if self.jackknife is None else int(self.jackknife.shape[0])


@dataclass(frozen=True)
class Resamples:
    """One record's point estimate and its parts, one per random factor of its design."""

    estimate: float
    parts: tuple[Part, ...]

    @property
    def n_boot(self) -> int:
        """Resamples of the bootstrapped factors (0: every factor is jackknifed)."""
        return max((p.n_boot for p in self.parts), default=0)


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


def _strings(values: list[str]) -> np.ndarray:
    return np.array(values, dtype=str) if values else np.zeros(0, dtype="<U1")


def _offsets(lengths: list[int]) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(np.int64)


def _flat(arrays: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(arrays).astype(dtype) if arrays else np.zeros(0, dtype=dtype)


def write_resamples(resamples: Mapping[str, Resamples], path: Path | str) -> None:
    """Write ``key -> Resamples`` (sorted by key) as one byte-stable ``.npz`` file."""
    keys = sorted(resamples)
    parts = [p for k in keys for p in resamples[k].parts]
    empty = np.zeros(0)
    arrays = {
        "keys": _strings(keys),
        "estimates": np.array([resamples[k].estimate for k in keys], dtype=np.float64),
        "part_offsets": _offsets([len(resamples[k].parts) for k in keys]),
        "clusters": _strings([p.cluster for p in parts]),
        "digests": _strings([p.digest for p in parts]),
        "stratified_by": _strings([p.stratified_by or "" for p in parts]),
        "ints": np.array(
            [
                [
                    p.sign,
                    p.n_clusters,
                    p.n_strata,
                    -1 if p.seed is None else p.seed,
                    p.jackknife is not None,
                    p.cluster_strata is not None,
                ]
                for p in parts
            ],
            dtype=np.int64,
        ).reshape(len(parts), len(_INTS)),
        "replicates_offsets": _offsets([p.n_boot for p in parts]),
        "replicates": _flat([np.ravel(p.replicates) for p in parts], np.float64),
        "jackknife_offsets": _offsets([p.n_deleted for p in parts]),
        "jackknife": _flat(
            [empty if p.jackknife is None else np.ravel(p.jackknife) for p in parts], np.float64
        ),
        "strata_offsets": _offsets(
            [0 if p.cluster_strata is None else len(p.cluster_strata) for p in parts]
        ),
        "strata": _flat(
            [np.zeros(0) if p.cluster_strata is None else p.cluster_strata for p in parts],
            np.int64,
        ),
    }
    arrays.update(_level_arrays(parts))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in (*_MEMBERS, *_LEVEL_MEMBERS):
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, _npy(arrays[name]))
    tmp.replace(path)


def _level_arrays(parts: list[Part]) -> dict[str, np.ndarray]:
    """The parts' level names, each distinct set stored once (the records of one family share
    their annotator deletions)."""
    sets: dict[tuple[str, ...], int] = {}
    of = []
    for p in parts:
        if p.levels is None:
            of.append(-1)
            continue
        of.append(sets.setdefault(tuple(p.levels), len(sets)))
    ordered = list(sets)
    return {
        "level_names": _strings([name for names in ordered for name in names]),
        "level_set_offsets": _offsets([len(names) for names in ordered]),
        "level_set_of": np.array(of, dtype=np.int64),
    }


def _level_names(arrays: Mapping[str, np.ndarray], n_parts: int) -> list[tuple[str, ...] | None]:
    """Each part's level names (all None in a file written before they were kept)."""
    if not all(m in arrays for m in _LEVEL_MEMBERS):
        return [None] * n_parts
    names, offsets, of = (arrays[m] for m in _LEVEL_MEMBERS)
    if len(of) != n_parts or (len(offsets) and offsets[-1] != len(names)):
        raise ValueError("level names and parts do not agree")
    sets = [
        tuple(str(n) for n in names[offsets[i] : offsets[i + 1]]) for i in range(len(offsets) - 1)
    ]
    return [None if i < 0 else sets[int(i)] for i in of]


def _consistent(arrays: Mapping[str, np.ndarray]) -> bool:
    n_keys, offsets = len(arrays["keys"]), arrays["part_offsets"]
    n_parts = len(arrays["clusters"])
    if len(arrays["estimates"]) != n_keys or len(offsets) != n_keys + 1 or offsets[-1] != n_parts:
        return False
    if arrays["ints"].shape != (n_parts, len(_INTS)):
        return False
    if len(arrays["digests"]) != n_parts or len(arrays["stratified_by"]) != n_parts:
        return False
    return all(
        len(arrays[f"{v}_offsets"]) == n_parts + 1 and arrays[f"{v}_offsets"][-1] == len(arrays[v])
        for v in _VALUES
    )


def read_resamples(path: Path | str) -> dict[str, Resamples]:
    """``key -> Resamples`` of one file (empty when the build kept none)."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in _MEMBERS}
            arrays.update({name: data[name] for name in _LEVEL_MEMBERS if name in data.files})
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as err:
        raise ResampleError(
            f"{path}: not a resample file of this version ({err}); rebuild it"
        ) from err
    if not _consistent(arrays):
        raise ResampleError(f"{path}: keys, parts and offsets do not agree")
    try:
        names = _level_names(arrays, len(arrays["clusters"]))
    except ValueError as err:
        raise ResampleError(f"{path}: {err}") from err
    parts = []
    for i in range(len(arrays["clusters"])):
        sign, n_clusters, n_strata, seed, has_jack, has_strata = (int(v) for v in arrays["ints"][i])
        values = {
            v: arrays[v][arrays[f"{v}_offsets"][i] : arrays[f"{v}_offsets"][i + 1]] for v in _VALUES
        }
        parts.append(
            Part(
                cluster=str(arrays["clusters"][i]),
                digest=str(arrays["digests"][i]),
                replicates=values["replicates"],
                jackknife=values["jackknife"] if has_jack else None,
                n_clusters=n_clusters,
                sign=sign,
                stratified_by=str(arrays["stratified_by"][i]) or None,
                n_strata=n_strata,
                seed=None if seed < 0 else seed,
                cluster_strata=values["strata"] if has_strata else None,
                levels=names[i],
            )
        )
    offsets = arrays["part_offsets"]
    return {
        str(k): Resamples(float(arrays["estimates"][i]), tuple(parts[offsets[i] : offsets[i + 1]]))
        for i, k in enumerate(arrays["keys"])
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
