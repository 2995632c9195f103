"""Capped subsets are seeded, stable and prefix-closed, so raising a cap keeps every call."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.stages.selection import cap_by_groups, coin, ranked_subset, split_groups


def test_ranked_subset_is_a_prefix_of_larger_caps() -> None:
    keys = [f"k{i}" for i in range(50)]
    small = ranked_subset(keys, 10, 1, "x")
    large = ranked_subset(list(reversed(keys)), 30, 1, "x")
    assert large[:10] == small
    assert ranked_subset(keys, 10, 2, "x") != small  # the seed matters
    assert ranked_subset(keys, 10, 1, "y") != small  # and so does the purpose
    assert sorted(ranked_subset(keys, None, 1, "x")) == sorted(keys)


def test_cap_by_groups_keeps_whole_groups_within_the_cap() -> None:
    df = pd.DataFrame({"g": ["a"] * 5 + ["b"] * 3 + ["c"] * 4 + ["d"] * 2, "x": range(14)})
    out = cap_by_groups(df, "g", 7, 3, "p")
    assert len(out) <= 7
    assert all(len(out[out["g"] == g]) in (0, len(df[df["g"] == g])) for g in "abcd")
    assert cap_by_groups(df, "g", None, 3, "p") is df


def test_a_cap_below_the_smallest_group_is_an_error_not_an_empty_step() -> None:
    """Issue 16: max_items_per_model smaller than a prompt's item count selected 0 items and the
    model-call step exited 0 having asked nothing."""
    df = pd.DataFrame({"g": ["a"] * 5 + ["b"] * 3, "x": range(8)})
    with pytest.raises(
        ValueError, match=r"cap of 2 items is smaller than the smallest g group \(3"
    ):
        cap_by_groups(df, "g", 2, 3, "stage2.relevance")
    assert len(cap_by_groups(df, "g", 3, 3, "p")) == 3


def test_split_groups_and_coin() -> None:
    groups = [f"p{i}" for i in range(10)]
    dev, ev = split_groups(groups, 0.3, 5, "s")
    assert len(dev) == 3 and len(ev) == 7 and not set(dev) & set(ev)
    assert split_groups(groups, 0.0, 5, "s")[0]  # never an empty side
    flips = [coin(1, "order", i) for i in range(400)]
    assert 150 < sum(flips) < 250
    assert flips == [coin(1, "order", i) for i in range(400)]
