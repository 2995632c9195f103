"""Usage and cost of the model calls behind the paper, per stage and model, as records.

The call layer (``analysis.llm``) sums calls, tokens and cost per (stage, model) from the
committed call store. This module turns that summary into records
(``calls.<stage>.<model>.calls`` / ``.keys`` / ``.prompt_tokens`` / ``.completion_tokens`` /
``.cost_usd``) so the appendix table links each cell to the shards it was counted from.
If the store is empty, the result says why and the paper prints that sentence instead of a
table.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from analysis.llm.store import iter_store, usage_summary
from analysis.provenance import Record, repo_relative

log = logging.getLogger(__name__)

CODE = "analysis.paper.call_usage:usage_records"
#: usage column -> (record suffix, format, method text)
METRICS = {
    "calls": (
        "calls",
        ",d",
        "stored call records of the calls this build asks (each was made and paid for once)",
    ),
    "keys": ("keys", ",d", "distinct calls (what replay serves)"),
    "prompt_tokens": ("prompt_tokens", ",d", "prompt tokens reported by the endpoint"),
    "completion_tokens": ("completion_tokens", ",d", "completion tokens reported"),
    "cost_usd": ("cost_usd", ",.2f", "cost in USD at the configured price per token"),
}


@dataclass
class Usage:
    """The records, the shards behind each (stage, model), and a note when there are none."""

    records: list[Record] = field(default_factory=list)
    shards: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    note: str = ""


def usage_records(
    store: Path | str,
    prompt_version: str | None = None,
    asked: Collection[str] | None = None,
) -> Usage:
    """Records of calls, tokens and cost per (stage, model) found in the call store; only the
    calls of the build's prompt version when given (a prompt variant's calls share the
    store's shards with the default build's), and only the calls whose key is in ``asked``
    when given: the keys of the build's model-call tables (``analysis.llm.store.table_keys``),
    since the store also keeps calls recorded for another world or dataset."""
    by_ident: dict[tuple[str, str], list[str]] = {}
    for stage, model, path in iter_store(Path(store)):
        by_ident.setdefault((stage, model), []).append(repo_relative(path))
    if not by_ident:
        return Usage(note=f"No model calls: the call store {repo_relative(store)} is empty.")
    usage = Usage(shards=by_ident)
    for row in usage_summary(Path(store), prompt_version, asked).to_dict(orient="records"):
        stage, model = str(row["stage"]), str(row["model"])
        for column, (suffix, fmt, method) in METRICS.items():
            if column not in row or row[column] is None:
                continue
            value = row[column]
            value = float(value) if column == "cost_usd" else int(value)
            usage.records.append(
                Record(
                    key=f"calls.{stage}.{model}.{suffix}",
                    value=value,
                    fmt=fmt,
                    method=f"{method}; stage {stage}, model {model}",
                    code=CODE,
                    extra={"stage": stage, "model": model},
                )
            )
    if not usage.records:
        usage.note = "No model calls are in the call store for this build."
    return usage


def shard_counts(paths: Iterable[str], root: Path | None = None) -> dict[str, int]:
    """``{shard: number of complete lines}``: the call counts a provenance row shows."""
    import gzip

    out = {}
    for rel in paths:
        p = Path(rel) if root is None else root / rel
        opener = gzip.open if p.name.endswith(".gz") else open
        with opener(p, "rb") as fh:
            out[rel] = sum(1 for line in fh if line.strip().endswith(b"}"))
    return out
