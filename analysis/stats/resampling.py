"""Resampling under a declared design: which factors a statistic generalizes over, and how.

Every family of statistics has a design (``stats.designs`` in the config, each with its
reason): its random factors (users, prompts, annotators, ...), the strata its samples kept,
and the factors it is conditional on (the models studied, the human-majority reference).
:func:`plan` turns a design and the data's factor levels (:class:`Units`) into the resamples
that make the statistic's uncertainty, one *part* per random factor:

* **users, prompts**: a cluster bootstrap of the factor (the engine's resample counts,
  :mod:`analysis.stats.bootstrap`), within strata where the design has them (Rao-Wu), or,
  for a factor with fewer than :data:`MIN_BOOTSTRAP_LEVELS` levels, its delete-one-level
  jackknife (a bootstrap of a handful of levels understates the spread and its percentiles
  take few values).
* **users x prompts**: where both are random they are crossed (each stage-2 item pairs a
  sampled user with a sampled prompt, each stage-3 slot too), and neither one-way bootstrap
  is the sampling variance. The design's variance is Cameron, Gelbach and Miller's (2011)
  two-way cluster variance ``V = V_users + V_prompts - V_cells``, each term the cluster
  bootstrap variance of one clustering (the cells are the user x prompt intersections;
  their part carries ``sign = -1``). Owen's (2007) product-weight bootstrap was the
  alternative; on sparse crossings such as the study's (about four users per prompt) it
  counts the cells' own variance three times, where CGM counts it once.
* **annotators**: people are a sample of annotators, crossed with the users and prompts
  (each person judges some of them). The annotators enter the same inclusion-exclusion:
  ``+ V_annotators - V_users x annotators - V_prompts x annotators + V_users x prompts x
  annotators``, each the delete-one jackknife variance of that clustering (there are a
  handful of annotators; deleting the annotator part of a user's data is one "cluster" of
  the user x annotator clustering). Adding the annotators' jackknife alone would count the
  item noise of each person's share of the data twice: with one person per stage-3 slot,
  deleting a person deletes a chunk of slots. Deleting an annotator (or its part of a user's
  or prompt's data) removes what it contributed: its judgments, its pairs of a kappa, its
  own leave-one-out columns, its ratings of a slot (the slot's mean recomputed from the other
  people). Where its vote is part of another person's leave-one-out reference (stage 2's
  ceilings and the scores against them), that reference is rebuilt from the voters left
  (``study_stage2``); stage 1's verifier ceiling still keeps the deleted person's votes in
  the others' references (a first-order deletion). Rows of no annotator (models, the
  majority) are never deleted: in the four annotator terms a row that is its own cluster
  cancels.

The first resampled factor draws on stream 0 of the seed, so a design with one factor draws
exactly the resamples of the one-factor bootstrap, and ``stats.design = one_way`` (every
statistic resampling one unit alone) reproduces the intervals of the engine's one-way path.
Other factors draw on streams 1 and 2. The record maker (:mod:`analysis.stats.records`)
turns the parts into an interval, a p-value and a method sentence; this module only resamples.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from analysis.settings import DesignMode
from analysis.stats.agreement import Level, additive_form, rater_deletion_changes
from analysis.stats.bootstrap import (
    BootstrapResult,
    PairwiseKappaBootstrap,
    _Clusters,
    _count_chunks,
    _item_strata,
    _resample_digest,
    _stream,
    bootstrap_pairwise_kappa,
    bootstrap_statistic,
    cluster_membership,
    nan_mean_rows,
)
from analysis.stats.settings import StatsSettings
from analysis.stats.weighted_bootstrap import rank_correlation, weighted_spearman

__all__ = [
    "MIN_BOOTSTRAP_LEVELS",
    "Units",
    "Plan",
    "DesignInfo",
    "Resamples",
    "DesignTotals",
    "plan",
    "design_info",
    "totals",
    "weighted_rows",
    "pairwise_kappa",
    "agreement",
    "spearman_from_tables",
]

#: a random factor with fewer levels is jackknifed, not bootstrapped (and read with t quantiles)
MIN_BOOTSTRAP_LEVELS = 10
#: streams of the seed for a design's factors: the first factor uses the one-way stream
STREAMS = (0, 1, 2)
#: how a factor reads in a method sentence
NOUNS = {
    "users": "users",
    "prompts": "prompts",
    "cells": "user-prompt cells",
    "annotators": "annotators",
    "cases": "cases",
    "models": "models",
    "worlds": "simulated worlds",
}
#: the one-way units of ``stats.cluster`` (and of a caller's own unit) -> the Units field
ONE_WAY = {"user": "users", "prompt": "prompts", "item": None}


@dataclass(frozen=True)
class Units:
    """Each observation's level of the factors a design may resample.

    ``users``/``prompts``: a label per observation (None: the data have no such factor);
    ``strata``: a named label per observation, constant within a user; ``annotators``: the
    people behind the observations (their deletion is the caller's: see :func:`totals`);
    ``items``: the item an observation belongs to (None: each observation is one), and
    ``noun`` what an item is, for a design that resamples items.
    """

    n: int
    users: np.ndarray | None = None
    prompts: np.ndarray | None = None
    strata: pd.Series | None = None
    annotators: tuple[str, ...] = ()
    items: np.ndarray | None = None
    noun: str = "items"


@dataclass(frozen=True)
class Resampled:
    """One random factor as a plan resamples it."""

    name: str  # users | prompts | cells | cases | worlds | items
    noun: str
    labels: np.ndarray | None  # per observation (None: every observation its own level)
    n_levels: int
    stream: int
    bootstrap: bool  # False: its delete-one-level jackknife only
    sign: int = 1
    strata: pd.Series | None = None


@dataclass(frozen=True)
class DesignInfo:
    """What a record's method states about its design."""

    name: str
    mode: str
    #: (noun, levels, "bootstrap" | "jackknife") of every resampled factor, annotators last
    factors: tuple[tuple[str, int, str], ...]
    crossed: bool
    strata: tuple[str, int] | None
    fixed: tuple[tuple[str, str], ...]
    #: random factors these data hold one level of (nothing to resample; conditional on it)
    single: tuple[str, ...]
    why: str

    def sentence(self) -> str:
        """``design relevance_people: users (47) x prompts (41) crossed and annotators (6)
        random; fixed: models (the models studied)``."""
        if self.mode == DesignMode.one_way:
            (noun, levels, _), *_ = self.factors
            strata = (
                f" within the {self.strata[1]} strata of {self.strata[0]}" if self.strata else ""
            )
            return (
                f"design one-way (stats.design = one_way, not the declared {self.name}): "
                f"{noun} ({levels}){strata} resampled alone"
            )
        rows = [f for f in self.factors if f[0] not in ("annotators", NOUNS["cells"])]
        parts = [f"{noun} ({levels})" for noun, levels, _ in rows]
        text = " x ".join(parts) + (" crossed" if self.crossed else "")
        if self.strata:
            text += f" within the {self.strata[1]} strata of {self.strata[0]}"
        people = [f for f in self.factors if f[0] == "annotators"]
        if people:
            text += f" and annotators ({people[0][1]})"
        text += " random"
        if self.single:
            text += "; a single level of " + ", ".join(self.single) + " (not resampled)"
        if self.fixed:
            text += "; fixed: " + ", ".join(f"{factor} ({why})" for factor, why in self.fixed)
        return f"design {self.name}: {text}"


@dataclass(frozen=True)
class Plan:
    """The resamples a design draws on these data: its factors, annotators, B and seed."""

    info: DesignInfo
    factors: tuple[Resampled, ...]
    annotators: tuple[str, ...]
    n_boot: int
    seed: int
    bca: bool
    #: each factor's drawn counts, drawn once (statistics of weighted rows share them)
    _counts: dict[str, tuple[np.ndarray, np.ndarray, str]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def jackknife_of(self, factor: Resampled) -> bool:
        """Whether ``factor``'s leave-one-level-out values are needed: it is jackknifed, or it
        is the one factor of the design read as BCa."""
        return not factor.bootstrap or (self.bca and len(self.factors) == 1)

    def n_boot_of(self, factor: Resampled) -> int:
        return self.n_boot if factor.bootstrap else 0

    def units_with(self, denominator: np.ndarray) -> int:
        """The design's units behind a share's denominator: for each resampled factor (the
        cells aside) the levels with a positive denominator; the fewest of them."""
        den = np.asarray(denominator, dtype=np.float64) > 0
        counts = []
        for f in self.factors:
            if f.name == "cells":
                continue
            counts.append(int(den.sum()) if f.labels is None else len(set(f.labels[den])))
        return min(counts)


def joined(frame: pd.DataFrame, key: Sequence[str]) -> np.ndarray:
    """Each row's key columns joined by ``|`` (an item's own label, e.g. a rating slot)."""
    out = frame[key[0]].astype(str)
    for col in key[1:]:
        out = out + "|" + frame[col].astype(str)
    return out.to_numpy(dtype=object)


def cell_labels(users: np.ndarray, prompts: np.ndarray) -> np.ndarray:
    """The user x prompt cell of each observation, as one integer label.

    Cells sort as (user, prompt) pairs do, so the same rows give the same cells and the same
    resamples whichever module asks (the stage-2 statistics and the relevance classifier).
    """
    u, users_found = pd.factorize(pd.Series(np.asarray(users, dtype=object)), sort=True)
    p, _ = pd.factorize(pd.Series(np.asarray(prompts, dtype=object)), sort=True)
    return u.astype(np.int64) * (int(p.max()) + 1 if len(p) else 1) + p


def _short(why: str) -> str:
    """A fixed factor's reason as a method sentence cites it: its first clause."""
    return why.split(";")[0].strip()


def design_info(settings: StatsSettings, name: str, levels: Mapping[str, int]) -> DesignInfo:
    """The description of design ``name`` on data with ``levels`` of its random factors, for a
    statistic that is not resampled (an exact or analytic interval)."""
    spec = settings.design_spec(name)
    return DesignInfo(
        name=name,
        mode=DesignMode.declared,
        factors=tuple((NOUNS[str(f)], int(levels[str(f)]), "exact") for f in spec.random),
        crossed=False,
        strata=None,
        fixed=tuple((k, _short(v)) for k, v in spec.fixed.items()),
        single=(),
        why=spec.why,
    )


def plan(settings: StatsSettings, design: str, units: Units, one_way: str | None = None) -> Plan:
    """The resamples of ``design`` on ``units`` (``settings.design`` decides declared or one-way).

    ``one_way`` is the unit the statistic resamples under ``stats.design = one_way``
    (``user``, ``prompt`` or ``item``; default ``stats.cluster``, which falls back to users
    where the data have no such factor, as a stage-1 judgment has no prompt).
    """
    spec = settings.design_spec(design)
    fixed = tuple((k, _short(v)) for k, v in spec.fixed.items())
    strata = units.strata if spec.strata is not None else None
    if settings.design == DesignMode.one_way:
        unit = one_way or settings.cluster
        field = ONE_WAY[unit]
        if field is not None and getattr(units, field) is None:
            field = "users"
        labels = units.items if field is None else getattr(units, field)
        noun = units.noun if field is None else NOUNS[field]
        factor = _factor(field or "items", noun, labels, units.n, 0, strata, always_bootstrap=True)
        info = DesignInfo(
            name=design,
            mode=DesignMode.one_way,
            factors=((noun, factor.n_levels, "bootstrap"),),
            crossed=False,
            strata=_strata_of(factor),
            fixed=fixed,
            single=(),
            why=spec.why,
        )
        return Plan(info, (factor,), (), settings.n_boot, settings.seed, settings.bca)
    random = {str(f) for f in spec.random}
    rows: list[tuple[str, np.ndarray | None]] = []
    single: list[str] = []
    for name in ("users", "prompts"):
        labels = getattr(units, name)
        if name not in random or labels is None:
            continue
        if len(pd.unique(np.asarray(labels, dtype=object))) >= 2:
            rows.append((name, np.asarray(labels, dtype=object)))
        else:
            single.append(name)
    if len(rows) == 2:
        rows.append(("cells", cell_labels(rows[0][1], rows[1][1])))
    if not rows:  # cases or worlds, or a design whose random factors have one level here
        own = [f for f in ("cases", "worlds") if f in random]
        rows.append((own[0], None) if own else ("items", units.items))
    factors = tuple(
        _factor(
            name,
            units.noun if name == "items" else NOUNS[name],
            labels,
            units.n,
            STREAMS[i],
            strata if name == "users" else None,
            sign=-1 if name == "cells" else 1,
        )
        for i, (name, labels) in enumerate(rows)
    )
    people: tuple[str, ...] = ()
    if "annotators" in random:
        if len(units.annotators) >= 2:
            people = tuple(units.annotators)
        elif units.annotators:
            single.append("annotators")
    described = tuple(
        (f.noun, f.n_levels, "bootstrap" if f.bootstrap else "jackknife") for f in factors
    ) + ((("annotators", len(people), "jackknife"),) if people else ())
    info = DesignInfo(
        name=design,
        mode=DesignMode.declared,
        factors=described,
        crossed=any(f.name == "cells" for f in factors),
        strata=_strata_of(factors[0]),
        fixed=fixed,
        single=tuple(single),
        why=spec.why,
    )
    return Plan(info, factors, people, settings.n_boot, settings.seed, settings.bca)


def _factor(
    name: str,
    noun: str,
    labels: np.ndarray | None,
    n: int,
    stream: int,
    strata: pd.Series | None,
    sign: int = 1,
    always_bootstrap: bool = False,
) -> Resampled:
    levels = n if labels is None else len(pd.unique(np.asarray(labels, dtype=object)))
    return Resampled(
        name=name,
        noun=noun,
        labels=None if labels is None else np.asarray(labels, dtype=object),
        n_levels=levels,
        stream=stream,
        bootstrap=always_bootstrap or levels >= MIN_BOOTSTRAP_LEVELS,
        sign=sign,
        strata=strata,
    )


def _cluster_strata(factor: Resampled, n_obs: int) -> np.ndarray | None:
    """Each level's stratum code, as the engine resamples the factor (None: unstratified)."""
    if factor.strata is None:
        return None
    return _Clusters(factor.labels, n_obs, factor.noun, factor.strata).strata


def _strata_of(factor: Resampled) -> tuple[str, int] | None:
    """(name, count) of the strata a factor is resampled within, as the engine will use them."""
    if factor.strata is None:
        return None
    cl = _Clusters(factor.labels, len(factor.strata), factor.noun, factor.strata)
    return (cl.stratified_by, cl.n_strata) if cl.stratified_by else None


# --------------------------------------------------------------------------------------
# A statistic's resamples under a design
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Resamples:
    """A statistic's point estimate and its resamples under a design, one part per factor.

    Each part is a :class:`~analysis.stats.bootstrap.BootstrapResult`: bootstrap replicates
    of one factor (with the leave-one-level-out values where BCa reads them), or, with no
    replicates, the factor's jackknife (a factor with few levels, or the annotators).
    """

    estimate: np.ndarray
    parts: tuple[BootstrapResult, ...]
    #: None: the difference of two builds' kept resamples (their records state the design)
    design: DesignInfo | None

    @property
    def value(self) -> float:
        return float(self.estimate)

    def component(self, index: Any) -> Resamples:
        """One component of a vector-valued statistic, as its own resamples."""
        return Resamples(
            np.asarray(self.estimate)[index],
            tuple(p.component(index) for p in self.parts),
            self.design,
        )

    def _aligned(self, other: Resamples) -> list[tuple[BootstrapResult, BootstrapResult]]:
        """Pairs of parts of the same factor and resamples; a factor only one side has is a
        constant on the other (its estimate on every resample)."""
        mine = {p.cluster: p for p in self.parts}
        theirs = {p.cluster: p for p in other.parts}
        out = []
        for name in dict.fromkeys([*mine, *theirs]):
            a, b = mine.get(name), theirs.get(name)
            if (
                a is not None
                and b is not None
                and (a.weights_digest != b.weights_digest or a.n_boot != b.n_boot)
            ):
                raise ValueError(
                    f"paired statistics need the same resamples of {name}; digests "
                    f"{a.weights_digest[:12]} and {b.weights_digest[:12]}"
                )
            out.append((a or _constant(b, self.estimate), b or _constant(a, other.estimate)))
        return out

    def combine(self, other: Resamples, fn: Callable[[Any, Any], Any]) -> Resamples:
        """``fn(self, other)`` on every resample of both (paired): e.g. a difference."""
        parts = tuple(
            replace(
                a,
                estimate=np.asarray(fn(np.asarray(self.estimate), np.asarray(other.estimate))),
                replicates=fn(a.replicates, b.replicates),
                jackknife=None
                if a.jackknife is None or b.jackknife is None
                else fn(a.jackknife, b.jackknife),
            )
            for a, b in self._aligned(other)
        )
        return Resamples(np.asarray(fn(self.estimate, other.estimate)), parts, self.design)

    def minus(self, other: Resamples) -> Resamples:
        """``self - other`` on the same resamples: a paired difference."""
        return self.combine(other, np.subtract)

    def under(self, narrower: Plan) -> Resamples:
        """These resamples as a narrower design sees them: the parts of its factors only.

        A family resamples once under its widest design (people included); a statistic of
        it that involves no person (a model's score against the majority) keeps the users'
        and prompts' parts and states the narrower design it is declared with.
        """
        wanted = [f.noun for f in narrower.factors] + [
            c.noun for c in annotator_clusterings(narrower)
        ]
        have = {p.cluster: p for p in self.parts}
        missing = [w for w in wanted if w not in have]
        if missing:
            raise ValueError(f"design {narrower.info.name} needs parts {missing} these lack")
        return Resamples(self.estimate, tuple(have[w] for w in wanted), narrower.info)


def _constant(part: BootstrapResult, estimate: np.ndarray) -> BootstrapResult:
    """A part of ``part``'s factor on which the statistic does not move."""
    reps = np.broadcast_to(np.asarray(estimate), part.replicates.shape).copy()
    jack = (
        None
        if part.jackknife is None
        else np.broadcast_to(np.asarray(estimate), part.jackknife.shape).copy()
    )
    return replace(part, estimate=np.asarray(estimate), replicates=reps, jackknife=jack)


def mean_of(results: Sequence[Resamples]) -> Resamples:
    """Per-resample mean of several scalar statistics on the same resamples (NaNs skipped)."""
    if not results:
        raise ValueError("mean_of needs at least one statistic")
    first = results[0]
    names = [p.cluster for p in first.parts]
    parts = []
    for i, name in enumerate(names):
        group = [r.parts[i] for r in results]
        if any(p.cluster != name for p in group):
            raise ValueError("mean_of needs statistics of one design")
        reps = nan_mean_rows(np.column_stack([p.replicates for p in group]))
        jack = None
        if all(p.jackknife is not None for p in group):
            jack = nan_mean_rows(np.column_stack([p.jackknife for p in group]))
        parts.append(replace(group[0], estimate=np.asarray(0.0), replicates=reps, jackknife=jack))
    est = np.asarray(nan_mean_rows(np.asarray([[r.value for r in results]]))[0])
    return Resamples(est, tuple(replace(p, estimate=est) for p in parts), first.design)


@dataclass(frozen=True)
class Clustering:
    """A clustering of the annotator dimension: annotators alone, or within users, prompts,
    or user x prompt cells (Cameron, Gelbach and Miller's intersections), with its sign."""

    noun: str
    factors: tuple[str, ...]  # the row factors it is crossed with ("users", "prompts")
    sign: int


def annotator_clusterings(plan_: Plan) -> list[Clustering]:
    """The annotator clusterings of a plan that resamples annotators (none otherwise)."""
    if not plan_.annotators:
        return []
    rows = [f.name for f in plan_.factors if f.name in ("users", "prompts")]
    out = [Clustering("annotators", (), 1)]
    for name in rows:
        out.append(Clustering(f"{name[:-1]} x annotator cells", (name,), -1))
    if len(rows) == 2:
        out.append(Clustering("user x prompt x annotator cells", tuple(rows), 1))
    return out


def _labels_of(plan_: Plan, name: str) -> np.ndarray:
    return next(f.labels for f in plan_.factors if f.name == name)  # type: ignore[return-value]


def deletion_codes(
    plan_: Plan, clustering: Clustering, annotator: np.ndarray, row: np.ndarray
) -> tuple[np.ndarray, int, np.ndarray | None, tuple[str, ...]]:
    """(cluster code of every deletion entry, number of clusters, each cluster's stratum, each
    cluster's name) of one annotator clustering.

    An entry is one annotator's contribution to one observation (``row``); its cluster is
    the annotator, with the observation's user and/or prompt where the clustering is crossed,
    and is named so (``annotator|user``: :func:`level_name`).
    A clustering crossed with stratified users lies in the users' strata (None: it does not).
    """
    who = pd.Series(np.asarray(annotator, dtype=object))
    key = pd.factorize(who, sort=True)[0].astype(np.int64)
    crossed = []
    for name in clustering.factors:
        labels = _labels_of(plan_, name)
        level = pd.factorize(pd.Series(labels, dtype=object), sort=True)[0]
        key = key * (int(level.max()) + 1) + level[row]
        crossed.append(labels)
    _, first, codes = np.unique(key, return_index=True, return_inverse=True)
    g = int(codes.max()) + 1 if len(codes) else 0
    users = next((f for f in plan_.factors if f.name == "users"), None)
    strata = None
    if "users" in clustering.factors and users is not None and users.strata is not None:
        stratum = pd.factorize(users.strata.astype(str), sort=True)[0][row]
        strata = np.zeros(g, dtype=np.int64)
        strata[codes] = stratum
    # named from each cluster's first entry only: a name per entry cost a string per vote
    names = who.iloc[first].astype(str).to_numpy(dtype=object)
    for labels in crossed:
        level_of = pd.Series(labels[row[first]], dtype=object).astype(str).to_numpy(object)
        names = names + "|" + level_of
    return codes, g, strata, tuple(str(n) for n in names)


def level_name(who: Any, *levels: Any) -> str:
    """The name of a deleted level of an annotator clustering: the annotator (or a rater
    pair's two names joined by ``~``), then the user, prompt or cell it is crossed with, joined
    by ``|``; two builds' deletions are matched by these names (``recenter diff``)."""
    first = "~".join(map(str, who)) if isinstance(who, tuple) else str(who)
    return "|".join([first, *map(str, levels)])


def jackknife_part(
    estimate: np.ndarray,
    values: np.ndarray,
    clustering: Clustering,
    digest_of: Sequence[str],
    strata: np.ndarray | None = None,
    levels: Sequence[str] | None = None,
) -> BootstrapResult:
    """The delete-one-cluster values of an annotator clustering, as a part (``strata``: each
    cluster's stratum, for a stratified jackknife; ``levels``: each deleted cluster's name,
    :func:`level_name`, which a paired difference of two builds matches them by)."""
    if levels is not None and len(levels) != len(values):
        raise ValueError(f"{len(levels)} level names for {len(values)} deleted levels")
    digest = hashlib.sha256(
        (clustering.noun + "\x1f" + "\x1f".join(digest_of)).encode()
    ).hexdigest()
    return BootstrapResult(
        estimate=np.asarray(estimate),
        replicates=np.zeros((0, *np.shape(estimate))),
        jackknife=np.asarray(values, dtype=np.float64),
        n_clusters=len(values),
        cluster=clustering.noun,
        seed=None,
        weights_digest=digest,
        sign=clustering.sign,
        cluster_strata=strata,
        levels=None if levels is None else tuple(levels),
    )


# --------------------------------------------------------------------------------------
# Statistics of column totals
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DesignTotals:
    """Resampled column totals of per-observation columns; every statistic of a family is a
    function of them, so all are on the same resamples (differences are paired).

    ``stat(fn)`` evaluates ``fn(get)``, where ``get(name)`` returns that column's totals
    ``(b,)``, on the point totals, on every part's replicates and jackknife totals, and on
    the totals with each annotator deleted.
    """

    plan: Plan
    columns: tuple[str, ...]
    point: np.ndarray  # (k,)
    #: replicates (B, k) and jackknife (L, k) totals of the row factors, then the annotator
    #: clusterings' delete-one-cluster totals
    parts: tuple[BootstrapResult, ...]
    values: np.ndarray | sparse.csr_matrix  # (n, k): for the units behind a denominator

    @cached_property
    def _index(self) -> dict[str, int]:
        # a dict, not tuple.index: a crowd of raters gives tens of thousands of columns
        return {name: i for i, name in enumerate(self.columns)}

    def col(self, name: str) -> int:
        return self._index[name]

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def point_of(self, name: str) -> float:
        return float(self.point[self.col(name)])

    def getter(self) -> Callable[[str], np.ndarray]:
        """``get(name)`` over the point totals (shape ``(1,)``), for per-rater details."""
        return lambda name: self.point[None, self.col(name)]

    def _apply(self, fn: Callable[[Callable[[str], np.ndarray]], Any], t: np.ndarray | None):
        if t is None:
            return None
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(fn(lambda name: t[:, self.col(name)]), dtype=np.float64)

    def stat(self, fn: Callable[[Callable[[str], np.ndarray]], Any]) -> Resamples:
        est = self._apply(fn, self.point[None, :])
        assert est is not None
        estimate = np.asarray(est[0])
        parts = tuple(
            replace(
                p,
                estimate=estimate,
                replicates=self._apply(fn, p.replicates),
                jackknife=self._apply(fn, p.jackknife),
            )
            for p in self.parts
        )
        return Resamples(estimate, parts, self.plan.info)

    def column_values(self, name: str) -> np.ndarray:
        """Column ``name`` per observation."""
        col = self.values[:, self.col(name)]
        return np.asarray(col.toarray() if sparse.issparse(col) else col).ravel()

    def units_with(self, name: str) -> int:
        """The design's units behind column ``name`` (a share's denominator)."""
        return self.plan.units_with(self.column_values(name))


@dataclass(frozen=True)
class Deletions:
    """What deleting an annotator's judgments changes, entry by entry.

    Entry ``e`` is annotator ``annotator[e]``'s contribution to observation ``row[e]``;
    ``change[e]`` is what the columns' totals gain when it is deleted (minus that
    observation's values where the observation is the annotator's alone).
    """

    annotator: np.ndarray  # (E,)
    row: np.ndarray  # (E,)
    change: np.ndarray | sparse.csr_matrix  # (E, k)

    @classmethod
    def of_rows(
        cls, annotator_of_row: np.ndarray, values: np.ndarray | sparse.csr_matrix
    ) -> Deletions:
        """Each observation belongs to one annotator (None: to none): deleting it removes it."""
        labels = pd.Series(np.asarray(annotator_of_row, dtype=object))
        rows = np.flatnonzero(labels.notna().to_numpy())
        return cls(labels.to_numpy()[rows], rows, -values[rows])

    @classmethod
    def of_columns(
        cls, owner: Mapping[str, str], names: Sequence[str], values: sparse.csr_matrix
    ) -> Deletions:
        """Each listed column belongs to one annotator: deleting it removes its entries."""
        index = {n: j for j, n in enumerate(names)}
        cols = np.array([index[c] for c in owner], dtype=np.int64)
        who = np.array([owner[c] for c in owner], dtype=object)
        sub = sparse.csc_matrix(values)[:, cols].tocoo()
        e = np.arange(sub.nnz)
        change = sparse.csr_matrix((-sub.data, (e, cols[sub.col])), shape=(sub.nnz, len(names)))
        return cls(who[sub.col], sub.row.astype(np.int64), change)


def totals(
    plan_: Plan,
    columns: Mapping[str, np.ndarray | tuple[np.ndarray, np.ndarray]],
    n_obs: int,
    *,
    annotator_rows: np.ndarray | None = None,
    annotator_columns: Mapping[str, str] | None = None,
    deletions: Deletions | None = None,
) -> DesignTotals:
    """Resampled totals of named per-observation columns under ``plan_``.

    A column is an ``(n,)`` array, or ``(rows, values)`` for a column that is zero off
    ``rows`` (a crowd's per-rater columns: stored sparse, so memory grows with the votes).
    Where the plan resamples annotators, what deleting one changes is said one of three ways:
    ``annotator_rows`` (each observation's annotator, or None), ``annotator_columns`` (column
    -> its annotator), or ``deletions`` (entry by entry, for columns derived from several
    annotators' judgments, :class:`Deletions`).
    """
    names = tuple(columns)
    matrix: np.ndarray | sparse.csr_matrix
    if any(isinstance(c, tuple) for c in columns.values()):
        matrix = _sparse_columns(columns, names, n_obs)
    else:  # dense columns stay dense: the same sums, in the same order, as the one-way path
        matrix = np.column_stack([np.asarray(columns[n], dtype=np.float64) for n in names])
    parts = []
    for f in plan_.factors:
        res = bootstrap_statistic(
            matrix,
            lambda t: t,
            clusters=f.labels,
            cluster_name=f.noun,
            n_boot=plan_.n_boot_of(f),
            seed=plan_.seed,
            stream=f.stream,
            jackknife=plan_.jackknife_of(f),
            strata=f.strata,
        )
        parts.append(replace(res, sign=f.sign))
    # the point totals as the first factor's bootstrap sums them (per level, then over the
    # levels), so a weighted column's total has the one-way path's bits, not a row-order sum's
    point = np.asarray(parts[0].estimate, dtype=np.float64).ravel()
    if plan_.annotators:
        if annotator_rows is not None:
            deletions = Deletions.of_rows(annotator_rows, matrix)
        elif annotator_columns is not None:
            deletions = Deletions.of_columns(annotator_columns, names, sparse.csr_matrix(matrix))
        if deletions is None:
            raise ValueError("a design with annotators needs what deleting one changes")
        parts += _deletion_parts(plan_, deletions, point, [p.weights_digest for p in parts])
    return DesignTotals(plan_, names, point, tuple(parts), matrix)


def _deletion_parts(
    plan_: Plan, deletions: Deletions, point: np.ndarray, digest_of: Sequence[str]
) -> list[BootstrapResult]:
    """The delete-one-cluster totals of every annotator clustering of ``plan_``."""
    keep = np.isin(np.asarray(deletions.annotator, dtype=object), plan_.annotators)
    change = deletions.change[np.flatnonzero(keep)]
    out = []
    for clustering in annotator_clusterings(plan_):
        codes, g, strata, names = deletion_codes(
            plan_, clustering, deletions.annotator[keep], deletions.row[keep]
        )
        summed = cluster_membership(codes, g) @ change
        summed = summed.toarray() if sparse.issparse(summed) else np.asarray(summed)
        out.append(
            jackknife_part(
                point, point[None, :] + summed, clustering, digest_of, strata, levels=names
            )
        )
    return out


def _sparse_columns(
    columns: Mapping[str, np.ndarray | tuple[np.ndarray, np.ndarray]],
    names: tuple[str, ...],
    n_obs: int,
) -> sparse.csr_matrix:
    rows, values, cols = [], [], []
    for j, name in enumerate(names):
        col = columns[name]
        if isinstance(col, tuple):
            r, v = np.asarray(col[0], dtype=np.int64), np.asarray(col[1], dtype=np.float64)
        else:
            v = np.asarray(col, dtype=np.float64)
            if v.shape != (n_obs,):
                raise ValueError(f"column {name!r} has shape {v.shape}, expected ({n_obs},)")
            r = np.arange(n_obs)
        keep = v != 0
        rows.append(r[keep])
        values.append(v[keep])
        cols.append(np.full(int(keep.sum()), j))
    return sparse.csr_matrix(
        (np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))),
        shape=(n_obs, len(names)),
    )


# --------------------------------------------------------------------------------------
# Statistics of weighted rows (not sums: rank correlations, AUROC)
# --------------------------------------------------------------------------------------

#: a statistic of weighted rows: (resamples, rows) weights -> (resamples,) values (NaN allowed)
RowStatistic = Callable[[np.ndarray], np.ndarray]


def factor_counts(plan_: Plan, f: Resampled, n_obs: int) -> tuple[np.ndarray, np.ndarray, str]:
    """(codes per observation, counts (B, L), digest) of one bootstrap factor: the engine's
    draw for the plan's seed and the factor's stream (and strata; ``B = 0`` for a factor
    that is only jackknifed)."""
    if f.name in plan_._counts:
        return plan_._counts[f.name]
    cl = _Clusters(f.labels, n_obs, f.noun, f.strata)
    rng, _ = _stream(plan_.seed, f.stream)
    digest = _resample_digest(cl.n, plan_.n_boot_of(f), cl.strata)
    chunks = []
    for w in _count_chunks(rng, cl.n, plan_.n_boot_of(f), strata=cl.strata):
        digest.update(w.tobytes())
        chunks.append(w)
    counts = np.vstack(chunks) if chunks else np.zeros((0, cl.n), dtype=np.int64)
    plan_._counts[f.name] = (cl.codes, counts, digest.hexdigest())
    return plan_._counts[f.name]


def _counted_part(
    plan_: Plan,
    f: Resampled,
    n_obs: int,
    estimate: float,
    replicates: np.ndarray,
    jackknife: np.ndarray | None,
    digest: str,
) -> BootstrapResult:
    """A factor's part from a statistic evaluated on its drawn counts (:func:`factor_counts`)."""
    strata = _strata_of(f)
    return BootstrapResult(
        estimate=np.asarray(estimate),
        replicates=np.asarray(replicates, dtype=np.float64),
        jackknife=jackknife,
        n_clusters=f.n_levels,
        cluster=f.noun,
        seed=plan_.seed,
        weights_digest=digest,
        stratified_by=strata[0] if strata else None,
        n_strata=strata[1] if strata else 1,
        sign=f.sign,
        cluster_strata=_cluster_strata(f, n_obs),
    )


def weighted_rows(
    plan_: Plan,
    stat: RowStatistic,
    n_obs: int,
    evaluate: Callable[[RowStatistic, np.ndarray, np.ndarray], np.ndarray],
    *,
    annotator_rows: np.ndarray | None = None,
) -> Resamples:
    """A statistic of weighted rows under ``plan_``: one part per factor, the same counts as
    the totals path draws (so statistics of both paths pair).

    ``evaluate(stat, counts, codes)`` evaluates ``stat`` on the row weights ``counts[:, codes]``
    (:func:`analysis.stats.weighted_bootstrap.evaluate_counts`, chunked). Where the plan
    resamples annotators, ``annotator_rows`` gives each row's annotator (None: none), and
    deleting a cluster of an annotator clustering gives its rows weight 0.
    """
    est = float(stat(np.ones((1, n_obs)))[0])
    parts = []
    for f in plan_.factors:
        codes, counts, digest = factor_counts(plan_, f, n_obs)
        n_levels = counts.shape[1]
        reps = evaluate(stat, counts, codes) if len(counts) else np.zeros(0)
        jack = None
        if plan_.jackknife_of(f) and n_levels > 1:
            jack = evaluate(stat, 1 - np.eye(n_levels, dtype=np.int64), codes)
        parts.append(_counted_part(plan_, f, n_obs, est, reps, jack, digest))
    if plan_.annotators:
        if annotator_rows is None:
            raise ValueError("a design with annotators needs each row's annotator")
        labels = pd.Series(np.asarray(annotator_rows, dtype=object))
        rows = np.flatnonzero(labels.isin(plan_.annotators).to_numpy())
        digests = [p.weights_digest for p in parts]
        for clustering in annotator_clusterings(plan_):
            codes, g, strata, names = deletion_codes(
                plan_, clustering, labels.to_numpy()[rows], rows
            )
            # each row's cluster, or g: a row no deletion touches (weight 1 throughout)
            row_codes = np.full(n_obs, g, dtype=np.int64)
            row_codes[rows] = codes
            weights = np.hstack([1 - np.eye(g, dtype=np.int64), np.ones((g, 1), dtype=np.int64)])
            values = evaluate(stat, weights, row_codes)
            parts.append(
                jackknife_part(np.asarray(est), values, clustering, digests, strata, names)
            )
    return Resamples(np.asarray(est), tuple(parts), plan_.info)


# --------------------------------------------------------------------------------------
# Agreement under a design
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairwiseKappas:
    """The pairwise kappa matrix and its group means under a design (see :func:`pairwise_kappa`)."""

    raters: tuple[Any, ...]
    pairs: tuple[tuple[Any, Any], ...]
    matrix: Resamples  # (P,) one component per pair
    group_means: dict[str, Resamples]
    n_shared: np.ndarray


def pairwise_kappa(
    plan_: Plan,
    long: pd.DataFrame,
    *,
    groups: Mapping[Any, str],
    raters: Sequence[Any] | None = None,
    categories: Sequence[Any] | None = None,
    min_shared: int = 0,
    strata: str | None = None,
    table_statistic: Callable[[np.ndarray], np.ndarray] | None = None,
) -> PairwiseKappas:
    """The pairwise Cohen's kappa matrix and its group means, each factor of ``plan_`` by the
    engine (:func:`analysis.stats.bootstrap.bootstrap_pairwise_kappa` on its stream);
    ``table_statistic`` puts another statistic of each pair's table in kappa's place.

    ``long`` has the columns item, rater, label and one column per resampled factor's label
    (named as the factor: ``users``, ``prompts``, ``cells``, ``items``). The matrix cells are
    each one pair's (its raters fixed). A group mean over pairs with annotators in them also
    has the annotator clusterings: deleting annotator ``a`` drops its pairs from the mean;
    deleting ``a``'s part of a user (prompt, cell) recomputes each of ``a``'s pairs without
    that user's items (the matrix's own leave-one-level-out kappas).
    """
    people = set(plan_.annotators)
    boots: list[PairwiseKappaBootstrap] = []
    for f in plan_.factors:
        boots.append(
            bootstrap_pairwise_kappa(
                long,
                groups=groups,
                cluster=None if f.labels is None else f.name,
                raters=raters,
                categories=categories,
                n_boot=plan_.n_boot_of(f),
                seed=plan_.seed,
                stream=f.stream,
                min_shared=min_shared,
                jackknife=plan_.jackknife_of(f) or bool(people),
                strata=strata if f.strata is not None else None,
                table_statistic=table_statistic,
            )
        )
    first = boots[0]

    def assemble(pick: Callable[[PairwiseKappaBootstrap], BootstrapResult]) -> Resamples:
        parts = tuple(
            replace(pick(b), sign=f.sign, cluster=f.noun)
            for b, f in zip(boots, plan_.factors, strict=True)
        )
        return Resamples(np.asarray(parts[0].estimate), parts, plan_.info)

    matrix = assemble(lambda b: b.matrix)
    if not people:
        means = {key: assemble(lambda b, key=key: b.group_means[key]) for key in first.group_means}
        return PairwiseKappas(first.raters, first.pairs, matrix, means, first.n_shared)
    # the levels of each factor each annotator's labels fall in
    mine = long["rater"].isin(people).to_numpy()
    raters_of = long["rater"].to_numpy(dtype=object)[mine]
    present = {
        f.name: set(zip(raters_of, long[f.name].to_numpy(dtype=object)[mine], strict=True))
        for f in plan_.factors
    }
    levels = {f.name: sorted(pd.unique(long[f.name].to_numpy(dtype=object))) for f in plan_.factors}
    est = np.asarray(first.matrix.estimate)
    means = {}
    for key in first.group_means:
        assembled = assemble(lambda b, key=key: b.group_means[key])
        cols = np.array(
            [
                p
                for p, (a, b) in enumerate(first.pairs)
                if "_".join(sorted((str(groups[a]), str(groups[b])))) == key
            ]
        )
        involved = {a: np.array([a in first.pairs[p] for p in cols]) for a in plan_.annotators}
        if not any(v.any() for v in involved.values()):
            means[key] = assembled
            continue
        persons = [(involved[a], a) for a in plan_.annotators if involved[a].any()]
        # a pair of two annotators belongs to both: its own deletion, counted once too many by
        # the two annotators' deletions, enters with the opposite sign (dyadic clustering)
        dyads = [
            (np.arange(len(cols)) == i, p)
            for i, p in enumerate(cols)
            if first.pairs[p][0] in people and first.pairs[p][1] in people
        ]
        extra = []
        for clustering in annotator_clusterings(plan_):
            digests = [p.weights_digest for p in assembled.parts]
            for members, sign, noun in (
                (persons, clustering.sign, clustering.noun),
                (dyads, -clustering.sign, clustering.noun.replace("annotator", "rater-pair")),
            ):
                if not members:
                    continue
                values, strata, names = _kappa_deletions(
                    members, clustering, boots, plan_, levels, present, est, cols
                )
                extra.append(
                    jackknife_part(
                        assembled.estimate,
                        values,
                        Clustering(noun, clustering.factors, sign),
                        digests,
                        strata,
                        names,
                    )
                )
        means[key] = Resamples(assembled.estimate, (*assembled.parts, *extra), plan_.info)
    return PairwiseKappas(first.raters, first.pairs, matrix, means, first.n_shared)


def _kappa_deletions(
    members: Sequence[tuple[np.ndarray, Any]],
    clustering: Clustering,
    boots: Sequence[PairwiseKappaBootstrap],
    plan_: Plan,
    levels: Mapping[str, list[Any]],
    present: Mapping[str, set[tuple[Any, Any]]],
    est: np.ndarray,
    cols: np.ndarray,
) -> tuple[np.ndarray, np.ndarray | None, list[str]]:
    """A group mean's values with each member (an annotator's pairs, or one pair) deleted, or
    its part of each level of the clustering's factor (the matrix's leave-one-level-out
    kappas for the member's pairs); each deleted cluster's stratum and its name
    (:func:`level_name`: the annotator, or the pair's two raters)."""
    values, strata, names = [], [], []
    pairs = boots[0].pairs
    for mask, who in members:
        member = who if isinstance(who, str) else pairs[int(who)]
        if not clustering.factors:
            kept = est[cols][~mask]
            values.append(nan_mean_rows(kept[None, :])[0] if kept.size else np.nan)
            names.append(level_name(member))
            continue
        name = "cells" if len(clustering.factors) == 2 else clustering.factors[0]
        matrix = boots[[f.name for f in plan_.factors].index(name)].matrix
        jack = matrix.jackknife
        assert jack is not None
        for index, level in enumerate(levels[name]):
            if isinstance(who, str):
                if (who, level) not in present[name]:
                    continue
            elif jack[index, who] == est[who]:  # the pair has no item in this level
                continue
            row = np.where(mask, jack[index, cols], est[cols])
            values.append(nan_mean_rows(row[None, :])[0])
            names.append(level_name(member, level))
            if matrix.cluster_strata is not None:
                strata.append(matrix.cluster_strata[index])
    return np.asarray(values), (np.asarray(strata) if strata else None), names


def agreement(
    plan_: Plan,
    long: pd.DataFrame,
    coefficient: str,
    *,
    level: Level = "nominal",
    categories: Sequence[Any] | None = None,
) -> Resamples:
    """A multi-rater coefficient (Krippendorff's alpha) under ``plan_``, through its additive
    form (per-item contributions resampled as totals, the one-way bootstrap's sums).

    ``long`` has the columns item, rater, label and one per resampled factor (as
    :func:`pairwise_kappa`). Deleting an annotator's rating of an item changes only that
    item's contribution (:func:`analysis.stats.agreement.rater_deletion_changes`).
    """
    form = additive_form(long, coefficient, level=level, categories=categories)  # type: ignore[arg-type]
    per_item = long.drop_duplicates("item").set_index("item").reindex(form.items)
    factors = []
    for f in plan_.factors:
        labels = None if f.labels is None else per_item[f.name].to_numpy(dtype=object)
        strata = None
        if f.strata is not None:
            strata = _item_strata(long, form.items, str(f.strata.name))
        factors.append(replace(f, labels=labels, strata=strata))
    narrowed = replace(plan_, factors=tuple(factors))
    columns = {str(j): form.contributions[:, j] for j in range(form.contributions.shape[1])}
    deletions = None
    if plan_.annotators:
        item, rater, change = rater_deletion_changes(
            long, coefficient, level=level, categories=categories
        )
        deletions = Deletions(rater, item, change)
    tb = totals(narrowed, columns, len(form.items), deletions=deletions)
    return tb.stat(lambda g: form.finish(np.column_stack([g(c) for c in columns])))


# --------------------------------------------------------------------------------------
# Spearman's rho on resamples
# --------------------------------------------------------------------------------------


def spearman(
    plan_: Plan,
    x: np.ndarray,
    y: np.ndarray,
    rows: np.ndarray,
    n_obs: int,
    *,
    jackknife: bool = False,
) -> Resamples:
    """Spearman's rho of ``x``/``y`` on the observations ``rows`` under ``plan_``.

    Ratings take few distinct values, so each level's joint frequency table of ``(x, y)`` is
    a sufficient statistic: all resamples' tables are one product ``counts (B x L) @ tables
    (L x Gx*Gy)`` and rho follows from the tables (:func:`spearman_from_tables`, scipy's rho
    of the expanded resample). ``jackknife``: also every factor's leave-one-level-out values
    (a caller that deletes annotators' parts of a level reads them).
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ux, ix = np.unique(x, return_inverse=True)
    uy, iy = np.unique(y, return_inverse=True)
    k = ux.size * uy.size
    shape = (ux.size, uy.size)
    by_table = k <= max(64, len(rows))
    rho = weighted_spearman(x, y)
    if by_table:
        whole = np.bincount(ix * uy.size + iy, minlength=k).astype(np.float64)
        est = spearman_from_tables(whole.reshape(1, *shape))[0]
    else:  # many distinct values: the per-observation weights
        est = rho(np.ones((1, len(rows))))[0]
    parts = []
    for f in plan_.factors:
        codes_all, counts, digest = factor_counts(plan_, f, n_obs)
        codes = codes_all[rows]
        n_levels = counts.shape[1]
        jack = None
        if by_table:
            flat = codes * k + ix * uy.size + iy
            tables = np.bincount(flat, minlength=n_levels * k).reshape(n_levels, k)
            tables = tables.astype(np.float64)
            reps = spearman_from_tables((counts @ tables).reshape(-1, *shape))
            if (jackknife or plan_.jackknife_of(f)) and n_levels > 1:
                left = tables.sum(axis=0)[None, :] - tables
                jack = spearman_from_tables(left.reshape(-1, *shape))
        else:
            reps = rho(counts[:, codes].astype(np.float64))
            if (jackknife or plan_.jackknife_of(f)) and n_levels > 1:  # absent: no change
                jw = (codes[None, :] != np.arange(n_levels)[:, None]).astype(np.float64)
                jack = rho(jw)
        parts.append(_counted_part(plan_, f, n_obs, est, reps, jack, digest))
    return Resamples(np.asarray(est), tuple(parts), plan_.info)


def spearman_from_tables(tables: np.ndarray) -> np.ndarray:
    """Spearman's rho of samples given as joint frequency tables ``(b, Gx, Gy)``.

    Rows and columns are the sorted distinct values of x and y; a value with frequency ``w``
    after ``L`` smaller ones has mid-rank ``L + (w + 1) / 2`` (scipy's tie rule). NaN where a
    variable is constant.
    """
    t = np.asarray(tables, dtype=np.float64)
    wx, wy = t.sum(axis=2), t.sum(axis=1)
    rx = np.cumsum(wx, axis=1) - wx + (wx + 1.0) / 2.0
    ry = np.cumsum(wy, axis=1) - wy + (wy + 1.0) / 2.0
    sw = wx.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        dx = rx - ((wx * rx).sum(axis=1) / sw)[:, None]
        dy = ry - ((wy * ry).sum(axis=1) / sw)[:, None]
        cov = np.einsum("bij,bi,bj->b", t, dx, dy)
        vx = (wx * dx * dx).sum(axis=1)
        vy = (wy * dy * dy).sum(axis=1)
    return rank_correlation(cov, vx, vy, sw)
