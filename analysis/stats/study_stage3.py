"""Stage 3 (response generation): do people prefer personalized responses, and do LLM judges
rate them as people do?

Input: the canonical ``preference_ratings`` (one row per (user, prompt, generator, attribute)
and rater; 1 = personalized much worse, 3 = no difference, 5 = much better) and, for the
mention analyses, the explicit-mention flags of the personalized responses (``mentions``: one
row per personalized response and attribute; see :func:`mention_units`).

The unit of analysis is a *rating slot*: one attribute of one personalized response, i.e.
(user_id, prompt_id, generator, attribute_id). Its human rating is the mean over the human
raters of that slot; a judge rates a slot once.

* ``stage3.no_better_share``: share of personalized responses people rate no better than
  generic. Rule per response: average each attribute's human ratings, then the attributes;
  the response is *no better* when that mean is <= 3 (3 = no difference).
* ``stage3.human_better_share``: share of those responses people rate *better* than generic
  (score > 3), the complement of ``stage3.no_better_share`` on the same responses and
  resamples, a record of its own so that it stands beside the judges' shares.
* ``stage3.judge_better_share.<judge>``: the same rule applied to one model judge's ratings
  (the mean of its ratings over the response's attributes > 3), on the responses people
  rated and the judge rated too; ``stage3.judge_better_share_minus_human.<judge>``: that share
  minus people's share on the same responses (paired, same resamples).
* ``stage3.mean_rating.<generator>`` / ``.human``: mean human rating of the slots.
* ``stage3.judge_mean_rating.<judge>``: mean rating a judge gives.
* ``stage3.judge_minus_human.<judge>``: mean of (judge - human) over the slots both rate, with
  a test of 0 from the same cluster resamples as its interval, Holm-adjusted across judges.
* ``stage3.mention_delta.<rater>`` (``human`` and each judge): mean rating of slots whose
  attribute the personalized response mentions explicitly minus slots where it does not.
* ``stage3.mention_rate.<generator>``: share of a generator's rating slots (personalized
  response x attribute) with an explicit mention.
* ``stage3.mention_habit_vs_bias.spearman``: across models that are both generators and
  judges, Spearman's rho of mention rate (as generator) and mention delta (as judge), with a
  Fisher-z interval (Bonett-Wright SE; approximate with few models) and, from 5 to 9 models,
  the exact permutation p-value; needs at least four models (four: descriptive, no p).
* ``stage3.judge_spearman_vs_human.<judge>``: Spearman's rho of judge and human ratings over
  slots, and the ceiling ``stage3.ceiling.spearman_human_vs_rest``: each human against the
  mean of the other humans on the slots they share, averaged over humans.

Keys describe the final round (or the only round present); rounds are never pooled.
Designs (``stats.designs``): every slot and response belongs to a sampled user and a sampled
prompt, crossed (``rating_models``: the judges' and generators' own numbers); statistics of
people's ratings, and of the judges measured against them, also resample the annotators
(``rating_people``; deleting an annotator recomputes the slots and responses it rated from
the other people's ratings); the habit-vs-bias correlation treats the models as its sample
(``across_models``). The same resamples serve every statistic of a family; rank
correlations are resampled vectorized (:func:`analysis.stats.resampling.spearman`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analysis.data.vocabulary import HUMAN, JUDGE_KINDS, MODEL, PERSONALIZED
from analysis.provenance import Record
from analysis.stats.intervals import (
    Interval,
    correlation_with_ci,
    exact_permutation_attainable,
    exact_permutation_p,
)
from analysis.stats.records import (
    AGREEMENT,
    DISAGREEMENT_EXPLAINED,
    NullTest,
    Statistic,
    key_part,
    make_records,
)
from analysis.stats.resampling import (
    Deletions,
    DesignTotals,
    Plan,
    Resamples,
    Units,
    annotator_clusterings,
    design_info,
    jackknife_part,
    joined,
    level_name,
    mean_of,
    plan,
    spearman,
    totals,
)
from analysis.stats.settings import StatsSettings
from analysis.stats.stratified import stratified_difference, stratum_weights
from analysis.stats.study_common import (
    StudyDataError,
    ratio,
    require_columns,
    require_unique,
    show,
    study_round,
)

MODULE = "analysis.stats.study_stage3"
RATING_COLUMNS = (
    "user_id",
    "prompt_id",
    "generator",
    "attribute_id",
    "rater",
    "rater_kind",
    "round",
    "rating",
)
SLOT = ("user_id", "prompt_id", "generator", "attribute_id")
RESPONSE = ("user_id", "prompt_id", "generator")
#: the rule of ``stage3.no_better_share``: a response whose mean human rating is at most this
NO_BETTER_AT_MOST = 3.0
#: fewest models for the habit-vs-bias correlation (a Fisher-z interval needs n > 3)
MIN_MODELS_FOR_CORRELATION = 4
#: the habit-vs-bias correlation is descriptive (no p-value) with at most this many models
DESCRIPTIVE_AT_MOST = 4
#: below this many models its p-value is the exact permutation p (all n! pairings)
EXACT_TEST_BELOW = 10
MENTION_FLAG = "mentioned"
#: the designs of people's ratings (and judges against them), of the models' own numbers,
#: and of the correlation across models
PEOPLE, MODELS, ACROSS_MODELS = "rating_people", "rating_models", "across_models"
#: the design of a judge's ranks against people's ratings (the reference)
REFERENCE = "rating_reference"


# --------------------------------------------------------------------------------------
# Input
# --------------------------------------------------------------------------------------


def _ratings(ratings: pd.DataFrame) -> tuple[pd.DataFrame, str] | None:
    require_columns(ratings, "preference_ratings", RATING_COLUMNS)
    if ratings.empty:
        return None
    round_name = study_round(ratings["round"].astype(str), "preference_ratings")
    assert round_name is not None
    df = ratings.loc[ratings["round"].astype(str) == round_name, list(RATING_COLUMNS)].copy()
    for col in RATING_COLUMNS[:-1]:
        df[col] = df[col].astype(str)
    rating = pd.to_numeric(df["rating"], errors="coerce")
    bad = rating.isna() | (rating < 1) | (rating > 5) | (rating != np.round(rating))
    if bad.any():
        row = df.index[bad.to_numpy()][0]
        raise StudyDataError(
            f"table preference_ratings row {row!r}: field 'rating' = {show(df.loc[row, 'rating'])} "
            "is not an integer from 1 to 5"
        )
    df["rating"] = rating.astype(np.float64)
    bad = ~df["rater_kind"].isin(JUDGE_KINDS)
    if bad.any():
        row = df.index[bad.to_numpy()][0]
        raise StudyDataError(
            f"table preference_ratings row {row!r}: field 'rater_kind' = "
            f"{show(df.loc[row, 'rater_kind'])} is not 'human' or 'model'"
        )
    require_unique(df, "preference_ratings", (*SLOT, "rater"))
    return df.reset_index(drop=True), round_name


def mention_units(
    mentions: pd.DataFrame | None, responses: pd.DataFrame | None
) -> pd.DataFrame | None:
    """Explicit-mention flag per rating slot of a *personalized* response.

    ``mentions`` (rule ``explicit_mentions``) has a boolean column ``mentioned`` per
    (response_id, attribute_id); ``responses`` maps response_id to (user_id, prompt_id,
    generator, condition), and only ``personalized`` responses are kept (generic responses
    are what the personalized one is compared with, not a generator's habit). A mentions
    table that already carries (user_id, prompt_id, generator) is used as it is (keeping
    ``condition == personalized`` where that column exists). None: no mention data.
    """
    if mentions is None or mentions.empty:
        return None
    require_columns(mentions, "mentions", ("attribute_id", MENTION_FLAG))
    df = mentions.copy()
    if "response_id" in df.columns and responses is not None:
        require_columns(responses, "responses", ("response_id", *RESPONSE, "condition"))
        r = responses.loc[:, ["response_id", *RESPONSE, "condition"]].astype(str)
        require_unique(r, "responses", ("response_id",))
        df = df.drop(columns=[c for c in (*RESPONSE, "condition") if c in df.columns])
        df = df.assign(response_id=df["response_id"].astype(str)).merge(
            r, on="response_id", how="left", validate="many_to_one"
        )
        missing = df["user_id"].isna()
        if missing.any():
            row = df.index[missing.to_numpy()][0]
            raise StudyDataError(
                f"table mentions row {row!r}: response_id {show(df.loc[row, 'response_id'])} is "
                "not in the responses table (field 'response_id')"
            )
    elif not set(RESPONSE) <= set(df.columns):
        raise StudyDataError(
            "table mentions names responses by response_id; the responses table is needed to "
            "map them to (user_id, prompt_id, generator)"
        )
    if "condition" in df.columns:
        df = df[df["condition"].astype(str) == PERSONALIZED]
    df = df.loc[:, [*SLOT, MENTION_FLAG]].copy()
    for col in SLOT:
        df[col] = df[col].astype(str)
    if df[MENTION_FLAG].isna().any():
        row = df.index[df[MENTION_FLAG].isna().to_numpy()][0]
        raise StudyDataError(f"table mentions row {row!r}: field 'mentioned' is missing")
    df[MENTION_FLAG] = df[MENTION_FLAG].astype(bool)
    require_unique(df, "mentions", SLOT)
    return df.reset_index(drop=True) if len(df) else None


def _units(
    frame: pd.DataFrame, key: tuple[str, ...], noun: str, people: Sequence[str] = ()
) -> Units:
    """Each row's user and prompt (crossed), its own key (for ``item``) and the annotators."""
    return Units(
        n=len(frame),
        users=frame["user_id"].astype(str).to_numpy(dtype=object),
        prompts=frame["prompt_id"].astype(str).to_numpy(dtype=object),
        annotators=tuple(sorted(map(str, people))),
        items=joined(frame, key),
        noun=noun,
    )


@dataclass(frozen=True)
class HumanRatings:
    """People's ratings of the slots: each slot's mean, and what deleting one person changes.

    Long arrays (slot position, rating, rater), sorted by slot: with a crowd of raters a
    slots x raters matrix grows as the square of the study's size.
    """

    slot: np.ndarray  # (r,) slot position of each rating
    rating: np.ndarray  # (r,)
    rater: np.ndarray  # (r,)
    n_slots: int

    @classmethod
    def of(cls, human: pd.DataFrame, slots: pd.DataFrame) -> HumanRatings:
        """One rating per (slot, rater), the first non-missing one, on the slots of ``slots``."""
        rated = human.dropna(subset=["rating"]).drop_duplicates([*SLOT, "rater"], keep="first")
        position = pd.Series(
            np.arange(len(slots)), index=pd.MultiIndex.from_frame(slots[list(SLOT)])
        )
        slot_of = position.reindex(pd.MultiIndex.from_frame(rated[list(SLOT)])).to_numpy()
        found = ~np.isnan(slot_of)
        order = np.argsort(slot_of[found], kind="stable")
        return cls(
            slot_of[found].astype(np.int64)[order],
            rated["rating"].to_numpy(dtype=np.float64)[found][order],
            rated["rater"].to_numpy()[found][order],
            len(slots),
        )

    @property
    def people(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.rater.tolist())))

    def sums(self) -> tuple[np.ndarray, np.ndarray]:
        """Per slot: the number of people's ratings and their sum."""
        n = np.bincount(self.slot, minlength=self.n_slots)
        total = np.bincount(self.slot, weights=self.rating, minlength=self.n_slots)
        return n, total

    def without(self, person: str) -> tuple[np.ndarray, np.ndarray]:
        """(slots ``person`` rated, their mean rating without ``person``: NaN if no one else)."""
        n, total = self.sums()
        mine = self.rater == person
        rows, own = self.slot[mine], self.rating[mine]
        with np.errstate(invalid="ignore", divide="ignore"):
            rest = np.where(n[rows] > 1, (total[rows] - own) / (n[rows] - 1), np.nan)
        return rows, rest


# --------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------


def _score_responses(slot_means: pd.DataFrame) -> pd.DataFrame:
    """Per response: the mean over its attributes of each attribute's mean rating."""
    return slot_means.groupby(list(RESPONSE), sort=True)["rating"].mean().reset_index()


def _response_scores(ratings: pd.DataFrame) -> pd.DataFrame:
    """Per response: the mean over its attributes of each attribute's mean rating."""
    slot_mean = ratings.groupby(list(SLOT), sort=True)["rating"].mean().reset_index()
    return _score_responses(slot_mean)


def _response_deletions(human: pd.DataFrame, resp: pd.DataFrame, columns: Any) -> Deletions:
    """What deleting each person's ratings of each response changes in the response columns.

    ``columns(score, rows)`` gives the response-level columns of the responses ``rows`` of
    ``resp`` from their human score (NaN: people rated it no longer, so it leaves every
    column). Deleting a person's ratings of a response recomputes its score from the other
    people's ratings of it.
    """
    everything = np.arange(len(resp))
    names = list(columns(resp["rating"].to_numpy(dtype=np.float64), everything))
    index = pd.MultiIndex.from_frame(resp[list(RESPONSE)])
    who, rows, changes = [], [], []
    for person in sorted(human["rater"].unique()):
        touched = human.loc[human["rater"] == person, list(RESPONSE)].drop_duplicates()
        at = index.get_indexer(pd.MultiIndex.from_frame(touched))
        at = at[at >= 0]
        rest = human[human["rater"] != person].merge(touched, on=list(RESPONSE))
        score = np.full(at.size, np.nan)
        if len(rest):
            rescored = _response_scores(rest)
            where = pd.Index(index[at]).get_indexer(
                pd.MultiIndex.from_frame(rescored[list(RESPONSE)])
            )
            score[where] = rescored["rating"].to_numpy(dtype=np.float64)
        new = columns(score, at)
        old = columns(resp["rating"].to_numpy(dtype=np.float64)[at], at)
        who.append(np.full(at.size, person, dtype=object))
        rows.append(at)
        changes.append(np.column_stack([new[k] - old[k] for k in names]))
    return Deletions(np.concatenate(who), np.concatenate(rows), np.vstack(changes))


def no_better_share(
    human: pd.DataFrame, round_name: str, settings: StatsSettings
) -> list[Statistic]:
    """Share of personalized responses whose mean human rating is <= 3 (no better)."""
    if human.empty:
        return []
    resp = _response_scores(human)

    def columns(score: np.ndarray, rows: np.ndarray | None = None) -> dict[str, np.ndarray]:
        rated = np.isfinite(score)
        return {
            "nb": (rated & (score <= NO_BETTER_AT_MOST)).astype(np.float64),
            "worse": (rated & (score < NO_BETTER_AT_MOST)).astype(np.float64),
            "equal": (rated & (score == NO_BETTER_AT_MOST)).astype(np.float64),
            "n": rated * 1.0,
        }

    cols = columns(resp["rating"].to_numpy(dtype=np.float64))
    people = plan(settings, PEOPLE, _units(resp, RESPONSE, "responses", human["rater"].unique()))
    deletions = _response_deletions(human, resp, columns) if people.annotators else None
    tb = totals(people, cols, len(resp), deletions=deletions)
    return [
        Statistic(
            key="stage3.no_better_share",
            estimate=tb.stat(lambda g: ratio(g("nb"), g("n"))),
            fmt=".1%",
            what=(
                f"share of the {len(resp)} rated personalized responses that the "
                f"{settings.people} rate no better than the generic one: a response's score is "
                "the mean over its attributes of the attribute's mean rating by the "
                f"{settings.people}, and it is no better when "
                f"the score is <= {NO_BETTER_AT_MOST:g} (3 = no difference; {round_name} "
                "round)"
            ),
            code=f"{MODULE}:no_better_share",
            n=len(resp),
            extra={
                "round": round_name,
                "rule": "mean human rating over the response's attributes <= 3",
                "no_better": int(cols["nb"].sum()),
            },
            units=tb.units_with("n"),
            unit="responses",
        )
    ] + [
        Statistic(
            key=f"stage3.{name}_share",
            estimate=tb.stat(lambda g, name=name: ratio(g(name), g("n"))),
            fmt=".1%",
            what=(
                f"share of the {len(resp)} rated personalized responses that people rate {words} "
                "the generic one: a response's score is the mean over its attributes of the "
                f"attribute's mean human rating, {rule} ({round_name} round; stage3.no_better_"
                "share is the worse and the equal share together, so the tie rule moves the "
                "no-better share by the equal share)"
            ),
            code=f"{MODULE}:no_better_share",
            n=len(resp),
            extra={"round": round_name, name: int(cols[name].sum())},
            units=tb.units_with("n"),
            unit="responses",
        )
        for name, words, rule in (
            ("worse", "worse than", f"worse when the score is below {NO_BETTER_AT_MOST:g}"),
            ("equal", "no different from", f"no different when it is {NO_BETTER_AT_MOST:g}"),
        )
    ]


def better_shares(df: pd.DataFrame, round_name: str, settings: StatsSettings) -> list[Statistic]:
    """People's and each judge's share of personalized responses rated better than generic.

    The rule is :func:`no_better_share`'s, turned around (better = score above 3), applied to
    the human ratings and to each judge's. The responses are those of :func:`no_better_share`,
    so both draw the same resamples; a judge is scored on the responses people rated that it
    rated too, and its difference to people is paired on them.
    """
    human = df[df["rater_kind"] == HUMAN]
    if human.empty:
        return []
    resp = _response_scores(human)
    judges = sorted(df.loc[df["rater_kind"] == MODEL, "rater"].unique())
    judged: dict[str, np.ndarray] = {}
    for judge in judges:
        scores = _response_scores(df[df["rater"] == judge])
        judged[judge] = (
            resp[list(RESPONSE)].merge(scores, on=list(RESPONSE), how="left")["rating"].to_numpy()
        )

    def columns(score: np.ndarray, rows: np.ndarray | None = None) -> dict[str, np.ndarray]:
        rated = np.isfinite(score)
        better = (rated & (score > NO_BETTER_AT_MOST)).astype(np.float64)
        cols = {"hb": better, "n": rated * 1.0}
        for judge, all_rows in judged.items():
            j = all_rows if rows is None else all_rows[rows]
            has = rated & np.isfinite(j)
            cols[f"jn|{judge}"] = has.astype(np.float64)
            cols[f"jb|{judge}"] = (has & (j > NO_BETTER_AT_MOST)).astype(np.float64)
            cols[f"hb|{judge}"] = better * has
        return cols

    cols = columns(resp["rating"].to_numpy(dtype=np.float64))
    units = _units(resp, RESPONSE, "responses", human["rater"].unique())
    people = plan(settings, PEOPLE, units)
    models = plan(settings, MODELS, units)
    deletions = _response_deletions(human, resp, columns) if people.annotators else None
    tb = totals(people, cols, len(resp), deletions=deletions)
    code = f"{MODULE}:better_shares"
    rule = (
        "a response's score is the mean over its attributes of the attribute's mean rating, "
        f"and it is better when the score is above {NO_BETTER_AT_MOST:g} (3 = no difference)"
    )
    out: list[Statistic] = [
        Statistic(
            key="stage3.human_better_share",
            estimate=tb.stat(lambda g: ratio(g("hb"), g("n"))),
            fmt=".1%",
            what=(
                f"share of the {len(resp)} rated personalized responses that people rate better "
                f"than the generic one ({rule}; one minus stage3.no_better_share on the same "
                f"responses; {round_name} round)"
            ),
            code=code,
            n=len(resp),
            extra={"round": round_name, "better": int(cols["hb"].sum())},
            units=tb.units_with("n"),
            unit="responses",
        )
    ]
    for judge in judges:
        n = int(cols[f"jn|{judge}"].sum())
        if n == 0:
            continue
        part = key_part(judge)
        extra = settings.with_caveat(judge, {"round": round_name, "judge": judge})
        out.append(
            Statistic(
                key=f"stage3.judge_better_share.{part}",
                estimate=tb.stat(lambda g, j=judge: ratio(g(f"jb|{j}"), g(f"jn|{j}"))).under(
                    models
                ),
                fmt=".1%",
                what=(
                    f"share of the {n} personalized responses people rated that judge {judge} "
                    f"rates better than the generic one ({rule}, over the judge's ratings; "
                    f"{round_name} round)"
                ),
                code=code,
                n=n,
                extra={**extra, "better": int(cols[f"jb|{judge}"].sum())},
                units=tb.units_with(f"jn|{judge}"),
            )
        )
        out.append(
            Statistic(
                key=f"stage3.judge_better_share_minus_human.{part}",
                estimate=tb.stat(
                    lambda g, j=judge: (
                        ratio(g(f"jb|{j}"), g(f"jn|{j}")) - ratio(g(f"hb|{j}"), g(f"jn|{j}"))
                    )
                ),
                fmt=".1%",
                what=(
                    f"share of personalized responses judge {judge} rates better than generic "
                    f"minus the share people rate better, on the {n} responses both rated "
                    f"(paired: both shares on the same resamples; {rule}; {round_name} round)"
                ),
                code=code,
                n=n,
                extra=extra,
                test=NullTest(0.0, "judge_better_share_minus_human"),
            )
        )
    return out


def _slots(df: pd.DataFrame, mentions: pd.DataFrame | None) -> tuple[pd.DataFrame, list[str]]:
    """One row per rating slot: human mean and count, each judge's rating, mention flag."""
    human = df[df["rater_kind"] == HUMAN]
    judges = sorted(df.loc[df["rater_kind"] == MODEL, "rater"].unique())
    slots = df.loc[:, list(SLOT)].drop_duplicates().sort_values(list(SLOT)).reset_index(drop=True)
    hs = human.groupby(list(SLOT))["rating"].agg(["mean", "size"])
    slots = slots.merge(
        hs.rename(columns={"mean": "human", "size": "n_human"}).reset_index(),
        on=list(SLOT),
        how="left",
    )
    if judges:
        jw = df[df["rater_kind"] == MODEL].pivot_table(
            index=list(SLOT), columns="rater", values="rating", aggfunc="first"
        )
        slots = slots.merge(jw.add_prefix("judge|").reset_index(), on=list(SLOT), how="left")
    if mentions is not None:
        slots = slots.merge(mentions, on=list(SLOT), how="left", validate="one_to_one")
        slots[MENTION_FLAG] = slots[MENTION_FLAG].map({True: 1.0, False: 0.0}).astype(float)
    return slots, judges


@dataclass(frozen=True)
class SlotTotals:
    """The slots' resampled totals under the people design, and the models' design."""

    tb: DesignTotals
    models: Plan
    settings: StatsSettings

    def stat(self, fn: Any, people: bool) -> Resamples:
        res = self.tb.stat(fn)
        return res if people else res.under(self.models)


def slot_totals(
    slots: pd.DataFrame, judges: list[str], hr: HumanRatings, settings: StatsSettings
) -> SlotTotals:
    """Resampled totals of every per-slot column the rating statistics need.

    Deleting a person recomputes the human mean of the slots it rated from the other
    people's ratings (a slot it alone rated leaves every human column).
    """
    gens = sorted(slots["generator"].unique())
    judged = {j: slots[f"judge|{j}"].to_numpy(dtype=np.float64) for j in judges}
    mention = (
        slots[MENTION_FLAG].to_numpy(dtype=np.float64)
        if MENTION_FLAG in slots
        else np.full(len(slots), np.nan)
    )
    generator = slots["generator"].to_numpy()

    def columns(h: np.ndarray, rows: np.ndarray | None = None) -> dict[str, np.ndarray]:
        at = slice(None) if rows is None else rows
        has_h = np.isfinite(h)
        cols: dict[str, np.ndarray] = {"hsum": np.where(has_h, h, 0.0), "hn": has_h * 1.0}
        for gen in gens:
            g = generator[at] == gen
            cols[f"hsum|{gen}"] = cols["hsum"] * g
            cols[f"hn|{gen}"] = cols["hn"] * g
        raters = {"human": h} | {j: x[at] for j, x in judged.items()}
        for name, x in raters.items():
            has = np.isfinite(x)
            if name != "human":
                cols[f"jsum|{name}"] = np.where(has, x, 0.0)
                cols[f"jn|{name}"] = has * 1.0
                both = has & has_h
                cols[f"diff|{name}"] = np.where(both, x - np.where(has_h, h, 0.0), 0.0)
                cols[f"both|{name}"] = both * 1.0
            for flag, label in ((1.0, "m"), (0.0, "u")):
                sel = has & (mention[at] == flag)
                cols[f"{label}sum|{name}"] = np.where(sel, x, 0.0)
                cols[f"{label}n|{name}"] = sel * 1.0
                for gen in gens:  # within each generator, for the stratified mention effect
                    g = generator[at] == gen
                    cols[f"{label}sum|{name}|{gen}"] = cols[f"{label}sum|{name}"] * g
                    cols[f"{label}n|{name}|{gen}"] = cols[f"{label}n|{name}"] * g
        return cols

    h = slots["human"].to_numpy(dtype=np.float64)
    cols = columns(h)
    units = _units(slots, SLOT, "rating slots", hr.people)
    people = plan(settings, PEOPLE, units)
    deletions = None
    if people.annotators:
        who, at, changes = [], [], []
        for person in people.annotators:
            rows, rest = hr.without(person)
            new, old = columns(rest, rows), columns(h[rows], rows)
            who.append(np.full(rows.size, person, dtype=object))
            at.append(rows)
            changes.append(np.column_stack([new[k] - old[k] for k in cols]))
        deletions = Deletions(np.concatenate(who), np.concatenate(at), np.vstack(changes))
    tb = totals(people, cols, len(slots), deletions=deletions)
    return SlotTotals(tb, plan(settings, MODELS, units), settings)


def mean_ratings(
    st: SlotTotals, slots: pd.DataFrame, judges: list[str], round_name: str
) -> list[Statistic]:
    """Mean human rating per generator and overall; mean rating of each judge."""
    code = f"{MODULE}:mean_ratings"
    tb, settings = st.tb, st.settings
    out: list[Statistic] = []
    gens = sorted(slots["generator"].unique())
    for name, label, key in [
        (f"|{g}", f"responses of generator {g}", key_part(g)) for g in gens
    ] + [("", "all generators", "human")]:
        who = name[1:]  # the generator ("" for all)
        n = int(round(tb.point_of(f"hn{name}")))
        if n == 0:
            continue
        out.append(
            Statistic(
                key=f"stage3.mean_rating.{key}",
                estimate=st.stat(
                    lambda g, name=name: ratio(g(f"hsum{name}"), g(f"hn{name}")), people=True
                ),
                fmt=".2f",
                what=(
                    f"mean human rating (1 = personalized much worse, 3 = no difference, 5 = "
                    f"much better) over {n} rating slots of {label}; a slot's rating is the "
                    f"mean of its human raters ({round_name} round)"
                ),
                code=code,
                n=n,
                extra=settings.with_caveat(who, {"round": round_name}),
            )
        )
    for j in judges:
        n = int(round(tb.point_of(f"jn|{j}")))
        if n == 0:
            continue
        out.append(
            Statistic(
                key=f"stage3.judge_mean_rating.{key_part(j)}",
                estimate=st.stat(lambda g, j=j: ratio(g(f"jsum|{j}"), g(f"jn|{j}")), people=False),
                fmt=".2f",
                what=(
                    f"mean rating judge {j} gives on the same 1-5 scale over the {n} rating "
                    f"slots it rated ({round_name} round)"
                ),
                code=code,
                n=n,
                extra=settings.with_caveat(j, {"round": round_name}),
            )
        )
    return out


def judge_minus_human(
    st: SlotTotals, slots: pd.DataFrame, judges: list[str], round_name: str
) -> list[Statistic]:
    """Judge minus human rating on shared slots; test of 0, adjusted across judges.

    The test uses the difference's own design (users x prompts and the annotators): the
    per-slot Wilcoxon test it replaces treated a few hundred slots of a few dozen users as
    independent.
    """
    h = slots["human"].to_numpy(dtype=np.float64)
    out: list[Statistic] = []
    for j in judges:
        x = slots[f"judge|{j}"].to_numpy(dtype=np.float64)
        both = np.isfinite(x) & np.isfinite(h)
        if not both.any():
            continue
        d = x[both] - h[both]
        out.append(
            Statistic(
                key=f"stage3.judge_minus_human.{key_part(j)}",
                estimate=st.stat(lambda g, j=j: ratio(g(f"diff|{j}"), g(f"both|{j}")), people=True),
                fmt="+.2f",
                what=(
                    f"mean of judge {j}'s rating minus the human rating over the {d.size} "
                    f"rating slots both rate ({round_name} round)"
                ),
                code=f"{MODULE}:judge_minus_human",
                n=int(d.size),
                extra=st.settings.with_caveat(
                    j,
                    {
                        "round": round_name,
                        "median_difference": float(np.median(d)),
                        "share_judge_higher": float(np.mean(d > 0)),
                    },
                ),
                test=NullTest(0.0, "judge_minus_human"),
            )
        )
    return out


def mention_effects(
    st: SlotTotals, judges: list[str], round_name: str
) -> tuple[list[Statistic], dict[str, float]]:
    """Mean rating with an explicit mention minus without, for people and each judge."""
    tb, settings = st.tb, st.settings
    out: list[Statistic] = []
    deltas: dict[str, float] = {}
    if "mn|human" not in tb:
        return [], {}
    for name in ["human", *judges]:
        nm, nu = int(round(tb.point_of(f"mn|{name}"))), int(round(tb.point_of(f"un|{name}")))
        if nm == 0 or nu == 0:
            continue
        res = st.stat(
            lambda g, name=name: (
                ratio(g(f"msum|{name}"), g(f"mn|{name}"))
                - ratio(g(f"usum|{name}"), g(f"un|{name}"))
            ),
            people=name == "human",
        )
        if not np.isfinite(res.estimate):
            continue
        who = "human rating (mean of the slot's raters)" if name == "human" else f"judge {name}"
        out.append(
            Statistic(
                key=f"stage3.mention_delta.{key_part(name)}",
                estimate=res,
                fmt="+.2f",
                what=(
                    f"mean {who} of the {nm} slots whose attribute the personalized response "
                    f"mentions explicitly minus that of the {nu} slots without a mention "
                    f"({round_name} round)"
                ),
                code=f"{MODULE}:mention_effects",
                n=nm + nu,
                extra=settings.with_caveat(
                    name, {"round": round_name, "n_mentioned": nm, "n_not_mentioned": nu}
                ),
                test=NullTest(0.0, "mention_delta"),
                unit="slots",
            )
        )
        if name != "human":
            deltas[name] = res.value
    out += mention_effects_within_generator(st, judges, round_name)
    return out, deltas


def mention_effects_within_generator(
    st: SlotTotals, judges: list[str], round_name: str
) -> list[Statistic]:
    """The mention effect compared within each generator, pooled over generators.

    Generators differ both in how often they mention attributes and in how good their
    responses are, so the pooled mention effect can reflect which generator wrote a
    response rather than the mention (:mod:`analysis.stats.stratified`). Within each
    generator, slots with a mention are compared with slots without; the differences are
    pooled with Cochran-Mantel-Haenszel weights ``n_m n_u / (n_m + n_u)`` (a generator whose
    slots all, or never, mention gets weight 0). Same totals and design as the pooled effect;
    tests of 0 in family ``mention_delta_within_generator``.
    """
    tb, settings = st.tb, st.settings
    gens = sorted({k.rsplit("|", 1)[1] for k in tb.columns if k.startswith("mn|human|")})
    out: list[Statistic] = []
    if not gens:
        return out
    for name in ["human", *judges]:
        counts = {
            gen: (tb.point_of(f"mn|{name}|{gen}"), tb.point_of(f"un|{name}|{gen}")) for gen in gens
        }
        both = [gen for gen, (nm, nu) in counts.items() if nm > 0 and nu > 0]
        if not both:
            continue

        def pooled(g: Any, name: str = name) -> np.ndarray:
            def stack(part: str) -> np.ndarray:
                return np.stack([np.asarray(g(f"{part}|{name}|{gen}")) for gen in gens], axis=-1)

            return stratified_difference(stack("msum"), stack("mn"), stack("usum"), stack("un"))

        res = st.stat(pooled, people=name == "human")
        if not np.isfinite(res.estimate):
            continue
        weights = stratum_weights(
            np.array([counts[gen][0] for gen in gens]), np.array([counts[gen][1] for gen in gens])
        )
        who = "human rating (mean of the slot's raters)" if name == "human" else f"judge {name}"
        n = int(round(sum(nm + nu for nm, nu in counts.values())))
        out.append(
            Statistic(
                key=f"stage3.mention_delta_within_generator.{key_part(name)}",
                estimate=res,
                fmt="+.2f",
                what=(
                    f"mean {who} of slots whose attribute the personalized response mentions "
                    "explicitly minus that of slots without a mention, compared within each "
                    f"generator and pooled over the {len(both)} generators with both kinds of "
                    "slot (Cochran-Mantel-Haenszel weights n_m n_u / (n_m + n_u); "
                    f"{round_name} round)"
                ),
                code=f"{MODULE}:mention_effects_within_generator",
                n=n,
                extra=settings.with_caveat(
                    name,
                    {
                        "round": round_name,
                        "weights": {gen: float(w) for gen, w in zip(gens, weights, strict=True)},
                    },
                ),
                test=NullTest(0.0, "mention_delta_within_generator"),
                unit="slots",
            )
        )
    return out


def mention_rates(
    mentions: pd.DataFrame, settings: StatsSettings
) -> tuple[list[Statistic], dict[str, float]]:
    """Share of each generator's personalized rating slots that mention the attribute."""
    gens = sorted(mentions["generator"].unique())
    flag = mentions[MENTION_FLAG].to_numpy(dtype=np.float64)
    cols: dict[str, np.ndarray] = {}
    for gen in gens:
        g = (mentions["generator"] == gen).to_numpy()
        cols[f"m|{gen}"] = flag * g
        cols[f"n|{gen}"] = g * 1.0
    models = plan(settings, MODELS, _units(mentions, SLOT, "rating slots"))
    tb = totals(models, cols, len(mentions))
    out: list[Statistic] = []
    rates: dict[str, float] = {}
    for gen in gens:
        n = int(round(tb.point_of(f"n|{gen}")))
        res = tb.stat(lambda g, gen=gen: ratio(g(f"m|{gen}"), g(f"n|{gen}")))
        if not np.isfinite(res.estimate):
            continue
        out.append(
            Statistic(
                key=f"stage3.mention_rate.{key_part(gen)}",
                estimate=res,
                fmt=".1%",
                what=(
                    f"share of generator {gen}'s {n} personalized-response attribute slots in "
                    "which the response mentions the attribute explicitly"
                ),
                code=f"{MODULE}:mention_rates",
                n=n,
                extra=settings.with_caveat(gen, {"mentioned": int(round(tb.point_of(f"m|{gen}")))}),
                units=tb.units_with(f"n|{gen}"),
                unit="slots",
            )
        )
        rates[gen] = res.value
    return out, rates


def mention_habit_vs_bias(
    rates: Mapping[str, float], deltas: Mapping[str, float], settings: StatsSettings
) -> list[Statistic]:
    """Spearman's rho, across models, of mention rate as generator and mention delta as judge.

    Its units are a handful of models (design ``across_models``: the one statement about
    language models in general), so: with fewer than :data:`EXACT_TEST_BELOW` models the
    p-value is the exact permutation p over all pairings (the t approximation is not valid
    there) and the Fisher-z interval is labelled approximate; with at most
    :data:`DESCRIPTIVE_AT_MOST` models the correlation is descriptive (no p-value). A claim on
    this record is judged on ``extra.p_value``.
    """
    both = sorted(set(rates) & set(deltas))
    models = [m for m in both if settings.in_aggregates(m)]
    left_out = [m for m in both if not settings.in_aggregates(m)]
    if len(models) < MIN_MODELS_FOR_CORRELATION:
        return []
    x = np.array([rates[m] for m in models])
    y = np.array([deltas[m] for m in models])
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # |rho| = 1: interval undefined
        ci = correlation_with_ci(x, y, "spearman", settings.ci_level)
    n = len(models)
    text = f"{settings.ci_level:.0%} CI: Fisher z interval (Bonett-Wright standard error)"
    test: dict[str, Any]
    p_value: float | None = None
    if n <= DESCRIPTIVE_AT_MOST:
        text = f"{text}, approximate at n = {n}"
        note = f"; descriptive only: with {n} models no test is reported"
        test = {"descriptive": True}
    elif n < EXACT_TEST_BELOW:
        text = f"{text}, approximate at n = {n}"
        p_value = exact_permutation_p(x, y, "spearman")
        pairings = math.factorial(n)
        note = (
            f"; test of 0: exact two-sided permutation p over all {pairings} pairings of the "
            f"{n} models (scipy permutation_test), on which any claim is judged; the "
            f"approximate interval and the exact p {DISAGREEMENT_EXPLAINED}"
        )
        test = {
            "test": f"exact permutation (all {pairings} pairings)",
            "p_value_t_approximation": ci.p_value,
            "statistic": "rho",
            "attainable": exact_permutation_attainable(x, y, "spearman"),
        }
    else:
        p_value = ci.p_value
        note = "; test of 0: t approximation of Spearman's rho (scipy spearmanr)"
        test = {"test": "t approximation (spearmanr)"}
    return [
        Statistic(
            key="stage3.mention_habit_vs_bias.spearman",
            estimate=Interval(ci.value, ci.low, ci.high, ci.level, ci.method, text, n, p_value),
            fmt=".2f",
            what=(
                f"Spearman's rho across {n} models of how often each mentions "
                "attributes explicitly as a generator (stage3.mention_rate) and how much "
                "more it rates explicit mentions as a judge (stage3.mention_delta)"
                + (
                    f"; left out, having a caveat in stages.caveats: {', '.join(left_out)}"
                    if left_out
                    else ""
                )
                + note
            ),
            code=f"{MODULE}:mention_habit_vs_bias",
            n=n,
            extra={
                "models": models,
                "excluded_models": left_out,
                **test,
                "mention_rate": {m: rates[m] for m in models},
                "mention_delta": {m: deltas[m] for m in models},
            },
            test=None if p_value is None else NullTest(0.0, "mention_habit_vs_bias"),
            design=design_info(settings, ACROSS_MODELS, {"models": n}),
            unit="models",
        )
    ]


def rank_agreement(
    df: pd.DataFrame,
    slots: pd.DataFrame,
    judges: list[str],
    round_name: str,
    settings: StatsSettings,
    hr: HumanRatings,
) -> list[Statistic]:
    """Spearman of each judge with people, and the leave-one-human-out human ceiling.

    Deleting a person recomputes the human rating of the slots it rated (a judge's rho), or
    leaves that person's own rho out of the ceiling's mean over people (the others' means
    keep its ratings).
    """
    units = _units(slots, SLOT, "rating slots", hr.people)
    people = plan(settings, PEOPLE, units)
    reference = plan(settings, REFERENCE, units)
    h = slots["human"].to_numpy(dtype=np.float64)
    out: list[Statistic] = []
    for j in judges:
        x = slots[f"judge|{j}"].to_numpy(dtype=np.float64)
        rows = np.flatnonzero(np.isfinite(x) & np.isfinite(h))
        if rows.size < 3:
            continue
        out.append(
            Statistic(
                key=f"stage3.judge_spearman_vs_human.{key_part(j)}",
                estimate=spearman(reference, x[rows], h[rows], rows, len(slots)),
                fmt=".2f",
                what=(
                    f"Spearman's rho of judge {j}'s ratings and the human ratings (mean of the "
                    f"slot's raters) over {rows.size} rating slots ({round_name} round)"
                ),
                code=f"{MODULE}:rank_agreement",
                n=int(rows.size),
                extra=settings.with_caveat(j, {"round": round_name}),
                limits=AGREEMENT,
            )
        )
    persons = sorted(df.loc[df["rater_kind"] == HUMAN, "rater"].unique())
    if len(persons) >= 2:
        n_slot, sum_slot = hr.sums()
        per: dict[str, Resamples] = {}
        levels: dict[str, np.ndarray] = {}
        n_pairs = 0
        for person in persons:
            mine = hr.rater == person
            own_slots, own = hr.slot[mine], hr.rating[mine]
            keep = n_slot[own_slots] >= 2  # at least one other human rated the slot
            rows, own = own_slots[keep], own[keep]
            if rows.size < 3:
                continue
            # the others' mean, leaving this person out: (slot sum - own) / (slot count - 1)
            rest = (sum_slot[rows] - own) / (n_slot[rows] - 1)
            res = spearman(people, own, rest, rows, len(slots), jackknife=True)
            if np.isfinite(res.estimate):
                per[person] = res
                levels[person] = rows
                n_pairs += int(rows.size)
        if per:
            res = _mean_over_people(per, levels, people)
            out.append(
                Statistic(
                    key="stage3.ceiling.spearman_human_vs_rest",
                    estimate=res,
                    fmt=".2f",
                    what=(
                        f"human ceiling: Spearman's rho of each of {len(per)} human raters with "
                        "the mean rating of the other humans on the slots they share, averaged "
                        f"over humans ({n_pairs} human-slot pairs, {round_name} round)"
                    ),
                    code=f"{MODULE}:rank_agreement",
                    n=n_pairs,
                    extra={
                        "round": round_name,
                        "per_rater": {p: float(r.estimate) for p, r in per.items()},
                    },
                    limits=AGREEMENT,
                )
            )
    return out


def _mean_over_people(
    per: Mapping[str, Resamples], rows: Mapping[str, np.ndarray], people: Plan
) -> Resamples:
    """The mean over people of each person's statistic, with the annotator clusterings.

    Deleting a person drops its term; deleting a person's part of a user (prompt, cell)
    replaces its term with its own leave-that-level-out value (its statistic's factor
    jackknife). The other people's terms keep the person's ratings in their references.
    """
    mean = mean_of(list(per.values()))
    if not people.annotators:
        return mean
    names = sorted(per)
    est = np.array([per[p].value for p in names])
    extra = []
    for clustering in annotator_clusterings(people):
        values, deleted = [], []
        for i, person in enumerate(names):
            if not clustering.factors:
                values.append(np.nanmean(np.delete(est, i)) if len(names) > 1 else np.nan)
                deleted.append(level_name(person))
                continue
            name = "cells" if len(clustering.factors) == 2 else clustering.factors[0]
            f = next(f for f in people.factors if f.name == name)
            part = next(p for p in per[person].parts if p.cluster == f.noun)
            assert part.jackknife is not None and f.labels is not None
            codes, uniques = pd.factorize(pd.Series(f.labels, dtype=object), sort=True)
            for level in np.unique(codes[rows[person]]):
                values.append(
                    np.nanmean(np.where(np.arange(len(names)) == i, part.jackknife[level], est))
                )
                deleted.append(level_name(person, uniques[level]))
        extra.append(
            jackknife_part(
                mean.estimate,
                np.asarray(values),
                clustering,
                [p.weights_digest for p in mean.parts],
                levels=deleted,
            )
        )
    return Resamples(mean.estimate, (*mean.parts, *extra), people.info)


# --------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------


def stage3_records(
    ratings: pd.DataFrame,
    settings: StatsSettings,
    *,
    mentions: pd.DataFrame | None = None,
    responses: pd.DataFrame | None = None,
) -> list[Record]:
    """Every stage-3 record the data support (mention keys need ``mentions``)."""
    flags = mention_units(mentions, responses)
    statistics: list[Statistic] = []
    rates: dict[str, float] = {}
    if flags is not None:
        found, rates = mention_rates(flags, settings)
        statistics += found
    prepared = _ratings(ratings)
    if prepared is None:
        return make_records(statistics, settings)
    df, round_name = prepared
    human = df[df["rater_kind"] == HUMAN]
    statistics += no_better_share(human, round_name, settings)
    statistics += better_shares(df, round_name, settings)
    slots, judges = _slots(df, flags)
    hr = HumanRatings.of(human, slots)
    st = slot_totals(slots, judges, hr, settings)
    statistics += mean_ratings(st, slots, judges, round_name)
    statistics += judge_minus_human(st, slots, judges, round_name)
    found, deltas = mention_effects(st, judges, round_name)
    statistics += found
    statistics += mention_habit_vs_bias(rates, deltas, settings)
    statistics += rank_agreement(df, slots, judges, round_name, settings, hr)
    return make_records(statistics, settings)
