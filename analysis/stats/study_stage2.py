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

All intervals of a round come from one set of cluster resamples (seeded), so the numbers of
a round are mutually consistent; the pairwise matrix is bootstrapped with the same seed and
clusters by :func:`analysis.stats.bootstrap.bootstrap_pairwise_kappa` (one matrix product).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analysis.data.vocabulary import HUMAN, HUMAN_MAJORITY, MODEL, VOTE_KINDS
from analysis.provenance import Record
from analysis.stats.bootstrap import BootstrapResult, bootstrap_pairwise_kappa, paired_difference
from analysis.stats.interval import Interval
from analysis.stats.intervals import wilson_interval
from analysis.stats.study_common import (
    CELLS,
    StatsSettings,
    StudyDataError,
    TotalsBootstrap,
    adjust_pvalues,
    analytic_interval,
    boot_interval,
    bootstrap_sparse_totals,
    cluster_column,
    cluster_labels,
    collect,
    correction_name,
    key_part,
    loo_majority_from_counts,
    loo_phrase,
    make_record,
    n_shared,
    nanmean_arrays,
    pair_cells,
    pair_kappa,
    pair_prf,
    point_getter,
    ratio,
    require_columns,
    require_unique,
    resample_test,
    resample_test_phrase,
    show,
    unit_noun,
)

MODULE = "analysis.stats.study_stage2"
VOTE_COLUMNS = ("item_id", "user_id", "prompt_id", "rater", "rater_kind", "round", "vote")
RATER_KINDS = VOTE_KINDS
#: the key prefix of a round's records


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
    clusters: np.ndarray | None  # (n,) cluster label per item, None = items
    cluster_col: str | None
    unit: str  # plural noun of the resampling unit
    long: pd.DataFrame  # item, rater, label, cluster: the individual votes (for the matrix)

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


def round_votes(votes: pd.DataFrame, round_name: str, settings: StatsSettings) -> RoundVotes:
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
    col = cluster_column(settings, {"item": None, "user": "user_id", "prompt": "prompt_id"})
    clusters = cluster_labels(item_meta, col)
    long = indiv.rename(columns={"item_id": "item", "vote": "label"})[["item", "rater", "label"]]
    if col is not None:
        long = long.assign(cluster=item_meta[col].reindex(long["item"]).to_numpy(dtype=object))
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
        clusters=clusters,
        cluster_col=col,
        unit=unit_noun(col, "items"),
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


def round_totals(rv: RoundVotes, settings: StatsSettings) -> TotalsBootstrap:
    """Resampled totals of every per-item column a round's statistics need.

    A human's columns are zero off the items it voted on, so each is kept as (rows, values)
    on those items (:func:`analysis.stats.study_common.bootstrap_sparse_totals`): memory and
    time grow with the votes, not with items x raters.
    """
    cols: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def put(name: str, rows: np.ndarray, values: np.ndarray) -> None:
        keep = values != 0
        cols[name] = (rows[keep], values[keep])

    every = np.arange(len(rv.items))
    for h in rv.humans:
        rows, own = rv.human(h)
        put(f"yes|{h}", rows, own)
        put(f"n|{h}", rows, np.ones(rows.size))
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
                put(f"{h}|rest|{cell}", rows, v)
            # models against the same reference, and the human on the model's items
            for m in rv.models:
                model = rv.column(m)[rows]
                on_m = np.where(np.isfinite(model), own, np.nan)
                for cell, v in pair_cells(model, rest).items():
                    put(f"{m}|{rest_name(h)}|{cell}", rows, v)
                for cell, v in pair_cells(on_m, rest).items():
                    put(f"{restricted_name(h, m)}|{rest_name(h)}|{cell}", rows, v)
    return bootstrap_sparse_totals(cols, len(rv.items), rv.clusters, settings, rv.unit)


# --------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------


def _rate_interval(
    tb: TotalsBootstrap, res: BootstrapResult, name: str, rv: RoundVotes, settings: StatsSettings
) -> Interval:
    """Wilson where items are the resampling unit (independent), else the cluster bootstrap."""
    if rv.cluster_col is None:
        k, n = tb.point(f"yes|{name}"), tb.point(f"n|{name}")
        low, high = wilson_interval(int(round(k)), int(round(n)), settings.ci_level)
        return analytic_interval(
            k / n,
            float(low),
            float(high),
            f"{settings.ci_level:.0%} CI: Wilson score interval",
            level=settings.ci_level,
            method="Wilson score interval",
        )
    return boot_interval(res, settings, tb.unit)


def relevance_rates(rv: RoundVotes, tb: TotalsBootstrap, settings: StatsSettings) -> list[Record]:
    """Share of items marked relevant: by the human majority, by each model, per human."""
    out: list[Record | None] = []
    code = f"{MODULE}:relevance_rates"
    seed = settings.seed
    named = [("majority", "human_majority")] + [(m, key_part(m)) for m in rv.models]
    for name, key in named:
        n = int(round(tb.point(f"n|{name}")))
        if n == 0:
            continue
        res = tb.stat(lambda g, name=name: ratio(g(f"yes|{name}"), g(f"n|{name}")))
        who = _majority_phrase(rv) if name == "majority" else f"model {name}"
        out.append(
            make_record(
                f"{rv.prefix}.relevance_rate.{key}",
                _rate_interval(tb, res, name, rv, settings),
                fmt=".1%",
                method=f"share of the {n} {rv.round}-round items marked relevant by {who}",
                code=code,
                n=n,
                unit="items",
                seed=seed,
                extra=settings.with_caveat(
                    name, {"round": rv.round, "yes": int(round(tb.point(f"yes|{name}")))}
                ),
            )
        )
    if rv.humans:
        humans = rv.humans
        res = tb.stat(lambda g: nanmean_arrays([ratio(g(f"yes|{h}"), g(f"n|{h}")) for h in humans]))
        per_human = {h: tb.point(f"yes|{h}") / tb.point(f"n|{h}") for h in humans}
        n = int(round(sum(tb.point(f"n|{h}") for h in humans)))
        out.append(
            make_record(
                f"{rv.prefix}.relevance_rate.human",
                boot_interval(res, settings, tb.unit),
                fmt=".1%",
                method=(
                    f"mean over {len(humans)} human raters of each rater's share of "
                    f"{rv.round}-round items marked relevant ({n} votes)"
                ),
                code=code,
                n=n,
                seed=seed,
                extra={"round": rv.round, "per_rater": per_human, "n_raters": len(humans)},
            )
        )
    return collect(out)


def over_selection(rv: RoundVotes, tb: TotalsBootstrap, settings: StatsSettings) -> list[Record]:
    """Model YES count over human-majority YES count on shared items; resample test of 1.

    The test of "no over-selection" (ratio 1) uses the ratio's own cluster resamples (users),
    Holm-adjusted across the round's models: the item-level McNemar test it replaces treated
    thousands of items from a few dozen users as independent.
    """
    code = f"{MODULE}:over_selection"
    ratios: dict[str, BootstrapResult] = {}
    tests: dict[str, dict[str, Any]] = {}
    pvalues: dict[str, float] = {}
    for m in rv.models:
        n = n_shared(tb, m, "majority")
        if n == 0:
            continue
        res = tb.stat(
            lambda g, m=m: ratio(
                g(f"{m}|majority|11") + g(f"{m}|majority|10"),
                g(f"{m}|majority|11") + g(f"{m}|majority|01"),
            )
        )
        if not np.isfinite(res.estimate):
            continue  # the majority marks nothing relevant on the shared items
        cell = {c: int(round(tb.point(f"{m}|majority|{c}"))) for c in CELLS}
        ratios[m] = res
        tests[m] = {
            "n": n,
            "model_yes_majority_no": cell["10"],
            "model_no_majority_yes": cell["01"],
            **resample_test(res, 1.0),
        }
        if "p_value" in tests[m]:
            pvalues[m] = tests[m]["p_value"]
    adjusted = adjust_pvalues(pvalues, settings)
    family = sorted(ratios)
    out: list[Record | None] = []
    test_text = (
        f"{resample_test_phrase(1.0, settings, tb.unit)}, {correction_name(settings)}-adjusted "
        f"across the {len(pvalues)} models of the round"
    )
    for m in family:
        t = tests[m]
        out.append(
            make_record(
                f"{rv.prefix}.over_selection.{key_part(m)}",
                boot_interval(ratios[m], settings, tb.unit),
                fmt=".2f",
                method=(
                    f"over-selection of {m}: its YES votes divided by the YES votes of "
                    f"{_majority_phrase(rv)} on the {t['n']} items both label (ratio of the "
                    f"two relevance rates); {test_text}"
                ),
                code=code,
                n=t["n"],
                unit="items",
                seed=settings.seed,
                extra=settings.with_caveat(
                    m,
                    {
                        "round": rv.round,
                        **{k: t[k] for k in ("null", "p_value", "test") if k in t},
                        "p_adjusted": adjusted.get(m),
                        "correction": settings.multiple_comparisons,
                        "family": sorted(pvalues),
                        "model_yes_majority_no": t["model_yes_majority_no"],
                        "model_no_majority_yes": t["model_no_majority_yes"],
                    },
                ),
            )
        )
    models = [m for m in family if settings.in_aggregates(m)]
    left_out = [m for m in family if not settings.in_aggregates(m)]
    if models:
        mean_res = tb.stat(
            lambda g: nanmean_arrays(
                [
                    ratio(
                        g(f"{m}|majority|11") + g(f"{m}|majority|10"),
                        g(f"{m}|majority|11") + g(f"{m}|majority|01"),
                    )
                    for m in models
                ]
            )
        )
        out.append(
            make_record(
                f"{rv.prefix}.over_selection.mean_model",
                boot_interval(mean_res, settings, tb.unit),
                fmt=".2f",
                method=(
                    f"mean over {len(models)} models of each model's over-selection ratio "
                    f"against {_majority_phrase(rv)}{_left_out_phrase(left_out)}"
                ),
                code=code,
                n=int(round(tb.point("n|majority"))),
                unit="items",
                seed=settings.seed,
                extra={
                    "round": rv.round,
                    "models": models,
                    "excluded_models": left_out,
                    "per_model": {m: float(ratios[m].estimate) for m in models},
                },
            )
        )
    return collect(out)


def agreement_with_majority(
    rv: RoundVotes, tb: TotalsBootstrap, settings: StatsSettings
) -> list[Record]:
    """Each model against the human majority: Cohen's kappa, precision, recall, F1."""
    code = f"{MODULE}:agreement_with_majority"
    out: list[Record | None] = []
    for m in rv.models:
        n = n_shared(tb, m, "majority")
        if n == 0:
            continue
        ref = _majority_phrase(rv)
        res = tb.stat(lambda g, m=m: pair_kappa(g, m, "majority"))
        out.append(
            make_record(
                f"{rv.prefix}.kappa_vs_majority.{key_part(m)}",
                boot_interval(res, settings, tb.unit),
                fmt=".2f",
                method=f"Cohen's kappa of {m} and {ref} on the {n} items both label",
                code=code,
                n=n,
                unit="items",
                seed=settings.seed,
                extra=settings.with_caveat(m, {"round": rv.round}),
            )
        )
        for stat in ("precision", "recall", "f1"):
            res = tb.stat(lambda g, m=m, stat=stat: pair_prf(g, m, "majority")[stat])
            name = "F1" if stat == "f1" else stat
            out.append(
                make_record(
                    f"{rv.prefix}.{stat}_vs_majority.{key_part(m)}",
                    boot_interval(res, settings, tb.unit),
                    fmt=".3f",
                    method=(
                        f"{name} of {m}'s YES votes against {ref} as the reference "
                        f"(positive class: relevant), on the {n} items both label"
                    ),
                    code=code,
                    n=n,
                    unit="items",
                    seed=settings.seed,
                    extra=settings.with_caveat(m, {"round": rv.round}),
                )
            )
    return collect(out)


def _loo_humans(rv: RoundVotes, tb: TotalsBootstrap) -> list[str]:
    """Humans with a leave-one-out reference on at least one item they voted on."""
    if len(rv.humans) < 2:
        return []
    return [h for h in rv.humans if f"{h}|rest|11" in tb.columns and n_shared(tb, h, "rest") > 0]


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


def human_ceiling(rv: RoundVotes, tb: TotalsBootstrap, settings: StatsSettings) -> list[Record]:
    """Leave-one-human-out: each human against the majority of the other humans.

    The reference of human h is :func:`rest_majority` (the one definition, shared with
    :func:`scores_vs_rest`, which scores the models against exactly these references).
    """
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
    kappa_res = tb.stat(lambda g: nanmean_arrays([pair_kappa(g, h, "rest") for h in humans]))
    f1_res = tb.stat(lambda g: nanmean_arrays([pair_prf(g, h, "rest")["f1"] for h in humans]))
    per_kappa = {h: float(pair_kappa(point_getter(tb), h, "rest")[0]) for h in humans}
    per_f1 = {h: float(pair_prf(point_getter(tb), h, "rest")["f1"][0]) for h in humans}
    extra = {"round": rv.round, "n_raters": len(humans), **ties}
    return collect(
        [
            make_record(
                f"{rv.prefix}.ceiling.kappa_human_vs_rest",
                boot_interval(kappa_res, settings, tb.unit),
                fmt=".2f",
                method=f"{rule}: Cohen's kappa ({n} human-item pairs)",
                code=code,
                n=n,
                seed=settings.seed,
                extra={**extra, "per_rater": per_kappa},
            ),
            make_record(
                f"{rv.prefix}.ceiling.f1_human_vs_rest",
                boot_interval(f1_res, settings, tb.unit),
                fmt=".3f",
                method=(
                    f"{rule}: F1 of the human's votes with the reference as truth "
                    f"({n} human-item pairs)"
                ),
                code=code,
                n=n,
                seed=settings.seed,
                extra={**extra, "per_rater": per_f1},
            ),
        ]
    )


#: the two scores of :func:`scores_vs_rest`: name -> (score of a pair's totals, fmt, label)
_VS_REST_SCORES = {
    "kappa": (pair_kappa, ".2f", "Cohen's kappa"),
    "f1": (lambda g, a, b: pair_prf(g, a, b)["f1"], ".3f", "F1 (the reference as truth)"),
}


def scores_vs_rest(rv: RoundVotes, tb: TotalsBootstrap, settings: StatsSettings) -> list[Record]:
    """Each model against the human ceiling's own references, and its paired gap to people.

    For each human h with a leave-one-out reference, the model is scored against that
    reference on the items the model voted on; ``vs_rest.<score>.<model>`` is the unweighted
    mean over humans. ``vs_rest.gap_<score>.<model>`` is the mean over humans of
    ``score(model, ref_h) - score(h, ref_h)``, both on the same items, on the same resamples:
    the comparison "does a model match the references as well as a person does" with its
    own interval and a resample test of 0, Holm-adjusted across the round's models.
    """
    humans = _loo_humans(rv, tb)
    if not humans:
        return []
    code = f"{MODULE}:scores_vs_rest"
    ties = _loo_ties(rv, humans)
    out: list[Record | None] = []
    gaps: dict[str, dict[str, BootstrapResult]] = {name: {} for name in _VS_REST_SCORES}
    meta: dict[str, tuple[list[str], int]] = {}
    for m in rv.models:
        hs = [h for h in humans if n_shared(tb, m, rest_name(h)) > 0]
        if not hs:
            continue
        n = int(sum(n_shared(tb, m, rest_name(h)) for h in hs))
        meta[m] = (hs, n)
        get = point_getter(tb)
        for name, (score, fmt, label) in _VS_REST_SCORES.items():
            res = tb.stat(
                lambda g, m=m, hs=hs, score=score: nanmean_arrays(
                    [score(g, m, rest_name(h)) for h in hs]
                )
            )
            per = {h: float(score(get, m, rest_name(h))[0]) for h in hs}
            out.append(
                make_record(
                    f"{rv.prefix}.vs_rest.{name}.{key_part(m)}",
                    boot_interval(res, settings, tb.unit),
                    fmt=fmt,
                    method=(
                        f"{label} of {m} against each of the {len(hs)} human raters' "
                        f"references, {loo_phrase()}, on the items of the reference {m} "
                        f"voted on, unweighted mean over humans ({n} reference-item pairs); "
                        "the same references as the human ceiling "
                        f"{rv.prefix}.ceiling.{name}_human_vs_rest"
                    ),
                    code=code,
                    n=n,
                    seed=settings.seed,
                    extra=settings.with_caveat(
                        m, {"round": rv.round, "n_raters": len(hs), "per_rater": per, **ties}
                    ),
                )
            )
            gaps[name][m] = tb.stat(
                lambda g, m=m, hs=hs, score=score: nanmean_arrays(
                    [
                        score(g, m, rest_name(h)) - score(g, restricted_name(h, m), rest_name(h))
                        for h in hs
                    ]
                )
            )
    for name, (_, fmt, label) in _VS_REST_SCORES.items():
        tests = {m: resample_test(res, 0.0) for m, res in gaps[name].items()}
        pvalues = {m: t["p_value"] for m, t in tests.items() if t}
        adjusted = adjust_pvalues(pvalues, settings)
        for m, res in gaps[name].items():
            hs, n = meta[m]
            out.append(
                make_record(
                    f"{rv.prefix}.vs_rest.gap_{name}.{key_part(m)}",
                    boot_interval(res, settings, tb.unit),
                    fmt="+" + fmt.lstrip("+"),
                    method=(
                        f"{label} of {m} minus that of the human, each against the human's "
                        f"reference ({loo_phrase()}) on the items of the reference {m} voted "
                        f"on, unweighted mean over {len(hs)} humans ({n} reference-item pairs; "
                        "negative: the model matches the references less well than the people "
                        f"they leave out); {resample_test_phrase(0.0, settings, tb.unit)}, "
                        f"{correction_name(settings)}-adjusted across the {len(pvalues)} models"
                    ),
                    code=code,
                    n=n,
                    seed=settings.seed,
                    extra=settings.with_caveat(
                        m,
                        {
                            "round": rv.round,
                            "n_raters": len(hs),
                            **tests[m],
                            "p_adjusted": adjusted.get(m),
                            "correction": settings.multiple_comparisons,
                            "family": sorted(pvalues),
                        },
                    ),
                )
            )
    return collect(out)


def kappa_group_means(rv: RoundVotes, settings: StatsSettings) -> tuple[list[Record], pd.DataFrame]:
    """Pairwise Cohen's kappa over all human and model raters, and its group means.

    Returns the ``stage2.<round>.kappa.*`` records and the matrix in long format (both
    orders of every pair): round, rater_a, rater_b, kind_a, kind_b, order_a, order_b,
    kappa, ci_low, ci_high, n_items. A cell whose pair shares no item, or whose kappa is
    undefined (one category), has NaN kappa; such cells are left out of the group means.
    """
    code = f"{MODULE}:kappa_group_means"
    raters = rv.raters
    empty = pd.DataFrame(columns=_MATRIX_COLUMNS)
    if len(raters) < 2 or rv.long.empty:
        return [], empty
    kinds = {r: HUMAN for r in rv.humans} | {r: MODEL for r in rv.models}
    # a model with a caveat is in the matrix (the figure) but not in the group means
    groups = {r: (k if settings.in_aggregates(r) else "excluded") for r, k in kinds.items()}
    left_out = [r for r in rv.models if not settings.in_aggregates(r)]
    boot = bootstrap_pairwise_kappa(
        rv.long,
        groups=groups,
        cluster="cluster" if rv.cluster_col is not None else None,
        raters=list(raters),
        categories=[False, True],
        n_boot=settings.n_boot,
        seed=settings.seed,
        min_shared=settings.min_shared_items,
        jackknife=settings.ci_method == "bca",
    )
    level, method = settings.ci_level, settings.ci_method
    est = np.asarray(boot.matrix.estimate)
    low, high = boot.matrix.interval(level, "percentile" if method == "percentile" else "bca")
    if method == "bca":  # per-cell fallback where BCa is undefined
        plow, phigh = boot.matrix.interval(level, "percentile")
        bad = ~(np.isfinite(low) & np.isfinite(high))
        low, high = np.where(bad, plow, low), np.where(bad, phigh, high)
    order = {r: i for i, r in enumerate(raters)}
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
                    "ci_low": float(low[p]),
                    "ci_high": float(high[p]),
                    "n_items": int(boot.n_shared[p]),
                    "in_group_means": groups[x] != "excluded" and groups[y] != "excluded",
                }
            )
    matrix = (
        pd.DataFrame(rows, columns=_MATRIX_COLUMNS)
        .sort_values(["order_a", "order_b"])
        .reset_index(drop=True)
    )

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
    out: list[Record | None] = []
    for key, res in boot.group_means.items():
        if key not in labels:
            continue  # a block with a caveated model
        ga, gb = key.split("_")
        cells = [(a, b, float(est[p])) for p, (a, b) in enumerate(boot.pairs)]
        block = [(a, b, k) for a, b, k in cells if {groups[a], groups[b]} == {ga, gb}]
        defined = [(a, b, k) for a, b, k in block if np.isfinite(k)]
        out.append(
            make_record(
                f"{rv.prefix}.kappa.{key}",
                boot_interval(res, settings, rv.unit),
                fmt=".2f",
                method=(
                    f"mean pairwise Cohen's kappa over the {len(defined)} pairs of "
                    f"{labels[key]} ({rv.round} round; each pair on the items it shares)"
                    + _sparse_phrase(groups, ga, gb, len(block), settings.min_shared_items)
                    + ("" if key == "human_human" else _left_out_phrase(left_out))
                ),
                code=code,
                n=n_items[key],
                unit="items",
                seed=settings.seed,
                extra={
                    "round": rv.round,
                    "n_pairs": len(defined),
                    "pairs": {f"{a}|{b}": k for a, b, k in defined},
                    "excluded_models": [] if key == "human_human" else left_out,
                },
            )
        )
    out += kappa_differences(rv, boot.group_means, settings, n_items, left_out)
    return collect(out), matrix


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
    means: Mapping[str, BootstrapResult],
    settings: StatsSettings,
    n_items: Mapping[str, int],
    left_out: list[str],
) -> list[Record | None]:
    """Differences of the kappa group means, each on the pairwise bootstrap's own resamples.

    "Models agree with each other more than with people" is a statement about a difference;
    it gets its own interval (paired: both means on every resample) and a resample test of 0,
    ``stage2.<round>.kappa_diff.<a>_minus_<b>``.
    """
    out: list[Record | None] = []
    for key, (a, b) in KAPPA_DIFFERENCES.items():
        if a not in means or b not in means:
            continue
        res = paired_difference(means[a], means[b])
        out.append(
            make_record(
                f"{rv.prefix}.kappa_diff.{key}",
                boot_interval(res, settings, rv.unit),
                fmt="+.2f",
                method=(
                    f"mean pairwise Cohen's kappa of the {_GROUP_WORDS[a]} pairs minus that of "
                    f"the {_GROUP_WORDS[b]} pairs ({rv.round} round; {rv.prefix}.kappa.{a} "
                    f"minus {rv.prefix}.kappa.{b}, both on every resample)"
                    f"{_left_out_phrase(left_out)}; "
                    f"{resample_test_phrase(0.0, settings, rv.unit)}"
                ),
                code=f"{MODULE}:kappa_differences",
                n=max(n_items[a], n_items[b]),
                unit="items",
                seed=settings.seed,
                extra={
                    "round": rv.round,
                    "minuend": f"{rv.prefix}.kappa.{a}",
                    "subtrahend": f"{rv.prefix}.kappa.{b}",
                    **resample_test(res, 0.0),
                },
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
    rv = round_votes(votes, round_name, settings)
    tb = round_totals(rv, settings)
    records = relevance_rates(rv, tb, settings)
    records += over_selection(rv, tb, settings)
    records += agreement_with_majority(rv, tb, settings)
    records += human_ceiling(rv, tb, settings)
    records += scores_vs_rest(rv, tb, settings)
    kappa_records, matrix = kappa_group_means(rv, settings)
    return collect(records + kappa_records), matrix


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
    return Stage2Statistics(records=collect(records), kappa_matrices=matrices)


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
