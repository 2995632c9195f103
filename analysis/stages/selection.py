"""Which items a capped model step sees: deterministic, seeded subsets by hash rank.

A cap must not make replays fragile: ranking items by a seeded hash of their id (instead of
sampling) means raising a cap only adds items, so every call already in the store still hits.
The same hashes give per-item coin flips (e.g. the order in which a judge sees two responses)
that do not depend on which other items are in the run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from analysis.seeds import stable_hash


def hash_rank(keys: Iterable[object], seed: int, purpose: str) -> list[object]:
    """Keys sorted by their seeded hash (ties impossible in practice; broken by the key)."""
    return sorted(set(keys), key=lambda k: (stable_hash(seed, purpose, k), str(k)))


def ranked_subset(keys: Iterable[object], cap: int | None, seed: int, purpose: str) -> list[object]:
    """The first ``cap`` keys by seeded hash rank (all keys, ranked, when ``cap`` is None)."""
    ranked = hash_rank(keys, seed, purpose)
    return ranked if cap is None else ranked[: max(int(cap), 0)]


def cap_by_groups(
    df: pd.DataFrame, group_col: str, cap: int | None, seed: int, purpose: str
) -> pd.DataFrame:
    """Rows of whole groups (e.g. prompts) taken in hash-rank order while the total fits ``cap``.

    Whole groups keep a subset usable for per-prompt statistics; a group larger than the
    remaining room is skipped so the cap is never exceeded. A cap below the smallest group would
    select nothing and the step would ask no model anything: that is an error, not an empty step.
    """
    if cap is None or len(df) <= cap:
        return df
    sizes = df.groupby(group_col, sort=True).size()
    chosen: list[object] = []
    room = int(cap)
    for key in hash_rank(sizes.index, seed, purpose):
        if sizes[key] <= room:
            chosen.append(key)
            room -= int(sizes[key])
        if room == 0:
            break
    if not chosen:
        raise ValueError(
            f"{purpose}: the cap of {cap} items is smaller than the smallest {group_col} group "
            f"({int(sizes.min())} items), so no item would be asked; raise the cap "
            f"(whole {group_col} groups are kept together)"
        )
    return df[df[group_col].isin(chosen)]


def coin(seed: int, purpose: str, *key: object) -> bool:
    """A seeded fair coin for one item, independent of every other item."""
    return stable_hash(seed, purpose, *key) % 2 == 1


def split_groups(
    groups: Sequence[object], fraction: float, seed: int, purpose: str
) -> tuple[list[object], list[object]]:
    """Split groups (prompts) into (dev, eval) by hash rank; both sides non-empty when possible."""
    ranked = hash_rank(groups, seed, purpose)
    if len(ranked) < 2:
        raise ValueError(f"{purpose}: need at least 2 groups to split, got {len(ranked)}")
    n_dev = int(np.clip(round(fraction * len(ranked)), 1, len(ranked) - 1))
    return sorted(ranked[:n_dev], key=str), sorted(ranked[n_dev:], key=str)
