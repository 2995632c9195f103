"""``recenter trace KEY --lineage``: the whole chain from a number back to the raw files.

``trace`` stops one hop up (the record's own inputs). The lineage follows each input back to
the rule that wrote it, and that rule's inputs, until it reaches files no rule wrote: the
dataset's raw files and the call-store shards. It keeps no bookkeeping of its own; it reads

* the records (``numbers.json``): each record's input files with their sha256 at build time,
  and the call-store shards that fed it;
* Snakemake's own metadata (``.snakemake/metadata/``, one JSON file per output, named by the
  urlsafe base64 of its path, as ``snakemake.persistence.file`` stores it): the rule that
  wrote a file, that job's input files and Snakemake's sha256 of those inputs;
* for a model-call job (a step of ``analysis.stages.steps.CALL_STEPS``), the call-usage
  records of its call stage and model, whose inputs are the call-store shards it replayed;
* ``results/<dataset>/tables/sources.json`` (rule ``canonical_tables``): which raw files fed
  each canonical table, with their sha256, so a stage-2 kappa rests on the stage-2 exports
  only, not on every raw file of the dataset.

Every file in the chain is listed with the sha256 recorded at build time (where the records
or sources.json hold one), its sha256 now, and whether the two still match.
"""

from __future__ import annotations

import json
import os
from base64 import urlsafe_b64encode
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from analysis.paths import SWEEP_RULE_SEPARATOR, BuildPaths
from analysis.provenance import sha256_file
from analysis.stages.steps import CALL_STEPS

#: Snakemake splits a metadata file name longer than the file system allows into folders
_NAME_MAX = 255


def metadata_path(root: Path, path: str) -> Path:
    """Where Snakemake keeps the metadata of output ``path`` (its own encoding)."""
    folder = root / ".snakemake" / "metadata"
    try:
        max_len = os.pathconf(folder, "PC_NAME_MAX") if folder.is_dir() else _NAME_MAX
    except OSError:
        max_len = _NAME_MAX
    b64 = urlsafe_b64encode(path.encode()).decode()
    parts = [b64[i : i + max_len - 1] for i in range(0, len(b64), max_len - 1)]
    return folder.joinpath(*["@" + s for s in parts[:-1]], parts[-1])


def snakemake_metadata(root: Path, path: str) -> dict[str, Any] | None:
    """Snakemake's record of the job that wrote ``path`` (rule, inputs, ...), or None."""
    meta = metadata_path(root, path)
    if not meta.is_file():
        return None
    return json.loads(meta.read_text(encoding="utf-8"))


def recorded_hashes(
    numbers: Mapping[str, Mapping[str, Any]], sources: Mapping[str, list[Mapping[str, str]]]
) -> dict[str, str]:
    """path -> sha256 at build time, from every record's inputs and from sources.json."""
    out: dict[str, str] = {}
    for rec in numbers.values():
        for item in rec.get("inputs") or []:
            out.setdefault(item["path"], item["sha256"])
    for files in sources.values():
        for item in files:
            out.setdefault(item["path"], item["sha256"])
    return out


def call_shards_of(numbers: Mapping[str, Mapping[str, Any]], rule: str, output: str) -> list[str]:
    """The call-store shards behind one model-call job's output, from the call-usage records
    (their ``extra`` names the call stage and model, their inputs are the shards)."""
    step = CALL_STEPS.get(rule)
    if step is None:
        return []
    model = Path(output).name.split(".", 1)[0]
    out: set[str] = set()
    for rec in numbers.values():
        extra = rec.get("extra") or {}
        if rec.get("rule") == "call_usage" and extra.get("stage") == step.stage:
            if extra.get("model") == model:
                out |= {i["path"] for i in rec.get("inputs") or []}
    return sorted(out)


def _table_name(path: str, results: str) -> str | None:
    """``name`` when ``path`` is the canonical table ``results/<dataset>/tables/<name>.parquet``."""
    prefix = f"{results}/tables/"
    if path.startswith(prefix) and path.endswith(".parquet") and "/" not in path[len(prefix) :]:
        return path[len(prefix) : -len(".parquet")]
    return None


def lineage(
    key: str, record: Mapping[str, Any], numbers: Mapping[str, Any], dataset: str, root: Path
) -> dict[str, Any]:
    """The chain of rules and files behind one record, with every file's hash check."""
    results = BuildPaths(dataset).results  # the canonical tables are every variant's
    sources_file = root / results / "tables" / "sources.json"
    sources = json.loads(sources_file.read_text(encoding="utf-8")) if sources_file.is_file() else {}
    recorded = recorded_hashes(numbers, sources)
    shards = set(record.get("calls") or {})
    for rec in numbers.values():
        shards |= set(rec.get("calls") or {})

    steps: list[dict[str, Any]] = [
        {
            "rule": record.get("rule"),
            "writes": f"record {key}",
            "inputs": [i["path"] for i in record.get("inputs") or []],
        }
    ]
    kinds: dict[str, str] = {}
    produced_by: dict[str, str | None] = {}
    queue = list(steps[0]["inputs"]) + sorted(record.get("calls") or {})
    seen: set[str] = set()
    notes: list[str] = []
    while queue:
        path = queue.pop(0)
        if path in seen:
            continue
        seen.add(path)
        table = _table_name(path, results)
        if table is not None and table in sources:
            raw = [item["path"] for item in sources[table]]
            steps.append(
                {
                    "rule": "canonical_tables",
                    "writes": path,
                    "inputs": raw,
                    "from": f"{results}/tables/sources.json",
                }
            )
            kinds[path], produced_by[path] = "intermediate", "canonical_tables"
            for r in raw:
                kinds[r], produced_by[r] = "raw", None
                seen.add(r)
            continue
        meta = snakemake_metadata(root, path)
        if meta is not None and meta.get("rule"):
            inputs = list(meta.get("input") or [])
            # Snakemake's own sha256 of the job's (small enough) inputs at run time
            for item, checksum in (meta.get("input_checksums") or {}).items():
                recorded.setdefault(item, str(checksum).removeprefix("sha256:"))
            # a sweep's jobs run the rules of a member's module, named <prefix>__<rule>
            rule = str(meta["rule"]).rpartition(SWEEP_RULE_SEPARATOR)[2]
            calls = call_shards_of(numbers, rule, path)
            shards |= set(calls)
            steps.append({"rule": rule, "writes": path, "inputs": inputs + calls})
            kinds[path], produced_by[path] = "intermediate", rule
            queue += inputs + calls
        else:
            produced_by[path] = None
            kinds[path] = "call-store shard" if path in shards else "raw"
            if path.startswith(f"{results}/"):
                kinds[path] = "unknown"
                notes.append(f"{path}: no Snakemake metadata (built elsewhere or cleaned)")
    files = []
    for path in sorted(kinds):
        full = root / path
        now = sha256_file(full) if full.is_file() else None
        was = recorded.get(path)
        files.append(
            {
                "path": path,
                "kind": kinds[path],
                "produced_by": produced_by[path],
                "sha256": was,
                "sha256_now": now,
                "matches": None if was is None or now is None else now == was,
                # a folder (a model-call job's call-store folder) is there, with no sha256
                "missing": not full.exists(),
            }
        )
    changed = [f["path"] for f in files if f["matches"] is False]
    missing = [f["path"] for f in files if f["missing"]]
    return {
        "steps": steps,
        "raw_files": [f for f in files if f["kind"] == "raw"],
        "call_shards": [f for f in files if f["kind"] == "call-store shard"],
        "files": files,
        "current": not changed and not missing,
        "changed": changed,
        "missing": missing,
        "notes": notes,
    }
