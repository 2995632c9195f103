"""What the three ``study_stage*`` modules share: table checks, 2x2 cells, references.

The records themselves come from the one record maker (:mod:`analysis.stats.records`) and
the resamples from the declared designs (:mod:`analysis.stats.resampling`); this module
holds what the stages compute alike before that:

* checks of the canonical tables that name the table, row and field of a problem;
* the per-observation 2x2 cells of a rater pair, from which kappa, precision, recall and F1
  follow on any resample's totals;
* the one definition of a leave-one-rater-out reference (:func:`leave_one_out_majority`), so
  every human ceiling and every model scored against the same references agree, and the one
  way deleting a person changes those references (:func:`person_deletions`), so stage 1's
  and stage 2's ceilings resample people alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from analysis.data.vocabulary import FINAL, PILOT
from analysis.stats.agreement import kappa_from_tables
from analysis.stats.resampling import Deletions, DesignTotals


class StudyDataError(ValueError):
    """A canonical table given to the study statistics is malformed; names table, row, field."""


# --------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------


def show(value: Any) -> str:
    """``repr`` of a table value as a person reads it (``6``, not ``np.int64(6)``)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def require_columns(df: pd.DataFrame, table: str, columns: Sequence[str]) -> None:
    """Raise :class:`StudyDataError` naming the table and the missing columns."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise StudyDataError(
            f"table {table}: missing column(s) {missing} (has {list(df.columns)}); "
            "see docs/data.md for the canonical columns"
        )


def require_unique(df: pd.DataFrame, table: str, key: Sequence[str]) -> None:
    """Raise :class:`StudyDataError` naming the first duplicated row of ``key``."""
    dup = df.duplicated(subset=list(key), keep=False)
    if dup.any():
        rows = list(df.index[dup.to_numpy()][:2])
        first = df.loc[dup].iloc[0]
        values = ", ".join(f"{k}={show(first[k])}" for k in key)
        raise StudyDataError(
            f"table {table}: rows {rows} repeat the key ({values}); fields {list(key)} "
            "must identify one row"
        )


def study_round(rounds: Sequence[str], table: str) -> str | None:
    """The round a round-less key (stage 1, stage 3) describes: ``final``, else ``pilot``.

    The study reports its final annotation; a dataset that only has a pilot (the published
    annotation-tool snapshot) reports the pilot, and the record says which round it is.
    Rounds are never pooled.
    """
    present = sorted(set(map(str, rounds)))
    for candidate in (FINAL, PILOT):
        if candidate in present:
            return candidate
    if not present:
        return None
    raise StudyDataError(f"table {table}: no 'final' or 'pilot' round (rounds: {present})")


# --------------------------------------------------------------------------------------
# 2x2 cells of rater pairs
# --------------------------------------------------------------------------------------


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` with NaN where ``den`` is 0 (an undefined resample, dropped later)."""
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


#: cells of a pair's 2x2 table (first rater, second rater): yes/yes, yes/no, no/yes, no/no
CELLS = ("11", "10", "01", "00")


def pair_cells(a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """Per-observation 2x2 indicators of two 0/1/NaN columns (all zero where either is NaN).

    Summed over observations (and resamples) they are the pair's contingency table, from
    which kappa, precision, recall and F1 follow (:func:`pair_kappa`, :func:`pair_prf`).
    """
    both = np.isfinite(a) & np.isfinite(b)
    a0, b0 = np.nan_to_num(a), np.nan_to_num(b)
    return {
        "11": both * a0 * b0,
        "10": both * a0 * (1 - b0),
        "01": both * (1 - a0) * b0,
        "00": both * (1 - a0) * (1 - b0),
    }


def pair_table(get: Callable[[str], np.ndarray], a: str, b: str) -> np.ndarray:
    """(b, 2, 2) tables of the pair whose cell totals are the columns ``"{a}|{b}|<cell>"``."""
    c = [get(f"{a}|{b}|{cell}") for cell in CELLS]
    return np.stack([np.stack([c[0], c[1]], axis=-1), np.stack([c[2], c[3]], axis=-1)], axis=-2)


def pair_kappa(get: Callable[[str], np.ndarray], a: str, b: str) -> np.ndarray:
    """Cohen's kappa of the pair from its cell totals (NaN where undefined)."""
    return kappa_from_tables(pair_table(get, a, b))


def pair_prf(get: Callable[[str], np.ndarray], a: str, b: str) -> dict[str, np.ndarray]:
    """Precision, recall, F1 of ``a`` (prediction) against ``b`` (reference, 1 = positive)."""
    tp, fp, fn = get(f"{a}|{b}|11"), get(f"{a}|{b}|10"), get(f"{a}|{b}|01")
    return {
        "precision": ratio(tp, tp + fp),
        "recall": ratio(tp, tp + fn),
        "f1": ratio(2 * tp, 2 * tp + fp + fn),
    }


def nanmean_arrays(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """Element-wise mean of equally shaped arrays, skipping NaNs (NaN where all are NaN)."""
    stacked = np.stack(list(arrays), axis=-1)
    ok = np.isfinite(stacked)
    n = ok.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.where(ok, stacked, 0.0).sum(axis=-1) / np.maximum(n, 1), np.nan)


def n_shared(tb: DesignTotals, a: str, b: str) -> int:
    """Observations on which both members of the pair ``(a, b)`` have a label."""
    return int(round(sum(tb.point_of(f"{a}|{b}|{cell}") for cell in CELLS)))


# --------------------------------------------------------------------------------------
# Leave-one-rater-out references
# --------------------------------------------------------------------------------------


#: the minimum number of *other* raters whose majority is a leave-one-out reference
MIN_OTHERS = 2


def leave_one_out_majority(
    votes: np.ndarray, rater: int, min_others: int = MIN_OTHERS
) -> tuple[np.ndarray, np.ndarray]:
    """The reference of one rater: the majority of the *other* raters on each item it voted on.

    ``votes`` is items x raters (0/1, NaN = no vote). The label is defined where ``rater``
    voted and at least ``min_others`` others did and they do not tie; a tie has no majority
    and is dropped (NaN), never turned into "no". Returns the label and the tie indicator
    (items dropped for a tie), so a record can say how many ties there were. One definition
    for every human ceiling and for every model scored against the same references, so the
    two are comparable by construction.
    """
    return loo_majority_from_counts(
        votes[:, rater],
        np.isfinite(votes).sum(axis=1),
        np.nansum(votes, axis=1),
        min_others,
    )


def loo_majority_from_counts(
    own: np.ndarray, n_voted: np.ndarray, n_yes: np.ndarray, min_others: int = MIN_OTHERS
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`leave_one_out_majority` from per-item vote counts of *all* raters.

    ``own`` is the rater's votes (0/1, NaN = no vote) on some items, ``n_voted`` and
    ``n_yes`` every rater's vote and YES counts on the same items (the rater included). The
    others' counts are the totals minus the rater's own vote, so a crowd of hundreds of
    raters needs no items x raters matrix: each rater costs only the items it voted on.
    """
    voted = np.isfinite(own)
    n_rest = n_voted - voted
    yes = n_yes - np.nan_to_num(own)
    eligible = (n_rest >= min_others) & voted
    tie = eligible & (2 * yes == n_rest)
    label = np.where(eligible & ~tie, (2 * yes > n_rest).astype(np.float64), np.nan)
    return label, tie


def loo_phrase(min_others: int = MIN_OTHERS) -> str:
    """The rule of :func:`leave_one_out_majority` as a method sentence states it."""
    return (
        "the majority of the other human raters of the same item (leave-one-human-out; at "
        f"least {min_others} of them; items where they tie dropped)"
    )


def person_deletions(
    names: Sequence[str],
    cols: Mapping[str, tuple[np.ndarray, np.ndarray]],
    owner: Mapping[str, str],
    votes: pd.DataFrame,
    n_voted: np.ndarray,
    n_yes: np.ndarray,
    stems: Callable[[str, np.ndarray, np.ndarray], list[tuple[str, np.ndarray]]],
) -> Deletions:
    """What deleting a person changes: its own columns go, and every other person's
    leave-one-out reference on an item it voted on is recomputed without its vote.

    ``cols`` are the named (rows, values) columns of the totals, ``owner`` the columns each
    person owns (its votes, its own reference's cells, models against that reference),
    ``votes`` every human vote (``row``, ``voter``, ``vote`` 0/1), and ``n_voted`` /
    ``n_yes`` each item's human vote and YES counts. ``stems(h, rows, own)`` names the
    columns compared with ``h``'s reference on ``rows`` (``h`` voting ``own`` there): a list
    of (stem, values), whose 2x2 cells with the reference are the columns
    ``"{stem}|<cell>"``.

    A leave-one-out entry depends on every voter of its item: the left-out person and the
    others whose votes make the reference. Deleting person ``a`` removes the columns it owns
    and, on each item ``a`` voted on, recomputes each other voter's reference from the voters
    left (:func:`loo_majority_from_counts`: with three voters per item the two left have no
    reference of at least two others, so their entries go). Deleting only the owned columns
    leaves out the references a person's vote is part of, so the people's share of a
    ceiling's variance goes missing (issue 34's coverage study: stage 2's ceilings and the
    models' scores against the rest covered 0.52-0.78 of simulated worlds that way).
    """
    index = {n: j for j, n in enumerate(names)}
    who, at, col, val = [], [], [], []

    def add(person: np.ndarray, rows: np.ndarray, name: str, change: np.ndarray) -> None:
        keep = change != 0
        if name in index and keep.any():
            who.append(person[keep])
            at.append(rows[keep])
            col.append(np.full(int(keep.sum()), index[name]))
            val.append(change[keep])

    for name, h in owner.items():
        rows, values = cols[name]
        add(np.full(rows.size, h, dtype=object), rows, name, -values)
    # every (deleted person a, other voter h) of an item both voted on
    pairs = votes.merge(votes, on="row", suffixes=("_a", "_h"))
    pairs = pairs[pairs["voter_a"] != pairs["voter_h"]]
    row = pairs["row"].to_numpy()
    deleted = pairs["voter_a"].to_numpy()
    n, yes = n_voted[row], n_yes[row]
    own = pairs["vote_h"].to_numpy()
    old, _ = loo_majority_from_counts(own, n, yes)
    new, _ = loo_majority_from_counts(own, n - 1, yes - pairs["vote_a"].to_numpy())
    changed = ~((old == new) | (np.isnan(old) & np.isnan(new)))
    keep = np.flatnonzero(changed)
    voter = pairs["voter_h"].to_numpy()[keep]
    order = np.argsort(voter, kind="stable")
    keep, voter = keep[order], voter[order]
    bounds = np.flatnonzero(np.r_[True, voter[1:] != voter[:-1], True]) if keep.size else [0]
    for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
        h, on = voter[start], keep[start:stop]
        r, a, before, after = row[on], deleted[on], old[on], new[on]
        for stem, x in stems(h, r, own[on]):
            cells_new, cells_old = pair_cells(x, after), pair_cells(x, before)
            for cell in CELLS:
                add(a, r, f"{stem}|{cell}", cells_new[cell] - cells_old[cell])
    if not val:
        return Deletions(
            np.empty(0, dtype=object),
            np.empty(0, dtype=np.int64),
            sparse.csr_matrix((0, len(names))),
        )
    change = np.concatenate(val)
    matrix = sparse.csr_matrix(
        (change, (np.arange(change.size), np.concatenate(col))), shape=(change.size, len(names))
    )
    return Deletions(np.concatenate(who), np.concatenate(at).astype(np.int64), matrix)
