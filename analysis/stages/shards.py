"""Splitting one model's call set into jobs (config ``llm.shards``) and joining their tables.

A shard is a contiguous slice of the step's chosen items, in the order the unsharded step
would ask them. Every request depends only on its item and the seed (hash-ranked selection,
per-item coins and hashes), so a slice asks exactly what the whole would have asked for those
items, and joining the shards' tables in shard order gives back the unsharded table row for
row: the shard count spreads the work over jobs (or cluster nodes) and never changes a result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pandas as pd

Items = TypeVar("Items", pd.DataFrame, list)


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count``: which slice of a call set one job asks."""

    index: int = 0
    count: int = 1

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(
                f"shard {self.index} of {self.count}: need count >= 1 and 0 <= index < count"
            )

    @property
    def name(self) -> str:
        """The call-store shard file this job appends to (``<index>.jsonl``): one writer each."""
        return str(self.index)

    def bounds(self, n_items: int) -> slice:
        """This shard's slice of ``n_items``: sizes differ by at most one, earlier shards larger."""
        size, extra = divmod(n_items, self.count)
        start = self.index * size + min(self.index, extra)
        return slice(start, start + size + (self.index < extra))

    def take(self, items: Items) -> Items:
        """This shard's rows of a table (or items of a list), in their original order."""
        part = self.bounds(len(items))
        return items.iloc[part] if isinstance(items, pd.DataFrame) else items[part]


WHOLE = Shard()


def text_columns_typed(table: pd.DataFrame) -> pd.DataFrame:
    """Text columns (object columns holding only strings or nothing) as pandas' ``str`` dtype.

    A column can be all None in one shard (say, the shown attribute when a shard holds only
    no-context controls) and text in another. Typed as text either way, it is stored with the
    same Parquet type and read back with the same dtype, so the joined table's bytes do not
    depend on how the items fell into shards.
    """
    text = [
        name
        for name in table.columns
        if table[name].dtype == object
        and pd.api.types.infer_dtype(table[name], skipna=True) in ("string", "empty")
    ]
    return table.astype(dict.fromkeys(text, "str")) if text else table


def join_shards(tables: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The shards' tables in shard order, as one table with a fresh index and typed text.

    Empty shards (more shards than items) are left out so that their placeholder column
    types cannot change the joined table's types; all empty gives the first one back.
    """
    if not tables:
        raise ValueError("no shard tables to join")
    filled = [t for t in tables if len(t)] or [tables[0]]
    return text_columns_typed(pd.concat(filled, ignore_index=True))


def write_shard_table(table: pd.DataFrame, path: str | Path) -> None:
    """One shard's table as Parquet, text columns typed (what rule model_call_table reads)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    text_columns_typed(table).to_parquet(path, index=False)
