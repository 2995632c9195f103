"""Every number in the paper is a record: value, CI, method and where it came from.

Analysis code returns :class:`Record` objects (pure: no paths, no config); a rule's script
hands them to :func:`write_records`, which adds the provenance that only the workflow knows
(rule name, input files with sha256, config subtree and its hash, model-call shards). The
``numbers`` rule merges every rule's records into ``results/<dataset>/numbers.json``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from analysis.resamples import Resamples, resamples_path, write_resamples


class RecordError(ValueError):
    """A record is malformed or two rules claim the same key."""


@dataclass(frozen=True)
class Record:
    """One reported number.

    ``fmt`` is a Python format spec applied to ``value`` (and the CI) for the paper:
    ``".2f"`` for kappas, ``".1%"`` for shares, ``",d"`` for counts. ``code`` is the
    ``module:function`` that computed the value, the second hop of macro -> rule -> function.

    ``text`` is for a record whose value is a code, not a quantity (a scorecard verdict, a
    published figure as the study worded it): the paper prints the text, and the value keeps
    the record numeric for sorting, diffs and claims. Records without it are written without
    the field, so adding it changed no existing ``numbers.json`` byte.

    ``unit`` names what ``n`` counts (``items``, ``judgments``, ``attributes``, ``responses``,
    ``slots``, ``models``, ...), or for a count what its value counts: the scorecard holds a
    record against a published figure only in the figure's own unit.

    ``ci_level`` is the confidence level of the interval, set where the interval was made
    (from :class:`analysis.stats.intervals.Interval`), so a reader of the record (the paper's
    "95% CI" text) never searches the record's config for it. Like ``text`` it is written only
    when set.

    ``resamples`` (the parts of the design the interval was read from: each factor's bootstrap
    replicates or jackknife values, with their weight digests) is written to the
    records file's resample file (:func:`analysis.resamples.resamples_path`), never into the
    JSON: ``recenter diff`` pairs two builds' records on them.
    """

    key: str
    value: float | int
    fmt: str
    method: str
    code: str
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    seed: int | None = None
    unit: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    text: str | None = None
    ci_level: float | None = None
    #: the design's parts the interval was read from (None: an analytic interval); kept
    #: beside the records file, not in it (``analysis.resamples``), for paired differences
    resamples: Resamples | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.key or any(c.isspace() for c in self.key):
            raise RecordError(f"record key {self.key!r} must be non-empty without spaces")
        if isinstance(self.value, bool) or not isinstance(self.value, int | float):
            raise RecordError(f"record {self.key}: value must be a number, got {self.value!r}")
        if isinstance(self.value, float) and not math.isfinite(self.value):
            raise RecordError(
                f"record {self.key}: value is {self.value}; a statistic that cannot be computed "
                "is left out (absent key), never written as NaN"
            )
        if ":" not in self.code:
            raise RecordError(f"record {self.key}: code must be 'module:function'")
        format(self.value, self.fmt)  # raises on a bad format spec
        if self.text is not None and not self.text.strip():
            raise RecordError(f"record {self.key}: text, when given, must be non-empty")
        if self.ci_level is not None and not 0.0 < self.ci_level < 1.0:
            raise RecordError(
                f"record {self.key}: ci_level must lie in (0, 1), got {self.ci_level!r}"
            )

    def display(self) -> str:
        """The value as the paper prints it (the text of a coded record)."""
        return self.text if self.text is not None else format(self.value, self.fmt)


def config_hash(value: Any) -> str:
    """Stable sha256 of a plain config value (sorted keys, no whitespace)."""
    blob = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def sha256_file(path: Path | str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def repo_relative(path: Path | str) -> str:
    """A path relative to the working copy the workflow runs in (Snakemake's working directory:
    the repository root or a reviewer's fresh copy), so records name the same file on every
    machine; data outside the copy (e.g. ``../shared/data``) keeps its ``..`` form."""
    return os.path.relpath(Path(path).resolve(), Path.cwd().resolve())


def input_hashes(paths: Iterable[Path | str]) -> list[dict[str, str]]:
    """``[{path, sha256}]`` for each input file, sorted by path, for the provenance chain."""
    files = [p for p in paths if Path(p).is_file()]
    rows = [{"path": repo_relative(p), "sha256": sha256_file(p)} for p in files]
    return sorted(rows, key=lambda r: r["path"])


def _to_json_number(x: Any) -> Any:
    if x is None:
        return None
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if hasattr(x, "item"):
        x = x.item()
    return x


def write_records(
    records: Iterable[Record],
    path: Path | str,
    *,
    rule: str,
    inputs: Iterable[Path | str],
    config: Mapping[str, Any] | None = None,
    calls: Mapping[str, int] | None = None,
) -> dict[str, dict[str, Any]]:
    """Attach provenance to ``records`` and write them as one JSON object ``key -> record``.

    ``calls`` maps call-store shard paths to the number of calls that fed these numbers.
    The output is byte-stable: sorted keys, fixed float repr, no timestamps. The records'
    resamples (their designs' parts) go beside it (``analysis.resamples``; an empty file when
    none has).
    """
    records = list(records)
    out = attach_provenance(records, rule=rule, inputs=inputs, config=config, calls=calls)
    dump_json(out, path)
    kept = {r.key: r.resamples for r in records if r.resamples is not None}
    write_resamples(kept, resamples_path(path))
    return out


def attach_provenance(
    records: Iterable[Record],
    *,
    rule: str,
    inputs: Iterable[Path | str],
    config: Mapping[str, Any] | None = None,
    calls: Mapping[str, int] | None = None,
) -> dict[str, dict[str, Any]]:
    """``key -> record`` with provenance, not yet written: for a rule whose records have
    different inputs each (merge the dicts, then :func:`dump_json` once)."""
    config = dict(config or {})
    provenance = {
        "rule": rule,
        "inputs": input_hashes(inputs),
        "config": config,
        "config_sha256": config_hash(config),
        "calls": dict(sorted((calls or {}).items())),
    }
    out: dict[str, dict[str, Any]] = {}
    for rec in records:
        if rec.key in out:
            raise RecordError(f"rule {rule} produced key {rec.key} twice")
        body = {
            f.name: _to_json_number(getattr(rec, f.name))
            for f in fields(rec)
            if f.name not in ("extra", "resamples")
        }
        for optional in ("text", "ci_level"):
            if body[optional] is None:
                del body[optional]
        body["extra"] = rec.extra
        body["display"] = rec.display()
        body.update(provenance)
        out[rec.key] = body
    return out


def dump_json(obj: Any, path: Path | str) -> None:
    """Write JSON deterministically (sorted keys, 1-space indent, trailing newline)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(obj, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False)
    path.write_text(text + "\n", encoding="utf-8")


def merge_record_files(paths: Iterable[Path | str]) -> dict[str, dict[str, Any]]:
    """Merge per-rule record files; a key claimed by two rules is an error naming both.

    A file listed twice is read once (rule files may register the same path).
    """
    merged: dict[str, dict[str, Any]] = {}
    for p in sorted({str(p) for p in paths}):
        data = json.loads(Path(p).read_text(encoding="utf-8"))
        for key, rec in data.items():
            if key in merged:
                raise RecordError(
                    f"key {key} is written by rule {merged[key]['rule']} and rule {rec['rule']}"
                )
            merged[key] = rec
    return dict(sorted(merged.items()))


def load_numbers(path: Path | str) -> dict[str, dict[str, Any]]:
    """Read a merged ``numbers.json`` (key -> record); a missing file says which rule makes it."""
    path = Path(path)
    if not path.is_file():
        raise RecordError(
            f"{path} does not exist; it is written by rule `numbers` "
            "(run: snakemake --cores 1 <that path>)"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise RecordError(f"{path}: not valid JSON ({err.msg}, line {err.lineno})") from err
    if not isinstance(data, dict):
        raise RecordError(f"{path}: must hold one JSON object key -> record")
    for key, rec in data.items():
        if not isinstance(rec, dict) or "value" not in rec:
            raise RecordError(f"{path}: record {key!r} has no field 'value'")
    return data


def short_sha(sha256: str, n: int = 10) -> str:
    """The first ``n`` hex digits of a sha256: enough to compare by eye in the appendix."""
    return str(sha256)[:n]
