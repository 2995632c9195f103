"""Grouped data splits: a user (stages 1 and 3) or a prompt (stage 2) is never on both sides.

A model that has seen one of a user's attributes in training can recognise that user's style
at test time; a relevance model that has seen a prompt can memorise which of its attributes
people picked. Every split here is by group and is checked, so a leak is an error rather
than an optimistic number.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import GroupKFold, GroupShuffleSplit


class LeakError(RuntimeError):
    """A group appears in both the training and the evaluation side of a split."""


@dataclass(frozen=True)
class Fold:
    """Row indices of one split: fit on ``train``, tune thresholds on ``val``, score ``test``."""

    index: int
    train: np.ndarray
    val: np.ndarray
    test: np.ndarray


def assert_disjoint(groups: np.ndarray, *sides: np.ndarray, what: str = "group") -> None:
    """Raise :class:`LeakError` naming the first ``what`` found on two sides."""
    groups = np.asarray(groups).astype(str)
    seen: dict[str, int] = {}
    for k, idx in enumerate(sides):
        for g in np.unique(groups[idx]).tolist():
            if g in seen and seen[g] != k:
                raise LeakError(f"{what} {g!r} is in split sides {seen[g]} and {k}")
            seen[g] = k


def inner_split(
    groups: np.ndarray, rows: np.ndarray, val_fraction: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Split ``rows`` into (fit, validation) by group; validation tunes a threshold only."""
    groups = np.asarray(groups).astype(str)
    sub = groups[rows]
    if val_fraction <= 0 or len(np.unique(sub)) < 2:
        return rows, rows[:0]
    splitter = GroupShuffleSplit(n_splits=1, test_size=val_fraction, random_state=seed)
    fit, val = next(splitter.split(rows, groups=sub))
    return rows[np.sort(fit)], rows[np.sort(val)]


def grouped_folds(
    groups: np.ndarray, n_folds: int, val_fraction: float, seed: int
) -> Iterator[Fold]:
    """K grouped folds (shuffled, seeded) with a grouped validation split inside each train.

    ``n_folds`` is capped at the number of groups. Every fold is checked for leaks.
    """
    groups = np.asarray(groups).astype(str)
    n_groups = len(np.unique(groups))
    if n_groups < 2:
        raise ValueError(f"grouped cross-validation needs at least 2 groups, got {n_groups}")
    k = min(n_folds, n_groups)
    splitter = GroupKFold(n_splits=k, shuffle=True, random_state=seed)
    rows = np.arange(len(groups))
    for i, (train, test) in enumerate(splitter.split(rows, groups=groups)):
        fit, val = inner_split(groups, np.sort(train), val_fraction, seed + 1 + i)
        test = np.sort(test)
        assert_disjoint(groups, fit, val, test)
        yield Fold(index=i, train=fit, val=val, test=test)


def given_split(split: np.ndarray, groups: np.ndarray) -> Fold:
    """The data set's own train/val/test assignment as one fold (checked for group leaks)."""
    split = np.asarray(split).astype(str)
    unknown = sorted(set(split) - {"train", "val", "test"})
    if unknown:
        raise ValueError(f"split column has values {unknown}; expected train, val, test")
    fold = Fold(
        index=0,
        train=np.flatnonzero(split == "train"),
        val=np.flatnonzero(split == "val"),
        test=np.flatnonzero(split == "test"),
    )
    assert_disjoint(groups, fold.train, fold.val, fold.test, what="prompt")
    return fold
