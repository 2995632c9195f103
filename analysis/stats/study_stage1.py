"""Stage 1 (attribute extraction): how often people accept extracted attributes, and how much
they agree with each other and with LLM verifiers.

Input: the canonical ``attribute_judgments`` (one row per attribute and rater; label
``accepted`` / ``uncertain`` / ``rejected``) and ``users`` (``source``, ``source_kind``).
Stage-1 keys carry no round: they describe the study's final annotation, or the pilot where
a dataset has only a pilot (the record's ``extra.round`` says which; rounds are never pooled).

* ``stage1.acceptance_rate.<source>`` / ``.real`` / ``.synthetic`` / ``.overall``: share of
  human judgments that accept the attribute (each judgment counts once).
* ``stage1.problematic_gap_real_vs_synthetic``: share of problematic judgments (uncertain or
  rejected) for real users minus that for synthetic users, in percentage points of the share
  (the study's "22% more problematic attributes"), with a test of 0 on its own resamples.
* ``stage1.flags.share.<reason>`` (``overgeneralization``, ``task_context_confusion``,
  ``other``): share of flags with that reason. A flag is a human judgment that does not accept
  the attribute (uncertain or rejected) and carries a structured ``flag_reason``; each flag
  (a judgment) counts once. The reason
  is the judgment's own field, never read from its free-text note; a dataset without the
  field (the real exports) has no such keys.
* ``stage1.flags.n_attributes`` and ``stage1.flags.attribute_share.<reason>``: the same flags
  counted by attribute, the unit of the study's figures ("of the flagged attributes, ..."): the
  attributes with at least one flag, and their shares by reason.
* ``stage1.kappa.human_human``: mean pairwise Cohen's kappa over human raters (3 categories);
  ``stage1.alpha.human``: Krippendorff's alpha (nominal) over all human judgments.
* ``stage1.verifier_agreement.<model>``: Cohen's kappa of an LLM verifier's accept / not-accept
  decision with the human majority (accepted when more than half of the attribute's human
  judgments accept it), with the human ceiling ``stage1.ceiling.kappa_human_vs_rest`` (each
  human's decision against the majority of at least two other humans, ties dropped: the
  leave-one-out reference of stage 2), present when a verifier is.

Designs (``stats.designs``): users are resampled within the users' ``source`` (Rao and
Wu's rescaling bootstrap, :mod:`analysis.stats.bootstrap`), all statistics on the same
resamples. The study took a set number of users from each source (chat logs, each synthetic
benchmark), so a resample keeps each source's number of users: resampling them all together
would let the mix of sources vary, and the shares pooled over sources (overall, real vs
synthetic) would get intervals wider than their sampling spread (the coverage benchmark
found the overall acceptance rate's interval over-covering). People's judgments
(``attribute_judgments``: acceptance, flags, agreement, the ceiling) also resample the
annotators; the verifiers against the human majority (``attribute_labels``) hold the models
and the majority fixed. Deleting a person from the ceiling removes its own decisions and
rebuilds every other person's leave-one-out reference on the attributes it judged from the
people left (:func:`analysis.stats.study_common.person_deletions`, as in stage 2). Under
``stats.design = one_way``, ``stats.cluster = item`` resamples attributes (a judgment has no
prompt, so ``prompt`` falls back to users).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.data.vocabulary import (
    ACCEPTED,
    FLAG_REASONS,
    HUMAN,
    JUDGE_KINDS,
    MODEL,
    REAL,
    SOURCE_KINDS,
    STAGE1_LABELS,
    SYNTHETIC,
)
from analysis.provenance import Record
from analysis.stats.records import (
    AGREEMENT,
    NullTest,
    Statistic,
    key_part,
    make_records,
)
from analysis.stats.resampling import (
    Deletions,
    Plan,
    Units,
    agreement,
    pairwise_kappa,
    plan,
    totals,
)
from analysis.stats.settings import StatsSettings
from analysis.stats.study_common import (
    StudyDataError,
    loo_majority_from_counts,
    loo_phrase,
    n_shared,
    nanmean_arrays,
    pair_cells,
    pair_kappa,
    person_deletions,
    ratio,
    require_columns,
    require_unique,
    show,
    study_round,
)

MODULE = "analysis.stats.study_stage1"
JUDGMENT_COLUMNS = ("attribute_id", "user_id", "rater", "rater_kind", "round", "label")
#: carried when the table has it (older or hand-made tables may not): null = no reason given
FLAG_REASON = "flag_reason"
USER_COLUMNS = ("user_id", "source", "source_kind")
LABELS = STAGE1_LABELS
#: the design of people's judgments, and of verifiers against the human majority
JUDGMENTS, LABELS_DESIGN = "attribute_judgments", "attribute_labels"


def _judgments(judgments: pd.DataFrame, users: pd.DataFrame) -> tuple[pd.DataFrame, str] | None:
    """The study round's judgments with each user's source; None when there are none."""
    require_columns(judgments, "attribute_judgments", JUDGMENT_COLUMNS)
    require_columns(users, "users", USER_COLUMNS)
    if judgments.empty:
        return None
    round_name = study_round(judgments["round"].astype(str), "attribute_judgments")
    assert round_name is not None
    in_round = judgments["round"].astype(str) == round_name
    df = judgments.loc[in_round, list(JUDGMENT_COLUMNS)]
    df = df.astype({c: str for c in JUDGMENT_COLUMNS})
    if FLAG_REASON in judgments.columns:
        reason = judgments.loc[in_round, FLAG_REASON]
        df[FLAG_REASON] = reason.astype(object).where(reason.notna(), None)
        _check_flag_reasons(df)
    bad = ~df["label"].isin(LABELS)
    if bad.any():
        row = df.index[bad.to_numpy()][0]
        raise StudyDataError(
            f"table attribute_judgments row {row!r}: field 'label' = {show(df.loc[row, 'label'])} "
            f"is not one of {LABELS}"
        )
    bad = ~df["rater_kind"].isin(JUDGE_KINDS)
    if bad.any():
        row = df.index[bad.to_numpy()][0]
        raise StudyDataError(
            f"table attribute_judgments row {row!r}: field 'rater_kind' = "
            f"{show(df.loc[row, 'rater_kind'])} is not 'human' or 'model'"
        )
    require_unique(df, "attribute_judgments", ("attribute_id", "rater"))
    per_attr = df.groupby("attribute_id")["user_id"].nunique()
    if (per_attr > 1).any():
        attr = per_attr.index[(per_attr > 1).to_numpy()][0]
        raise StudyDataError(
            f"table attribute_judgments: attribute {attr!r} has several user_id values"
        )
    u = users.loc[:, list(USER_COLUMNS)].astype(str)
    require_unique(u, "users", ("user_id",))
    df = df.merge(u, on="user_id", how="left", validate="many_to_one")
    unknown = df["source"].isna()
    if unknown.any():
        row = df.index[unknown.to_numpy()][0]
        raise StudyDataError(
            f"table attribute_judgments row {row!r}: user_id {show(df.loc[row, 'user_id'])} is "
            "not in the users table (field 'user_id')"
        )
    return df.reset_index(drop=True), round_name


def _check_flag_reasons(df: pd.DataFrame) -> None:
    """A reason must be one of the vocabulary's and sit on a judgment that is not accepted."""
    given = df[FLAG_REASON].notna()
    bad = given & ~df[FLAG_REASON].isin(FLAG_REASONS)
    if bad.any():
        row = df.index[bad.to_numpy()][0]
        raise StudyDataError(
            f"table attribute_judgments row {row!r}: field 'flag_reason' = "
            f"{show(df.loc[row, FLAG_REASON])} is not one of {FLAG_REASONS}"
        )
    bad = given & (df["label"] == ACCEPTED)
    if bad.any():
        row = df.index[bad.to_numpy()][0]
        raise StudyDataError(
            f"table attribute_judgments row {row!r}: field 'flag_reason' is set on a judgment "
            "that accepts the attribute"
        )


def judgment_units(human: pd.DataFrame) -> Units:
    """Each human judgment's user, source, attribute and annotator."""
    return Units(
        n=len(human),
        users=human["user_id"].to_numpy(dtype=object),
        strata=human["source"].rename("source").reset_index(drop=True),
        annotators=tuple(sorted(human["rater"].unique())),
        items=human["attribute_id"].to_numpy(dtype=object),
        noun="attributes",
    )


def flag_reason_shares(human: pd.DataFrame, round_name: str, people: Plan) -> list[Statistic]:
    """Share of flags (non-accepted human judgments with a reason) by reason.

    Flags are resampled with their users (and annotators) like every other stage-1 share (the
    same resamples as the acceptance rates), and the three shares are ratios of totals of one
    pass, so they sum to one on every resample.
    """
    if FLAG_REASON not in human.columns:
        return []
    not_accepted = (human["label"] != ACCEPTED).to_numpy()
    has_reason = human[FLAG_REASON].notna().to_numpy()
    flag = not_accepted & has_reason
    n = int(flag.sum())
    if n == 0:
        return []
    cols: dict[str, np.ndarray] = {"n": flag.astype(np.float64)}
    for reason in FLAG_REASONS:
        cols[reason] = (flag & (human[FLAG_REASON] == reason).to_numpy()).astype(np.float64)
    tb = totals(people, cols, len(human), annotator_rows=human["rater"].to_numpy(dtype=object))
    without = int((not_accepted & ~has_reason).sum())
    missing = (
        f"; {without} non-accepted judgments carry no reason and are left out" if without else ""
    )
    counts = {reason: int(cols[reason].sum()) for reason in FLAG_REASONS}
    return [
        Statistic(
            key=f"stage1.flags.share.{reason}",
            estimate=tb.stat(lambda g, reason=reason: ratio(g(reason), g("n"))),
            fmt=".1%",
            what=(
                f"share of the {n} flags whose structured reason is "
                f"{reason.replace('_', ' ')} (a flag: a human judgment that does not "
                f"accept the attribute, uncertain or rejected, {round_name} round; each "
                "flag counts once; the reason is the judgment's flag_reason field, not read "
                f"from its note{missing})"
            ),
            code=f"{MODULE}:flag_reason_shares",
            n=n,
            extra={"round": round_name, "counts": counts, "without_reason": without},
            units=tb.units_with("n"),
        )
        for reason in FLAG_REASONS
    ]


def flagged_attribute_shares(
    human: pd.DataFrame, round_name: str, people: Plan
) -> tuple[list[Statistic], list[Record]]:
    """The flags counted by attribute, the study's unit ("of the flagged attributes, ...").

    ``stage1.flags.n_attributes`` counts the attributes with at least one flag (an exact
    count of this dataset, no interval). ``stage1.flags.attribute_share.<reason>`` is the
    share of those attributes by reason, each flagged attribute counting once: an attribute
    whose flags give several reasons is split between them in proportion to its flags (the
    flags of one attribute weigh one in all), so the shares sum to one. Same design and
    resamples as :func:`flag_reason_shares`; each share is a ratio of weighted totals.
    Deleting an annotator deletes its flags and re-weighs the other flags of the attributes
    it flagged (each then weighs one over the flags left).
    """
    if FLAG_REASON not in human.columns:
        return [], []
    flag = ((human["label"] != ACCEPTED) & human[FLAG_REASON].notna()).to_numpy()
    if not flag.any():
        return [], []
    attribute = human["attribute_id"].to_numpy(dtype=object)
    n_flags = pd.Series(flag.astype(np.float64)).groupby(attribute).transform("sum").to_numpy()
    weight = np.where(flag, 1.0 / np.maximum(n_flags, 1.0), 0.0)
    n_attributes = int(round(float(weight.sum())))
    reasons = human[FLAG_REASON].to_numpy()
    cols: dict[str, np.ndarray] = {"attributes": weight}
    for reason in FLAG_REASONS:
        cols[reason] = np.where(reasons == reason, weight, 0.0)
    deletions = None
    if people.annotators:
        matrix = np.column_stack(list(cols.values()))
        rows = np.flatnonzero(flag)
        pairs = pd.DataFrame({"row": rows, "attribute": attribute[rows]})
        pairs = pairs.merge(pairs, on="attribute", suffixes=("", "_other"))
        same = (pairs["row"] == pairs["row_other"]).to_numpy()
        deleted, other = pairs["row"].to_numpy(), pairs["row_other"].to_numpy()
        # the deleted flag goes; each other flag of its attribute weighs 1/(n-1) instead of 1/n
        scale = np.where(same, -1.0, 1.0 / np.maximum(n_flags[other] - 1.0, 1.0))
        deletions = Deletions(
            annotator=human["rater"].to_numpy(dtype=object)[deleted],
            row=other,
            change=matrix[other] * scale[:, None],
        )
    tb = totals(people, cols, len(human), deletions=deletions)
    code = f"{MODULE}:flagged_attribute_shares"
    count = Record(
        key="stage1.flags.n_attributes",
        value=n_attributes,
        fmt=",d",
        method=(
            "attributes with at least one flag (a human judgment that does not accept the "
            f"attribute and gives a structured reason; {round_name} round): an exact count "
            "of this dataset"
        ),
        code=code,
        unit="attributes",
        extra={"round": round_name, "n_flags": int(flag.sum())},
    )
    shares = [
        Statistic(
            key=f"stage1.flags.attribute_share.{reason}",
            estimate=tb.stat(lambda g, reason=reason: ratio(g(reason), g("attributes"))),
            fmt=".1%",
            what=(
                f"share of the {n_attributes} flagged attributes whose flags give the reason "
                f"{reason.replace('_', ' ')} ({round_name} round; each flagged attribute "
                "counts once, one with flags of several reasons is split between them in "
                "proportion to its flags)"
            ),
            code=code,
            n=n_attributes,
            unit="attributes",
            extra={"round": round_name, "attributes": round(float(cols[reason].sum()), 6)},
            units=tb.units_with("attributes"),
        )
        for reason in FLAG_REASONS
    ]
    return shares, [count]


def acceptance_rates(human: pd.DataFrame, round_name: str, people: Plan) -> list[Statistic]:
    """Acceptance per source, per source kind and overall; the real-vs-synthetic gap."""
    code = f"{MODULE}:acceptance_rates"
    accepted = (human["label"] == ACCEPTED).to_numpy(dtype=np.float64)
    groups: dict[str, np.ndarray] = {"overall": np.ones(len(human), dtype=bool)}
    for kind in SOURCE_KINDS:
        groups[kind] = (human["source_kind"] == kind).to_numpy()
    for source in sorted(human["source"].unique()):
        groups.setdefault(key_part(source), (human["source"] == source).to_numpy())
    cols: dict[str, np.ndarray] = {}
    for name, mask in groups.items():
        cols[f"acc|{name}"] = accepted * mask
        cols[f"n|{name}"] = mask.astype(np.float64)
    tb = totals(people, cols, len(human), annotator_rows=human["rater"].to_numpy(dtype=object))
    out: list[Statistic] = []
    for name, mask in groups.items():
        n = int(mask.sum())
        if n == 0:
            continue
        what = {
            "overall": "all users",
            REAL: "users of source kind real (chat-history users; stand-ins when simulated)",
            SYNTHETIC: "synthetic-benchmark users (source_kind synthetic)",
        }.get(name, f"users of source {name}")
        out.append(
            Statistic(
                key=f"stage1.acceptance_rate.{name}",
                estimate=tb.stat(lambda g, name=name: ratio(g(f"acc|{name}"), g(f"n|{name}"))),
                fmt=".1%",
                what=(
                    f"share of the {n} human judgments ({round_name} round) that accept the "
                    f"attribute, {what}; each judgment counts once"
                ),
                code=code,
                n=n,
                extra={"round": round_name, "accepted": int(accepted[mask].sum())},
                units=tb.units_with(f"n|{name}"),
                unit="judgments",
            )
        )
    if groups[REAL].any() and groups[SYNTHETIC].any():
        n = int(groups[REAL].sum() + groups[SYNTHETIC].sum())
        out.append(
            Statistic(
                key="stage1.problematic_gap_real_vs_synthetic",
                estimate=tb.stat(
                    lambda g: (
                        ratio(g("acc|synthetic"), g("n|synthetic"))
                        - ratio(g("acc|real"), g("n|real"))
                    )
                ),
                fmt=".1%",
                what=(
                    "share of problematic (uncertain or rejected) human judgments for users "
                    "of source kind real (chat-history users; stand-ins in a simulated "
                    "dataset) minus that for synthetic-benchmark users (difference of shares; "
                    f"{round_name} round; both kinds on the same resamples)"
                ),
                code=code,
                n=n,
                extra={
                    "round": round_name,
                    "problematic_real": 1.0 - tb.point_of("acc|real") / tb.point_of("n|real"),
                    "problematic_synthetic": 1.0
                    - tb.point_of("acc|synthetic") / tb.point_of("n|synthetic"),
                },
                test=NullTest(0.0, "problematic_gap"),
                unit="judgments",
            )
        )
    return out


def _sparse_phrase(n_raters: int, kept: int, minimum: int) -> str:
    """Says how many rater pairs shared too few attributes to get a kappa (none: nothing)."""
    left = n_raters * (n_raters - 1) // 2 - kept
    return f"; {left} pairs sharing fewer than {minimum} attributes left out" if left > 0 else ""


def human_agreement(
    human: pd.DataFrame, round_name: str, people: Plan, settings: StatsSettings
) -> list[Statistic]:
    """Mean pairwise Cohen's kappa and Krippendorff's alpha over the human judgments."""
    raters = sorted(human["rater"].unique())
    if len(raters) < 2:
        return []
    long = human.rename(columns={"attribute_id": "item"}).assign(
        users=human["user_id"], items=human["attribute_id"]
    )[["item", "rater", "label", "users", "items", "source"]]
    if long.groupby("item")["rater"].size().max() < 2:
        return []  # no attribute judged twice: no agreement to measure
    out: list[Statistic] = []
    boot = pairwise_kappa(
        people,
        long,
        groups=dict.fromkeys(raters, HUMAN),
        categories=list(LABELS),
        min_shared=settings.min_shared_items,
        strata="source",
    )
    res = boot.group_means.get("human_human")
    n_items = int((long.groupby("item")["rater"].size() >= 2).sum())
    if res is not None:
        defined = int(np.isfinite(np.asarray(boot.matrix.estimate)).sum())
        out.append(
            Statistic(
                key="stage1.kappa.human_human",
                estimate=res,
                fmt=".2f",
                what=(
                    f"mean pairwise Cohen's kappa over the {defined} pairs of {len(raters)} "
                    f"human raters (labels accepted/uncertain/rejected, {round_name} round; "
                    "each pair on the attributes it shares)"
                    + _sparse_phrase(len(raters), len(boot.pairs), settings.min_shared_items)
                ),
                code=f"{MODULE}:human_agreement",
                n=n_items,
                extra={"round": round_name, "n_raters": len(raters), "n_pairs": defined},
                limits=AGREEMENT,
            )
        )
    out.append(
        Statistic(
            key="stage1.alpha.human",
            estimate=agreement(
                people,
                long,
                "krippendorff_alpha",
                level="nominal",
                categories=list(LABELS),
            ),
            fmt=".2f",
            what=(
                f"Krippendorff's alpha (nominal) over the {len(long)} human judgments of "
                f"{len(raters)} raters ({round_name} round; missing judgments allowed)"
            ),
            code=f"{MODULE}:human_agreement",
            n=n_items,
            extra={"round": round_name, "n_raters": len(raters), "level": "nominal"},
            limits=AGREEMENT,
        )
    )
    return out


def verifier_agreement(
    df: pd.DataFrame, round_name: str, settings: StatsSettings, per_attr: pd.DataFrame
) -> list[Statistic]:
    """LLM verifiers' accept decisions against the human majority, with the human ceiling.

    ``per_attr`` maps each attribute to its user and source.
    """
    models = sorted(df.loc[df["rater_kind"] == MODEL, "rater"].unique())
    humans = sorted(df.loc[df["rater_kind"] == HUMAN, "rater"].unique())
    if not models or not humans:
        return []
    acc = df.assign(acc=(df["label"] == ACCEPTED).astype(np.float64))
    index = pd.Index(acc["attribute_id"].unique()).sort_values()
    wide = (
        acc[acc["rater"].isin(models)]
        .pivot(index="attribute_id", columns="rater", values="acc")
        .reindex(index=index, columns=models)
    )
    # the humans stay long: a crowd of annotators on K times the attributes would make an
    # attributes x humans matrix of nearly empty cells; each person costs only its own rows
    human = acc[acc["rater"].isin(humans)]
    rows = index.get_indexer(human["attribute_id"])
    n_h = np.bincount(rows, minlength=len(index))
    yes = np.bincount(rows, weights=human["acc"].to_numpy(), minlength=len(index))
    majority = np.where(n_h >= 2, (yes > n_h / 2.0).astype(np.float64), np.nan)
    every = np.arange(len(index))
    cols: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    owner: dict[str, str] = {}
    for m in models:
        for cell, v in pair_cells(wide[m].to_numpy(), majority).items():
            cols[f"{m}|majority|{cell}"] = (every, v)
    ties = 0
    by_person = pd.Series(np.arange(len(human))).groupby(human["rater"].to_numpy()).indices
    for person in humans:
        mine = by_person[person]
        mine = mine[np.argsort(rows[mine], kind="stable")]
        own = human["acc"].to_numpy()[mine]
        rest, tie = loo_majority_from_counts(own, n_h[rows[mine]], yes[rows[mine]])
        ties += int(tie.sum())
        for cell, v in pair_cells(own, rest).items():
            cols[f"{person}|rest|{cell}"] = (rows[mine], v)
            owner[f"{person}|rest|{cell}"] = person
    at = per_attr.reindex(index)
    units = Units(
        n=len(index),
        users=at["user_id"].to_numpy(dtype=object),
        strata=at["source"].rename("source").reset_index(drop=True),
        annotators=tuple(humans),
        noun="attributes",
    )
    labels = plan(settings, LABELS_DESIGN, units)
    people = plan(settings, JUDGMENTS, units)
    deletions = None
    if people.annotators:
        # deleting a person also rebuilds the other people's references on its attributes
        votes = pd.DataFrame(
            {
                "row": rows.astype(np.int64),
                "voter": human["rater"].to_numpy(dtype=object),
                "vote": human["acc"].to_numpy(),
            }
        )
        deletions = person_deletions(
            tuple(cols), cols, owner, votes, n_h, yes, lambda h, r, o: [(f"{h}|rest", o)]
        )
    tb = totals(people, cols, len(index), deletions=deletions)
    code = f"{MODULE}:verifier_agreement"
    ref = (
        "the human majority (accepted when more than half of the attribute's human judgments "
        "accept it; attributes with at least two)"
    )
    out: list[Statistic] = []
    for m in models:
        n = n_shared(tb, m, "majority")
        if n == 0:
            continue
        out.append(
            Statistic(
                key=f"stage1.verifier_agreement.{key_part(m)}",
                estimate=tb.stat(lambda g, m=m: pair_kappa(g, m, "majority")).under(labels),
                fmt=".2f",
                what=(
                    f"Cohen's kappa of verifier {m}'s accept / not-accept decision (uncertain "
                    f"counts as not accepted) with {ref}, on {n} attributes ({round_name} round)"
                ),
                code=code,
                n=n,
                extra=settings.with_caveat(m, {"round": round_name}),
                limits=AGREEMENT,
            )
        )
    rated = [p for p in humans if n_shared(tb, p, "rest") > 0]
    if out and len(humans) >= 2 and rated:
        get = tb.getter()
        n = int(sum(n_shared(tb, p, "rest") for p in rated))
        out.append(
            Statistic(
                key="stage1.ceiling.kappa_human_vs_rest",
                estimate=tb.stat(
                    lambda g: nanmean_arrays([pair_kappa(g, p, "rest") for p in rated])
                ),
                fmt=".2f",
                what=(
                    f"human ceiling for the verifier agreement: each of the {len(rated)} human "
                    "raters' accept / not-accept decisions against "
                    f"{loo_phrase().replace('item', 'attribute')}, Cohen's kappa averaged over "
                    f"humans ({n} human-attribute pairs, {ties} dropped for a tie, "
                    f"{round_name} round)"
                ),
                code=code,
                n=n,
                extra={
                    "round": round_name,
                    "per_rater": {p: float(pair_kappa(get, p, "rest")[0]) for p in rated},
                    "tied_pairs_dropped": ties,
                },
                limits=AGREEMENT,
            )
        )
    return out


def stage1_records(
    judgments: pd.DataFrame, users: pd.DataFrame, settings: StatsSettings
) -> list[Record]:
    """Every stage-1 record the data support (absent keys where they do not)."""
    prepared = _judgments(judgments, users)
    if prepared is None:
        return []
    df, round_name = prepared
    human = df[df["rater_kind"] == HUMAN].reset_index(drop=True)
    statistics: list[Statistic] = []
    counts: list[Record] = []
    if len(human):
        people = plan(settings, JUDGMENTS, judgment_units(human))
        statistics += acceptance_rates(human, round_name, people)
        statistics += flag_reason_shares(human, round_name, people)
        shares, counts = flagged_attribute_shares(human, round_name, people)
        statistics += shares
        statistics += human_agreement(human, round_name, people, settings)
    per_attr = df.groupby("attribute_id")[["user_id", "source"]].first()
    statistics += verifier_agreement(df, round_name, settings, per_attr)
    return sorted(make_records(statistics, settings) + counts, key=lambda r: r.key)
