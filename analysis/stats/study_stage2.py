"""Stage 2 (relevance matching): the study's numbers, one family per round of votes.

Input is the canonical ``relevance_votes`` table (one row per item and rater; ``rater_kind``
is ``human``, ``model`` or ``human_majority``). Each round (``final``, ``pilot``, ...) is
analysed on its own; rounds are never pooled. Per round:

* ``stage2.<round>.relevance_rate.{human_majority,human,<model>}``: shares of items marked
  relevant (``human`` = mean of the individual humans' rates).
* ``stage2.<round>.over_selection.<model>``: the model's YES count over the human-majority
  YES count on the items both label (= ratio of the two rates on shared items), with a test of
  a ratio of 1 on the interval's own resamples, Holm-adjusted across the round's models;
  ``over_selection.mean_model`` is the mean ratio over models.
* ``stage2.<round>.kappa.{human_human,model_model,human_model}``: group means of the pairwise
  Cohen's kappa matrix (the matrix itself is returned as a table for the figure), and
  ``stage2.<round>.kappa_diff.<a>_minus_<b>``: their paired differences with a test of 0.
* ``stage2.<round>.kappa_max.<group>`` and ``stage2.<round>.kappa_share_of_max.<group>``: the
  group means of the largest kappa each pair's two rates allow and of the share of it reached
  (kappa / kappa_max, the prevalence-robust measure that carries "models agree with each other
  more than with people": it holds the two raters' rates fixed), and
  ``stage2.<round>.kappa_share_of_max_diff.<a>_minus_<b>`` its paired differences.
* ``stage2.<round>.alpha.{human,model,all}``: Krippendorff's alpha over the people, the models
  and both.
* ``stage2.<round>.{kappa,f1,precision,recall}_vs_majority.<model>``: each model against the
  human-majority label (the study's definition).
* ``stage2.<round>.ceiling.{kappa,f1}_human_vs_rest``: leave-one-human-out ceiling, each human
  against the majority of at least two other humans (ties dropped), averaged over humans;
  ``stage2.<round>.vs_rest.{kappa,f1}.<model>``: each model against exactly those references;
  ``stage2.<round>.vs_rest.gap_{kappa,f1}.<model>``: the paired difference model minus the
  left-out human, averaged over humans, with a test of 0.

The human majority is the published label where the round has one (``human_majority`` rows);
otherwise it is computed: relevant when more than half of the item's human votes say so, on
items with at least two human votes (a tie is *not relevant*, as "more than half" requires).

Designs (``stats.designs``): each item pairs a sampled user with a sampled prompt, so users
and prompts are crossed random factors of every statistic (``relevance_items``); statistics
of people's own votes (their rate, agreement among people and with models, the ceilings and
the gaps to them) also resample the annotators (``relevance_people``); the models and the
published human-majority label are fixed. All statistics of a round come from one set of
resamples (seeded), so differences and ratios are paired; the pairwise matrix is resampled
with the same seed and factors by :func:`analysis.stats.resampling.pairwise_kappa`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analysis.data.vocabulary import HUMAN, HUMAN_MAJORITY, MODEL, VOTE_KINDS
from analysis.provenance import Record
from analysis.stats.attainable_kappa import kappa_max_from_tables, kappa_share_of_max_from_tables
from analysis.stats.records import (
    AGREEMENT,
    NONNEGATIVE,
    SHARE,
    NullTest,
    Statistic,
    key_part,
    make_records,
    read_interval,
)
from analysis.stats.resampling import (
    Deletions,
    DesignTotals,
    PairwiseKappas,
    Plan,
    Resamples,
    Units,
    agreement,
    cell_labels,
    pairwise_kappa,
    plan,
    totals,
)
from analysis.stats.settings import StatsSettings
from analysis.stats.study_common import (
    CELLS,
    StudyDataError,
    loo_majority_from_counts,
    loo_phrase,
    n_shared,
    nanmean_arrays,
    pair_cells,
    pair_kappa,
    pair_prf,
    person_deletions,
    ratio,
    require_columns,
    require_unique,
    show,
)

MODULE = "analysis.stats.study_stage2"
VOTE_COLUMNS = ("item_id", "user_id", "prompt_id", "rater", "rater_kind", "round", "vote")
RATER_KINDS = VOTE_KINDS
#: the design of statistics against the majority or of models alone, and of people's votes
ITEMS, PEOPLE = "relevance_items", "relevance_people"


@dataclass(frozen=True)
class RoundVotes:
    """One round's votes, the models' as a matrix, the humans' per rater, plus the majority.

    The humans are not an items x raters matrix: a crowd of 6K annotators on K x 3,824
    items would make it hundreds of millions of cells, nearly all empty. Each human keeps the
    items it voted on, and each item its human vote and YES counts, which is all the
    majority and the leave-one-out references need.
    """

    round: str
    items: np.ndarray  # (n,) item ids, sorted
    humans: tuple[str, ...]
    models: tuple[str, ...]
    model_votes: np.ndarray  # (n, M) 0/1, NaN = no vote
    human_votes: tuple[tuple[np.ndarray, np.ndarray], ...]  # per human: item rows, 0/1 votes
    human_n: np.ndarray  # (n,) human votes per item
    human_yes: np.ndarray  # (n,) human YES votes per item
    majority: np.ndarray  # (n,) 0/1, NaN where the item has no majority label
    majority_source: str  # "published" | "computed" | "none"
    units: Units  # each item's user and prompt; the humans are the annotators
    long: pd.DataFrame  # item, rater, label and each item's factors: the individual votes

    @property
    def raters(self) -> tuple[str, ...]:
        return self.humans + self.models

    def column(self, model: str) -> np.ndarray:
        """A model's votes on every item (NaN = no vote)."""
        return self.model_votes[:, self.models.index(model)]

    def human(self, human: str) -> tuple[np.ndarray, np.ndarray]:
        """A human's item rows (sorted) and 0/1 votes on them."""
        return self.human_votes[self.humans.index(human)]

    @property
    def prefix(self) -> str:
        return f"stage2.{key_part(self.round)}"


@dataclass(frozen=True)
class Stage2Statistics:
    """The records of every round and, per round, the pairwise kappa matrix (long format)."""

    records: list[Record]
    kappa_matrices: dict[str, pd.DataFrame]


# --------------------------------------------------------------------------------------
# Input
# --------------------------------------------------------------------------------------


def round_votes(votes: pd.DataFrame, round_name: str) -> RoundVotes:
    """Check one round's votes and arrange them for the statistics."""
    require_columns(votes, "relevance_votes", VOTE_COLUMNS)
    df = votes.loc[votes["round"].astype(str) == round_name, list(VOTE_COLUMNS)].copy()
    for col in ("item_id", "user_id", "prompt_id", "rater", "rater_kind"):
        df[col] = df[col].astype(str)
    bad_kind = ~df["rater_kind"].isin(RATER_KINDS)
    if bad_kind.any():
        row = df.index[bad_kind.to_numpy()][0]
        raise StudyDataError(
            f"table relevance_votes row {row!r}: field 'rater_kind' = "
            f"{show(df.loc[row, 'rater_kind'])} is not one of {RATER_KINDS}"
        )
    null_vote = df["vote"].isna()
    if null_vote.any():
        row = df.index[null_vote.to_numpy()][0]
        raise StudyDataError(f"table relevance_votes row {row!r}: field 'vote' is missing")
    require_unique(df, "relevance_votes", ("item_id", "rater"))
    kinds = df.groupby("rater")["rater_kind"].nunique()
    if (kinds > 1).any():
        rater = kinds.index[(kinds > 1).to_numpy()][0]
        raise StudyDataError(
            f"table relevance_votes, round {round_name}: rater {rater!r} has several "
            "rater_kind values (field 'rater_kind')"
        )
    per_item = df.groupby("item_id")[["user_id", "prompt_id"]].nunique()
    if (per_item > 1).to_numpy().any():
        item = per_item.index[(per_item > 1).any(axis=1).to_numpy()][0]
        raise StudyDataError(
            f"table relevance_votes, round {round_name}: item {item!r} has several "
            "user_id/prompt_id values (fields 'user_id', 'prompt_id')"
        )
    df["vote"] = df["vote"].astype(bool)

    items = np.asarray(sorted(df["item_id"].unique()), dtype=object)
    item_pos = pd.Index(items)
    kind_of = df.groupby("rater")["rater_kind"].first()
    humans = tuple(sorted(kind_of.index[(kind_of == HUMAN).to_numpy()]))
    models = tuple(sorted(kind_of.index[(kind_of == MODEL).to_numpy()]))
    indiv = df[df["rater_kind"] != HUMAN_MAJORITY]
    model_rows = indiv[indiv["rater_kind"] == MODEL]
    matrix = np.full((len(items), len(models)), np.nan)
    matrix[
        item_pos.get_indexer(model_rows["item_id"]),
        pd.Index(models).get_indexer(model_rows["rater"]),
    ] = model_rows["vote"].to_numpy(dtype=np.float64)
    human_rows = indiv[indiv["rater_kind"] == HUMAN]
    h_item = item_pos.get_indexer(human_rows["item_id"])
    h_rater = pd.Index(humans).get_indexer(human_rows["rater"])
    h_vote = human_rows["vote"].to_numpy(dtype=np.float64)
    order = np.lexsort((h_item, h_rater))
    bounds = np.searchsorted(h_rater[order], np.arange(len(humans) + 1))
    human_votes = tuple(
        zip(
            np.split(h_item[order], bounds[1:-1]),
            np.split(h_vote[order], bounds[1:-1]),
            strict=True,
        )
    )
    n_h = np.bincount(h_item, minlength=len(items))
    yes = np.bincount(h_item, weights=h_vote, minlength=len(items))

    published = df[df["rater_kind"] == HUMAN_MAJORITY]
    majority = np.full(len(items), np.nan)
    if len(published):
        require_unique(published, "relevance_votes (human_majority rows)", ("item_id",))
        majority[item_pos.get_indexer(published["item_id"])] = published["vote"].to_numpy(
            dtype=np.float64
        )
        source = "published"
    elif humans:
        majority = np.where(n_h >= 2, (yes > n_h / 2.0).astype(np.float64), np.nan)
        source = "computed" if np.isfinite(majority).any() else "none"
    else:
        source = "none"

    item_meta = df.groupby("item_id")[["user_id", "prompt_id"]].first().reindex(items)
    users = item_meta["user_id"].to_numpy(dtype=object)
    prompts = item_meta["prompt_id"].to_numpy(dtype=object)
    long = indiv.rename(columns={"item_id": "item", "vote": "label"})[["item", "rater", "label"]]
    rows = item_pos.get_indexer(long["item"])
    long = long.assign(
        users=users[rows], prompts=prompts[rows], cells=cell_labels(users, prompts)[rows]
    )
    return RoundVotes(
        round=round_name,
        items=items,
        humans=humans,
        models=models,
        model_votes=matrix,
        human_votes=human_votes,
        human_n=n_h,
        human_yes=yes,
        majority=majority,
        majority_source=source,
        units=Units(n=len(items), users=users, prompts=prompts, annotators=humans),
        long=long.reset_index(drop=True),
    )


def _sparse_phrase(groups: Mapping[str, str], ga: str, gb: str, kept: int, minimum: int) -> str:
    """Says how many pairs of a block shared too few items to get a kappa (none: nothing)."""
    sizes = pd.Series(list(groups.values())).value_counts()
    na, nb = int(sizes.get(ga, 0)), int(sizes.get(gb, 0))
    left = (na * (na - 1) // 2 if ga == gb else na * nb) - kept
    return f"; {left} pairs sharing fewer than {minimum} items left out" if left > 0 else ""


def _left_out_phrase(models: list[str]) -> str:
    """The method's note on models with a configured caveat, left out of an aggregate."""
    if not models:
        return ""
    return f" (left out, having a caveat in stages.caveats: {', '.join(models)})"


def _majority_phrase(rv: RoundVotes) -> str:
    if rv.majority_source == "published":
        return "the published human-majority label"
    return "the computed human majority (more than half of the item's human votes)"


# --------------------------------------------------------------------------------------
# One resampling pass: the per-item columns every statistic of the round is built from
# --------------------------------------------------------------------------------------


def rest_majority(rv: RoundVotes, human: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reference of one human: the majority of the other humans on each item it voted.

    :func:`analysis.stats.study_common.loo_majority_from_counts` (the definition of
    ``leave_one_out_majority``: at least two others; ties dropped) on the human's items.
    Returns those item rows, the label (NaN where undefined) and the tie indicator; on every
    other item the reference is undefined.
    """
    rows, own = rv.human(human)
    label, tie = loo_majority_from_counts(own, rv.human_n[rows], rv.human_yes[rows])
    return rows, label, tie


def rest_name(human: str) -> str:
    """The column-name stem of a human's leave-one-out reference in the round totals."""
    return f"rest:{human}"


def restricted_name(human: str, model: str) -> str:
    """The stem of a human's votes kept on the items ``model`` voted on (for the gaps)."""
    return f"{human}@{model}"


def paired_name(human: str) -> str:
    """The stem of a human's reference as the gaps read it: the same leave-one-out reference
    as :func:`rest_name`, in columns that deleting another person leaves as they are.

    A gap is a paired difference: the model and the left-out person scored against the same
    reference, so a co-voter's vote in that reference moves both of its sides. Deleting a
    person deletes its own paired terms. Rebuilding the other voters' references as well
    (the ceilings' and the scores against the rest's deletions) would drop every entry of
    each item the person voted on (with three voters the two left have no reference of two),
    whose item noise made the gaps' intervals over-cover by far, and without person effects
    too (``benchmarks/bench_people_parts.py``, ``docs/statistics.md``).
    """
    return f"paired:{human}"


@dataclass(frozen=True)
class RoundTotals:
    """A round's resampled totals (under the people design) and the two designs it serves."""

    tb: DesignTotals
    items: Plan  # statistics against the majority, or of models alone
    people: Plan  # statistics of people's own votes
    settings: StatsSettings

    def stat(self, fn: Any, people: bool = False) -> Resamples:
        """A statistic of the totals under the people design, or under the items design."""
        res = self.tb.stat(fn)
        return res if people else res.under(self.items)


def round_totals(rv: RoundVotes, settings: StatsSettings) -> RoundTotals:
    """Resampled totals of every per-item column a round's statistics need.

    A human's columns are zero off the items it voted on, so each is kept as (rows, values)
    on those items: memory and time grow with the votes, not with items x raters. Each of
    them belongs to its human (its votes, its leave-one-out reference, the models against
    that reference): deleting an annotator deletes its columns, and rebuilds the other
    humans' references on its items, except in the gaps' paired columns (:func:`paired_name`).
    """
    cols: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    owner: dict[str, str] = {}

    def put(name: str, rows: np.ndarray, values: np.ndarray, human: str | None = None) -> None:
        keep = values != 0
        cols[name] = (rows[keep], values[keep])
        if human is not None:
            owner[name] = human

    every = np.arange(len(rv.items))
    for h in rv.humans:
        rows, own = rv.human(h)
        put(f"yes|{h}", rows, own, h)
        put(f"n|{h}", rows, np.ones(rows.size), h)
    for name, col in [(m, rv.column(m)) for m in rv.models] + [("majority", rv.majority)]:
        put(f"yes|{name}", every, np.nan_to_num(col))
        put(f"n|{name}", every, np.isfinite(col).astype(np.float64))
    for m in rv.models:
        for cell, v in pair_cells(rv.column(m), rv.majority).items():
            put(f"{m}|majority|{cell}", every, v)
    if len(rv.humans) >= 2:
        for h in rv.humans:
            rows, rest, _ = rest_majority(rv, h)
            if not np.isfinite(rest).any():
                continue
            _, own = rv.human(h)
            for cell, v in pair_cells(own, rest).items():
                put(f"{h}|rest|{cell}", rows, v, h)
            # models against the same reference; for the gaps, the model and the human on
            # the model's items against it again, under the stem deletions leave alone
            for m in rv.models:
                model = rv.column(m)[rows]
                on_m = np.where(np.isfinite(model), own, np.nan)
                for cell, v in pair_cells(model, rest).items():
                    put(f"{m}|{rest_name(h)}|{cell}", rows, v, h)
                    put(f"{m}|{paired_name(h)}|{cell}", rows, v, h)
                for cell, v in pair_cells(on_m, rest).items():
                    put(f"{restricted_name(h, m)}|{paired_name(h)}|{cell}", rows, v, h)
    people = plan(settings, PEOPLE, rv.units)
    names = tuple(cols)
    deletions = None
    if people.annotators:
        deletions = _person_deletions(rv, names, cols, owner)
    tb = totals(people, cols, len(rv.items), deletions=deletions)
    return RoundTotals(tb, plan(settings, ITEMS, rv.units), people, settings)


def _person_deletions(
    rv: RoundVotes,
    names: tuple[str, ...],
    cols: Mapping[str, tuple[np.ndarray, np.ndarray]],
    owner: Mapping[str, str],
) -> Deletions:
    """What deleting a person changes (:func:`person_deletions`): its own columns go, and on
    each item it voted on every other voter's reference is rebuilt without its vote, with
    the models' scores against that reference (not the gaps' paired columns:
    :func:`paired_name`)."""
    votes = pd.DataFrame(
        {
            "row": np.concatenate([r for r, _ in rv.human_votes]).astype(np.int64),
            "voter": np.concatenate(
                [
                    np.full(r.size, h, dtype=object)
                    for h, (r, _) in zip(rv.humans, rv.human_votes, strict=True)
                ]
            ),
            "vote": np.concatenate([v for _, v in rv.human_votes]).astype(np.float64),
        }
    )

    def stems(h: str, r: np.ndarray, o: np.ndarray) -> list[tuple[str, np.ndarray]]:
        return [(f"{h}|rest", o)] + [(f"{m}|{rest_name(h)}", rv.column(m)[r]) for m in rv.models]

    return person_deletions(names, cols, owner, votes, rv.human_n, rv.human_yes, stems)


# --------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------


def relevance_rates(rv: RoundVotes, rt: RoundTotals) -> list[Statistic]:
    """Share of items marked relevant: by the human majority, by each model, per human."""
    out: list[Statistic] = []
    code = f"{MODULE}:relevance_rates"
    tb = rt.tb
    named = [("majority", "human_majority")] + [(m, key_part(m)) for m in rv.models]
    for name, key in named:
        n = int(round(tb.point_of(f"n|{name}")))
        if n == 0:
            continue
        who = _majority_phrase(rv) if name == "majority" else f"model {name}"
        out.append(
            Statistic(
                key=f"{rv.prefix}.relevance_rate.{key}",
                estimate=rt.stat(lambda g, name=name: ratio(g(f"yes|{name}"), g(f"n|{name}"))),
                fmt=".1%",
                what=f"share of the {n} {rv.round}-round items marked relevant by {who}",
                code=code,
                n=n,
                extra=rt.settings.with_caveat(
                    name, {"round": rv.round, "yes": int(round(tb.point_of(f"yes|{name}")))}
                ),
                units=tb.units_with(f"n|{name}"),
                unit="items",
            )
        )
    if rv.humans:
        humans = rv.humans
        per_human = {h: tb.point_of(f"yes|{h}") / tb.point_of(f"n|{h}") for h in humans}
        n = int(round(sum(tb.point_of(f"n|{h}") for h in humans)))
        out.append(
            Statistic(
                key=f"{rv.prefix}.relevance_rate.human",
                estimate=rt.stat(
                    lambda g: nanmean_arrays([ratio(g(f"yes|{h}"), g(f"n|{h}")) for h in humans]),
                    people=True,
                ),
                fmt=".1%",
                what=(
                    f"mean over {len(humans)} human raters of each rater's share of "
                    f"{rv.round}-round items marked relevant ({n} votes)"
                ),
                code=code,
                n=n,
                extra={"round": rv.round, "per_rater": per_human, "n_raters": len(humans)},
                limits=SHARE,
            )
        )
    return out


def _over_selection(g: Any, m: str) -> np.ndarray:
    """A model's YES votes over the majority's YES votes on the items both label."""
    return ratio(
        g(f"{m}|majority|11") + g(f"{m}|majority|10"),
        g(f"{m}|majority|11") + g(f"{m}|majority|01"),
    )


def over_selection(rv: RoundVotes, rt: RoundTotals) -> list[Statistic]:
    """Model YES count over human-majority YES count on shared items; test of a ratio of 1.

    The test of "no over-selection" (ratio 1) uses the ratio's own design (users x prompts),
    adjusted across the round's models (family ``over_selection``): the item-level McNemar
    test it replaces treated thousands of items from a few dozen users as independent.
    """
    code = f"{MODULE}:over_selection"
    settings, tb = rt.settings, rt.tb
    out: list[Statistic] = []
    family = []
    for m in rv.models:
        n = n_shared(tb, m, "majority")
        if n == 0:
            continue
        res = rt.stat(lambda g, m=m: _over_selection(g, m))
        if not np.isfinite(res.estimate):
            continue  # the majority marks nothing relevant on the shared items
        family.append(m)
        cell = {c: int(round(tb.point_of(f"{m}|majority|{c}"))) for c in CELLS}
        out.append(
            Statistic(
                key=f"{rv.prefix}.over_selection.{key_part(m)}",
                estimate=res,
                fmt=".2f",
                what=(
                    f"over-selection of {m}: its YES votes divided by the YES votes of "
                    f"{_majority_phrase(rv)} on the {n} items both label (ratio of the "
                    "two relevance rates)"
                ),
                code=code,
                n=n,
                extra=settings.with_caveat(
                    m,
                    {
                        "round": rv.round,
                        "model_yes_majority_no": cell["10"],
                        "model_no_majority_yes": cell["01"],
                    },
                ),
                test=NullTest(1.0, "over_selection", rv.round),
                limits=NONNEGATIVE,
                unit="items",
            )
        )
    models = [m for m in family if settings.in_aggregates(m)]
    left_out = [m for m in family if not settings.in_aggregates(m)]
    if models:
        out.append(
            Statistic(
                key=f"{rv.prefix}.over_selection.mean_model",
                estimate=rt.stat(lambda g: nanmean_arrays([_over_selection(g, m) for m in models])),
                fmt=".2f",
                what=(
                    f"mean over {len(models)} models of each model's over-selection ratio "
                    f"against {_majority_phrase(rv)}{_left_out_phrase(left_out)}"
                ),
                code=code,
                n=int(round(tb.point_of("n|majority"))),
                extra={
                    "round": rv.round,
                    "models": models,
                    "excluded_models": left_out,
                    "per_model": {m: float(_over_selection(tb.getter(), m)[0]) for m in models},
                },
                limits=NONNEGATIVE,
                unit="items",
            )
        )
    return out


def agreement_with_majority(rv: RoundVotes, rt: RoundTotals) -> list[Statistic]:
    """Each model against the human majority: Cohen's kappa, precision, recall, F1."""
    code = f"{MODULE}:agreement_with_majority"
    settings, tb = rt.settings, rt.tb
    out: list[Statistic] = []
    for m in rv.models:
        n = n_shared(tb, m, "majority")
        if n == 0:
            continue
        ref = _majority_phrase(rv)
        extra = settings.with_caveat(m, {"round": rv.round})
        out.append(
            Statistic(
                key=f"{rv.prefix}.kappa_vs_majority.{key_part(m)}",
                estimate=rt.stat(lambda g, m=m: pair_kappa(g, m, "majority")),
                fmt=".2f",
                what=f"Cohen's kappa of {m} and {ref} on the {n} items both label",
                code=code,
                n=n,
                extra=extra,
                limits=AGREEMENT,
                unit="items",
            )
        )
        for stat in ("precision", "recall", "f1"):
            name = "F1" if stat == "f1" else stat
            # precision's units are the items the model says YES on, recall's the majority's
            den = {"precision": ("11", "10"), "recall": ("11", "01")}.get(stat)
            units = None
            if den is not None:
                units = tb.plan.units_with(
                    sum(tb.values[:, tb.col(f"{m}|majority|{c}")].toarray().ravel() for c in den)
                )
            out.append(
                Statistic(
                    key=f"{rv.prefix}.{stat}_vs_majority.{key_part(m)}",
                    estimate=rt.stat(lambda g, m=m, stat=stat: pair_prf(g, m, "majority")[stat]),
                    fmt=".3f",
                    what=(
                        f"{name} of {m}'s YES votes against {ref} as the reference "
                        f"(positive class: relevant), on the {n} items both label"
                    ),
                    code=code,
                    n=n,
                    extra=extra,
                    units=units,
                    limits=SHARE,
                    unit="items",
                )
            )
    return out


def _loo_humans(rv: RoundVotes, tb: DesignTotals) -> list[str]:
    """Humans with a leave-one-out reference on at least one item they voted on."""
    if len(rv.humans) < 2:
        return []
    return [h for h in rv.humans if f"{h}|rest|11" in tb and n_shared(tb, h, "rest") > 0]


def _loo_ties(rv: RoundVotes, humans: list[str]) -> dict[str, int | float]:
    """How many human-item pairs were dropped because the other humans tied, and their share."""
    ties = eligible = 0
    for h in humans:
        _, label, tie = rest_majority(rv, h)
        ties += int(tie.sum())
        eligible += int(tie.sum() + np.isfinite(label).sum())
    return {
        "tied_pairs_dropped": ties,
        "tied_share": ties / eligible if eligible else None,
        "eligible_pairs": eligible,
    }


def human_ceiling(rv: RoundVotes, rt: RoundTotals) -> list[Statistic]:
    """Leave-one-human-out: each human against the majority of the other humans.

    The reference of human h is :func:`rest_majority` (the one definition, shared with
    :func:`scores_vs_rest`, which scores the models against exactly these references).
    """
    tb = rt.tb
    humans = _loo_humans(rv, tb)
    if not humans:
        return []
    code = f"{MODULE}:human_ceiling"
    n = int(sum(n_shared(tb, h, "rest") for h in humans))
    ties = _loo_ties(rv, humans)
    rule = (
        f"human ceiling: each of the {len(humans)} human raters against its reference, "
        f"{loo_phrase()}, unweighted mean over humans ({ties['tied_pairs_dropped']} "
        "human-item pairs dropped for a tie)"
    )
    get = tb.getter()
    per_kappa = {h: float(pair_kappa(get, h, "rest")[0]) for h in humans}
    per_f1 = {h: float(pair_prf(get, h, "rest")["f1"][0]) for h in humans}
    extra = {"round": rv.round, "n_raters": len(humans), **ties}
    return [
        Statistic(
            key=f"{rv.prefix}.ceiling.kappa_human_vs_rest",
            estimate=rt.stat(
                lambda g: nanmean_arrays([pair_kappa(g, h, "rest") for h in humans]), people=True
            ),
            fmt=".2f",
            what=f"{rule}: Cohen's kappa ({n} human-item pairs)",
            code=code,
            n=n,
            extra={**extra, "per_rater": per_kappa},
            limits=AGREEMENT,
        ),
        Statistic(
            key=f"{rv.prefix}.ceiling.f1_human_vs_rest",
            estimate=rt.stat(
                lambda g: nanmean_arrays([pair_prf(g, h, "rest")["f1"] for h in humans]),
                people=True,
            ),
            fmt=".3f",
            what=(
                f"{rule}: F1 of the human's votes with the reference as truth "
                f"({n} human-item pairs)"
            ),
            code=code,
            n=n,
            extra={**extra, "per_rater": per_f1},
            limits=SHARE,
        ),
    ]


#: the two scores of :func:`scores_vs_rest`: name -> (score of a pair's totals, fmt, label)
_VS_REST_SCORES = {
    "kappa": (pair_kappa, ".2f", "Cohen's kappa", AGREEMENT),
    "f1": (lambda g, a, b: pair_prf(g, a, b)["f1"], ".3f", "F1 (the reference as truth)", SHARE),
}


def scores_vs_rest(rv: RoundVotes, rt: RoundTotals) -> list[Statistic]:
    """Each model against the human ceiling's own references, and its paired gap to people.

    For each human h with a leave-one-out reference, the model is scored against that
    reference on the items the model voted on; ``vs_rest.<score>.<model>`` is the unweighted
    mean over humans. ``vs_rest.gap_<score>.<model>`` is the mean over humans of
    ``score(model, ref_h) - score(h, ref_h)``, both on the same items, on the same resamples:
    the comparison "does a model match the references as well as a person does" with its
    own interval and a test of 0, adjusted across the round's models (family ``gap_<score>``).
    Its people part deletes the left-out people's own paired terms, the references staying
    as they are (:func:`paired_name`).
    """
    settings, tb = rt.settings, rt.tb
    humans = _loo_humans(rv, tb)
    if not humans:
        return []
    code = f"{MODULE}:scores_vs_rest"
    ties = _loo_ties(rv, humans)
    out: list[Statistic] = []
    get = tb.getter()
    for m in rv.models:
        hs = [h for h in humans if n_shared(tb, m, rest_name(h)) > 0]
        if not hs:
            continue
        n = int(sum(n_shared(tb, m, rest_name(h)) for h in hs))
        for name, (score, fmt, label, limits) in _VS_REST_SCORES.items():
            per = {h: float(score(get, m, rest_name(h))[0]) for h in hs}
            extra = settings.with_caveat(
                m, {"round": rv.round, "n_raters": len(hs), "per_rater": per, **ties}
            )
            out.append(
                Statistic(
                    key=f"{rv.prefix}.vs_rest.{name}.{key_part(m)}",
                    estimate=rt.stat(
                        lambda g, m=m, hs=hs, score=score: nanmean_arrays(
                            [score(g, m, rest_name(h)) for h in hs]
                        ),
                        people=True,
                    ),
                    fmt=fmt,
                    what=(
                        f"{label} of {m} against each of the {len(hs)} human raters' "
                        f"references, {loo_phrase()}, on the items of the reference {m} "
                        f"voted on, unweighted mean over humans ({n} reference-item pairs); "
                        "the same references as the human ceiling "
                        f"{rv.prefix}.ceiling.{name}_human_vs_rest"
                    ),
                    code=code,
                    n=n,
                    extra=extra,
                    limits=limits,
                )
            )
            out.append(
                Statistic(
                    key=f"{rv.prefix}.vs_rest.gap_{name}.{key_part(m)}",
                    estimate=rt.stat(
                        lambda g, m=m, hs=hs, score=score: nanmean_arrays(
                            [
                                score(g, m, paired_name(h))
                                - score(g, restricted_name(h, m), paired_name(h))
                                for h in hs
                            ]
                        ),
                        people=True,
                    ),
                    fmt="+" + fmt.lstrip("+"),
                    what=(
                        f"{label} of {m} minus that of the human, each against the human's "
                        f"reference ({loo_phrase()}) on the items of the reference {m} voted "
                        f"on, unweighted mean over {len(hs)} humans ({n} reference-item pairs; "
                        "negative: the model matches the references less well than the people "
                        "they leave out; deleting a person deletes its own paired terms, the "
                        "references staying as they are)"
                    ),
                    code=code,
                    n=n,
                    extra=settings.with_caveat(m, {"round": rv.round, "n_raters": len(hs)}),
                    test=NullTest(0.0, f"gap_{name}", rv.round),
                )
            )
    return out


def kappa_group_means(rv: RoundVotes, rt: RoundTotals) -> tuple[list[Statistic], pd.DataFrame]:
    """Pairwise Cohen's kappa over all human and model raters, and its group means.

    Returns the ``stage2.<round>.kappa.*`` statistics and the matrix in long format (both
    orders of every pair): round, rater_a, rater_b, kind_a, kind_b, order_a, order_b,
    kappa, ci_low, ci_high, n_items. A cell whose pair shares no item, or whose kappa is
    undefined (one category), has NaN kappa; such cells are left out of the group means.
    Each cell is one pair's kappa (its two raters fixed) under the items design; a group mean
    with people in it also deletes one annotator at a time.
    """
    settings = rt.settings
    raters = rv.raters
    empty = pd.DataFrame(columns=_MATRIX_COLUMNS)
    if len(raters) < 2 or rv.long.empty:
        return [], empty
    kinds, groups, left_out = _rater_groups(rv, settings)
    boot = pairwise_kappa(
        rt.people,
        rv.long,
        groups=groups,
        raters=list(raters),
        categories=[False, True],
        min_shared=settings.min_shared_items,
    )
    est = np.asarray(boot.matrix.estimate)
    cells = boot.matrix.under(rt.items)
    order = {r: i for i, r in enumerate(raters)}
    bounds = [_cell_bounds(cells.component(p), settings) for p in range(len(boot.pairs))]
    rows = []
    for p, (a, b) in enumerate(boot.pairs):
        for x, y in ((a, b), (b, a)):
            rows.append(
                {
                    "round": rv.round,
                    "rater_a": x,
                    "rater_b": y,
                    "kind_a": kinds[x],
                    "kind_b": kinds[y],
                    "order_a": order[x],
                    "order_b": order[y],
                    "kappa": float(est[p]),
                    "ci_low": bounds[p][0],
                    "ci_high": bounds[p][1],
                    "n_items": int(boot.n_shared[p]),
                    "in_group_means": groups[x] != "excluded" and groups[y] != "excluded",
                }
            )
    matrix = (
        pd.DataFrame(rows, columns=_MATRIX_COLUMNS)
        .sort_values(["order_a", "order_b"])
        .reset_index(drop=True)
    )

    out, _ = pair_group_means(rv, rt, "kappa", boot, groups, left_out)
    return out, matrix


def _rater_groups(
    rv: RoundVotes, settings: StatsSettings
) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """Each rater's kind, its group in the group means (a model with a caveat is in the matrix,
    the figure, but in no group mean: group ``excluded``), and the models so left out."""
    kinds = {r: HUMAN for r in rv.humans} | {r: MODEL for r in rv.models}
    groups = {r: (k if settings.in_aggregates(r) else "excluded") for r, k in kinds.items()}
    return kinds, groups, [r for r in rv.models if not settings.in_aggregates(r)]


def _group_sizes(rv: RoundVotes, settings: StatsSettings) -> tuple[dict[str, int], dict[str, str]]:
    """Items each group mean rests on, and the words for its raters."""
    counted = np.asarray([settings.in_aggregates(m) for m in rv.models], dtype=bool)
    n_h = rv.human_n
    n_m = np.isfinite(rv.model_votes)[:, counted].sum(axis=1)
    n_counted = int(counted.sum())
    n_items = {
        "human_human": int((n_h >= 2).sum()),
        "model_model": int((n_m >= 2).sum()),
        "human_model": int(((n_h >= 1) & (n_m >= 1)).sum()),
    }
    labels = {
        "human_human": f"{len(rv.humans)} human raters",
        "model_model": f"{n_counted} models",
        "human_model": f"{len(rv.humans)} humans x {n_counted} models",
    }
    return n_items, labels


@dataclass(frozen=True)
class PairStatistic:
    """A statistic of each rater pair's contingency table whose group means are reported.

    ``table``: the statistic of a ``(..., q, q)`` table (None: Cohen's kappa); ``mean``: the
    group mean's words, with ``{n}`` pairs of ``{who}``; ``difference``: the paired
    differences' key part, family and words (``{a}`` minus ``{b}``), or None.
    """

    table: Callable[[np.ndarray], np.ndarray] | None
    mean: str
    difference: tuple[str, str, str] | None = None
    #: the function of this module that makes its group means (the records' code)
    maker: str = "attainable_agreement"
    #: the values a group mean can take (a t interval is clipped to them): a kappa's -1 to 1;
    #: kappa_max's 0 to 1 (the most agreement two rates allow is never below chance's)
    limits: tuple[float, float] = AGREEMENT


#: the pair statistics of a round: key part -> what it is. Cohen's kappa; the largest kappa a
#: pair's two rates of saying relevant allow (kappa_max; people say it about a fifth of the
#: time and the models two to three times as often, which caps a human-model pair's kappa
#: whatever it thinks of *which* attributes matter: :mod:`analysis.stats.attainable_kappa`);
#: and the share of it reached (kappa / kappa_max), which holds the two rates fixed and so
#: carries the comparison of people with models beyond the difference in rates
PAIR_STATISTICS = {
    "kappa": PairStatistic(
        None,
        "mean pairwise Cohen's kappa over the {n} pairs of {who}",
        (
            "kappa_diff",
            "kappa_differences",
            "mean pairwise Cohen's kappa of the {a} pairs minus that of the {b} pairs",
        ),
        "kappa_group_means",
    ),
    "kappa_max": PairStatistic(
        kappa_max_from_tables,
        "mean over the {n} pairs of {who} of the largest Cohen's kappa the pair's two "
        "marginal rates allow (kappa_max)",
        limits=SHARE,
    ),
    "kappa_share_of_max": PairStatistic(
        kappa_share_of_max_from_tables,
        "mean over the {n} pairs of {who} of the share of that largest kappa the pair "
        "reaches (kappa / kappa_max: agreement on which items, given the two raters' rates)",
        (
            "kappa_share_of_max_diff",
            "kappa_share_differences",
            "mean share of the attainable kappa (kappa / kappa_max) of the {a} pairs minus "
            "that of the {b} pairs",
        ),
    ),
}


def pair_group_means(
    rv: RoundVotes,
    rt: RoundTotals,
    part: str,
    boot: PairwiseKappas,
    groups: Mapping[str, str],
    left_out: list[str],
) -> tuple[list[Statistic], dict[str, Resamples]]:
    """The group means of one pair statistic (``PAIR_STATISTICS[part]``) and their paired
    differences, from its pairwise matrix ``boot``; the means by group as well.

    A group mean with people in it has the people design (annotators deleted as well); the
    models' alone the items design.
    """
    settings = rt.settings
    spec = PAIR_STATISTICS[part]
    n_items, labels = _group_sizes(rv, settings)
    est = np.asarray(boot.matrix.estimate)
    means = {
        key: (res if key != "model_model" else res.under(rt.items))
        for key, res in boot.group_means.items()
        if key in labels  # not a block with a caveated model
    }
    out: list[Statistic] = []
    for key, res in means.items():
        ga, gb = key.split("_")
        pairs = [(a, b, float(est[p])) for p, (a, b) in enumerate(boot.pairs)]
        block = [(a, b, k) for a, b, k in pairs if {groups[a], groups[b]} == {ga, gb}]
        defined = [(a, b, k) for a, b, k in block if np.isfinite(k)]
        out.append(
            Statistic(
                key=f"{rv.prefix}.{part}.{key}",
                estimate=res,
                fmt=".2f",
                what=(
                    spec.mean.format(n=len(defined), who=labels[key])
                    + f" ({rv.round} round; each pair on the items it shares)"
                    + _sparse_phrase(groups, ga, gb, len(block), settings.min_shared_items)
                    + ("" if key == "human_human" else _left_out_phrase(left_out))
                ),
                code=f"{MODULE}:{spec.maker}",
                n=n_items[key],
                extra={
                    "round": rv.round,
                    "n_pairs": len(defined),
                    "pairs": {f"{a}|{b}": k for a, b, k in defined},
                    "excluded_models": [] if key == "human_human" else left_out,
                },
                limits=spec.limits,
                unit="items",
            )
        )
    if spec.difference is not None:
        out += kappa_differences(rv, part, means, n_items, left_out)
    return out, means


def attainable_agreement(rv: RoundVotes, rt: RoundTotals) -> list[Statistic]:
    """Group means of kappa_max and of kappa / kappa_max, and the differences of the latter.

    People mark about a fifth of the attributes relevant and the models two to three times as
    many, so a human-model pair cannot reach a high kappa whatever it thinks of *which*
    attributes matter (:mod:`analysis.stats.attainable_kappa`). ``kappa_max.<group>`` is the
    mean over the group's pairs of the largest kappa their marginals allow;
    ``kappa_share_of_max.<group>`` the mean share of it reached, which carries the comparison
    of people with models beyond the difference in rates; ``kappa_share_of_max_diff.<a>_minus
    _<b>`` its paired differences, tested against 0 in family ``kappa_share_differences``.
    Same pairs, design and resamples as the kappa group means.
    """
    settings = rt.settings
    if len(rv.raters) < 2 or rv.long.empty:
        return []
    _, groups, left_out = _rater_groups(rv, settings)
    out: list[Statistic] = []
    for part in ("kappa_max", "kappa_share_of_max"):
        boot = pairwise_kappa(
            rt.people,
            rv.long,
            groups=groups,
            raters=list(rv.raters),
            categories=[False, True],
            min_shared=settings.min_shared_items,
            table_statistic=PAIR_STATISTICS[part].table,
        )
        out += pair_group_means(rv, rt, part, boot, groups, left_out)[0]
    return out


#: Krippendorff's alpha over which raters of a round: key part -> (humans?, models?, words)
ALPHA_GROUPS = {
    "human": (True, False, "the human raters"),
    "model": (False, True, "the models"),
    "all": (True, True, "every human and model rater"),
}


def alpha_coefficients(rv: RoundVotes, rt: RoundTotals) -> list[Statistic]:
    """Krippendorff's alpha (nominal) over the people, the models, and both, per round.

    One coefficient for any number of raters per item with missing votes allowed, beside the
    pairwise kappas: ``alpha.human`` with at least two people, ``alpha.model`` with at least
    two models (caveated models left out, as from every aggregate), ``alpha.all`` with at
    least one of each. Statistics of people's votes have the people design (the annotators
    resampled as well); the models' alone the items design.
    """
    settings = rt.settings
    counted = [m for m in rv.models if settings.in_aggregates(m)]
    _, _, left_out = _rater_groups(rv, settings)
    out: list[Statistic] = []
    for part, (with_h, with_m, words) in ALPHA_GROUPS.items():
        raters = (list(rv.humans) if with_h else []) + (counted if with_m else [])
        if (with_h and not rv.humans) or (with_m and not counted) or len(raters) < 2:
            continue
        long = rv.long[rv.long["rater"].isin(raters)]
        design = rt.people if with_h else rt.items
        res = agreement(design, long, "krippendorff_alpha", categories=[False, True])
        if not np.isfinite(res.estimate):
            continue
        per_item = long.groupby("item")["rater"].size()
        n = int((per_item >= 2).sum())
        out.append(
            Statistic(
                key=f"{rv.prefix}.alpha.{part}",
                estimate=res,
                fmt=".2f",
                what=(
                    f"Krippendorff's alpha (nominal) over {words} ({len(raters)} raters, "
                    f"{len(long)} votes on the {n} items with at least two; {rv.round} round; "
                    "missing votes allowed)" + ("" if not with_m else _left_out_phrase(left_out))
                ),
                code=f"{MODULE}:alpha_coefficients",
                n=n,
                extra={"round": rv.round, "raters": raters},
                limits=AGREEMENT,
                unit="items",
            )
        )
    return out


def _cell_bounds(res: Resamples, settings: StatsSettings) -> tuple[float, float]:
    """One matrix cell's interval, by the record maker's rule (NaN where it has none)."""
    if not np.isfinite(res.estimate):
        return float("nan"), float("nan")
    iv = read_interval(res, settings, None, 0).interval
    return (
        float("nan") if iv.low is None else iv.low,
        float("nan") if iv.high is None else iv.high,
    )


#: the paired differences of group-mean kappas: key -> (minuend, subtrahend)
KAPPA_DIFFERENCES = {
    "model_model_minus_human_model": ("model_model", "human_model"),
    "human_human_minus_human_model": ("human_human", "human_model"),
    "model_model_minus_human_human": ("model_model", "human_human"),
}
_GROUP_WORDS = {
    "human_human": "human-human",
    "model_model": "model-model",
    "human_model": "human-model",
}


def kappa_differences(
    rv: RoundVotes,
    part: str,
    means: Mapping[str, Resamples],
    n_items: Mapping[str, int],
    left_out: list[str],
) -> list[Statistic]:
    """Differences of a pair statistic's group means, each on the same resamples of both.

    "Models agree with each other more than with people" is a statement about a difference;
    it gets its own interval (paired: both means on every resample; annotators deleted from
    the side that has people) and a test of 0, adjusted within the round's family (Cohen's
    kappa: ``kappa_differences``; kappa / kappa_max: ``kappa_share_differences``).
    """
    spec = PAIR_STATISTICS[part]
    assert spec.difference is not None
    diff_part, family, words = spec.difference
    out: list[Statistic] = []
    for key, (a, b) in KAPPA_DIFFERENCES.items():
        if a not in means or b not in means:
            continue
        diff = means[a].minus(means[b])
        # the difference involves people: its design is theirs
        design = means[b] if "human" in b else means[a]
        out.append(
            Statistic(
                key=f"{rv.prefix}.{diff_part}.{key}",
                estimate=Resamples(diff.estimate, diff.parts, design.design),
                fmt="+.2f",
                what=(
                    words.format(a=_GROUP_WORDS[a], b=_GROUP_WORDS[b])
                    + f" ({rv.round} round; {rv.prefix}.{part}.{a} "
                    f"minus {rv.prefix}.{part}.{b}, both on every resample)"
                    f"{_left_out_phrase(left_out)}"
                ),
                code=f"{MODULE}:kappa_differences",
                n=max(n_items[a], n_items[b]),
                extra={
                    "round": rv.round,
                    "minuend": f"{rv.prefix}.{part}.{a}",
                    "subtrahend": f"{rv.prefix}.{part}.{b}",
                },
                test=NullTest(0.0, family, rv.round),
                unit="items",
            )
        )
    return out


_MATRIX_COLUMNS = [
    "round",
    "rater_a",
    "rater_b",
    "kind_a",
    "kind_b",
    "order_a",
    "order_b",
    "kappa",
    "ci_low",
    "ci_high",
    "n_items",
    "in_group_means",
]


# --------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------


def round_statistics(
    votes: pd.DataFrame, round_name: str, settings: StatsSettings
) -> tuple[list[Record], pd.DataFrame]:
    """Every stage-2 record of one round, and its pairwise kappa matrix."""
    rv = round_votes(votes, round_name)
    rt = round_totals(rv, settings)
    statistics = relevance_rates(rv, rt)
    statistics += over_selection(rv, rt)
    statistics += agreement_with_majority(rv, rt)
    statistics += human_ceiling(rv, rt)
    statistics += scores_vs_rest(rv, rt)
    kappa_statistics, matrix = kappa_group_means(rv, rt)
    statistics += attainable_agreement(rv, rt)
    statistics += alpha_coefficients(rv, rt)
    return make_records(statistics + kappa_statistics, settings), matrix


def stage2_statistics(votes: pd.DataFrame, settings: StatsSettings) -> Stage2Statistics:
    """The stage-2 records of every round in ``votes`` and each round's kappa matrix."""
    require_columns(votes, "relevance_votes", VOTE_COLUMNS)
    records: list[Record] = []
    matrices: dict[str, pd.DataFrame] = {}
    for round_name in sorted(votes["round"].astype(str).unique()):
        recs, matrix = round_statistics(votes, round_name, settings)
        records += recs
        if not matrix.empty:
            matrices[round_name] = matrix
    return Stage2Statistics(records=sorted(records, key=lambda r: r.key), kappa_matrices=matrices)


def kappa_matrix_table(result: Stage2Statistics) -> pd.DataFrame:
    """Every round's pairwise kappa matrix in one long table (the figure's input).

    Columns: round, rater_a, rater_b, kind_a, kind_b, order_a, order_b (display order:
    humans, then models, each sorted), kappa, ci_low, ci_high, n_items. Both orders of each
    pair are rows; the diagonal is not. Sorted by round and display order; empty (with these
    columns) when no round has two raters.
    """
    frames = [result.kappa_matrices[r] for r in sorted(result.kappa_matrices)]
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in _MATRIX_DTYPES.items()})
    return pd.concat(frames, ignore_index=True).astype(_MATRIX_DTYPES)


_MATRIX_DTYPES = {
    "round": "str",
    "rater_a": "str",
    "rater_b": "str",
    "kind_a": "str",
    "kind_b": "str",
    "order_a": "int64",
    "order_b": "int64",
    "kappa": "float64",
    "ci_low": "float64",
    "ci_high": "float64",
    "n_items": "int64",
    "in_group_means": "bool",
}


def stage2_records(votes: pd.DataFrame, settings: StatsSettings) -> list[Record]:
    """The stage-2 records only (see :func:`stage2_statistics`)."""
    return stage2_statistics(votes, settings).records
