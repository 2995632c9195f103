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
Intervals: cluster bootstrap (users, prompts, or slots / responses for ``item``), the same
resamples for every statistic of a family; rank correlations are bootstrapped vectorized
(:meth:`analysis.stats.study_common.ClusterResamples.spearman`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from analysis.data.vocabulary import HUMAN, JUDGE_KINDS, MODEL, PERSONALIZED
from analysis.provenance import Record
from analysis.stats.bootstrap import BootstrapResult
from analysis.stats.intervals import (
    correlation_with_ci,
    exact_permutation_attainable,
    exact_permutation_p,
)
from analysis.stats.study_common import (
    DISAGREEMENT_EXPLAINED,
    ClusterResamples,
    StatsSettings,
    StudyDataError,
    TotalsBootstrap,
    adjust_pvalues,
    boot_interval,
    bootstrap_totals,
    cluster_column,
    collect,
    correction_name,
    key_part,
    make_record,
    mean_of_results,
    ratio,
    require_columns,
    require_unique,
    resample_test,
    resample_test_phrase,
    show,
    study_round,
    unit_noun,
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


def _cluster_of(frame: pd.DataFrame, cluster: str | None, fallback: tuple[str, ...]) -> np.ndarray:
    """Cluster label per row: the configured column, or the row's own unit for ``item``."""
    if cluster is not None:
        return frame[cluster].astype(str).to_numpy(dtype=object)
    return frame.loc[:, list(fallback)].astype(str).agg("|".join, axis=1).to_numpy(dtype=object)


# --------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------


def no_better_share(
    human: pd.DataFrame, round_name: str, settings: StatsSettings, cluster: str | None
) -> list[Record]:
    """Share of personalized responses whose mean human rating is <= 3 (no better)."""
    if human.empty:
        return []
    slot_mean = human.groupby(list(SLOT), sort=True)["rating"].mean().reset_index()
    resp = slot_mean.groupby(list(RESPONSE), sort=True)["rating"].mean().reset_index()
    no_better = (resp["rating"] <= NO_BETTER_AT_MOST).to_numpy(dtype=np.float64)
    unit = unit_noun(cluster, "responses")
    tb = bootstrap_totals(
        {"nb": no_better, "n": np.ones(len(resp))},
        _cluster_of(resp, cluster, RESPONSE),
        settings,
        unit,
    )
    res = tb.stat(lambda g: ratio(g("nb"), g("n")))
    return collect(
        [
            make_record(
                "stage3.no_better_share",
                boot_interval(res, settings, unit),
                fmt=".1%",
                method=(
                    f"share of the {len(resp)} rated personalized responses that people rate no "
                    "better than the generic one: a response's score is the mean over its "
                    "attributes of the attribute's mean human rating, and it is no better when "
                    f"the score is <= {NO_BETTER_AT_MOST:g} (3 = no difference; {round_name} "
                    "round)"
                ),
                code=f"{MODULE}:no_better_share",
                n=len(resp),
                unit="responses",
                seed=settings.seed,
                extra={
                    "round": round_name,
                    "rule": "mean human rating over the response's attributes <= 3",
                    "no_better": int(no_better.sum()),
                },
            )
        ]
    )


def _response_scores(ratings: pd.DataFrame) -> pd.DataFrame:
    """Per response: the mean over its attributes of each attribute's mean rating."""
    slot_mean = ratings.groupby(list(SLOT), sort=True)["rating"].mean().reset_index()
    return slot_mean.groupby(list(RESPONSE), sort=True)["rating"].mean().reset_index()


def better_shares(
    df: pd.DataFrame, round_name: str, settings: StatsSettings, cluster: str | None
) -> list[Record]:
    """People's and each judge's share of personalized responses rated better than generic.

    The rule is :func:`no_better_share`'s, turned around (better = score above 3), applied to
    the human ratings and to each judge's. The responses and their clusters are those of
    :func:`no_better_share`, so both draw the same resamples; a judge is scored on the
    responses people rated that it rated too, and its difference to people is paired on them.
    """
    human = df[df["rater_kind"] == HUMAN]
    if human.empty:
        return []
    resp = _response_scores(human)
    human_better = (resp["rating"] > NO_BETTER_AT_MOST).to_numpy(dtype=np.float64)
    cols: dict[str, np.ndarray] = {"hb": human_better, "n": np.ones(len(resp))}
    judges = sorted(df.loc[df["rater_kind"] == MODEL, "rater"].unique())
    for judge in judges:
        scores = _response_scores(df[df["rater"] == judge])
        score = resp[list(RESPONSE)].merge(scores, on=list(RESPONSE), how="left")["rating"]
        rated = score.notna().to_numpy()
        cols[f"jn|{judge}"] = rated.astype(np.float64)
        cols[f"jb|{judge}"] = (rated & (score > NO_BETTER_AT_MOST).to_numpy()).astype(np.float64)
        cols[f"hb|{judge}"] = human_better * rated
    unit = unit_noun(cluster, "responses")
    tb = bootstrap_totals(cols, _cluster_of(resp, cluster, RESPONSE), settings, unit)
    code = f"{MODULE}:better_shares"
    rule = (
        "a response's score is the mean over its attributes of the attribute's mean rating, "
        f"and it is better when the score is above {NO_BETTER_AT_MOST:g} (3 = no difference)"
    )
    out: list[Record | None] = [
        make_record(
            "stage3.human_better_share",
            boot_interval(tb.stat(lambda g: ratio(g("hb"), g("n"))), settings, unit),
            fmt=".1%",
            method=(
                f"share of the {len(resp)} rated personalized responses that people rate better "
                f"than the generic one ({rule}; one minus stage3.no_better_share on the same "
                f"responses; {round_name} round)"
            ),
            code=code,
            n=len(resp),
            unit="responses",
            seed=settings.seed,
            extra={"round": round_name, "better": int(human_better.sum())},
        )
    ]
    for judge in judges:
        n = int(cols[f"jn|{judge}"].sum())
        if n == 0:
            continue
        part = key_part(judge)
        extra = settings.with_caveat(judge, {"round": round_name, "judge": judge})
        share = tb.stat(lambda g, j=judge: ratio(g(f"jb|{j}"), g(f"jn|{j}")))
        out.append(
            make_record(
                f"stage3.judge_better_share.{part}",
                boot_interval(share, settings, unit),
                fmt=".1%",
                method=(
                    f"share of the {n} personalized responses people rated that judge {judge} "
                    f"rates better than the generic one ({rule}, over the judge's ratings; "
                    f"{round_name} round)"
                ),
                code=code,
                n=n,
                seed=settings.seed,
                extra={**extra, "better": int(cols[f"jb|{judge}"].sum())},
            )
        )
        diff = tb.stat(
            lambda g, j=judge: ratio(g(f"jb|{j}"), g(f"jn|{j}")) - ratio(g(f"hb|{j}"), g(f"jn|{j}"))
        )
        out.append(
            make_record(
                f"stage3.judge_better_share_minus_human.{part}",
                boot_interval(diff, settings, unit),
                fmt=".1%",
                method=(
                    f"share of personalized responses judge {judge} rates better than generic "
                    f"minus the share people rate better, on the {n} responses both rated "
                    f"(paired: both shares on the same resamples; {rule}; {round_name} round); "
                    f"{resample_test_phrase(0.0, settings, unit)}"
                ),
                code=code,
                n=n,
                seed=settings.seed,
                extra={**extra, **resample_test(diff, 0.0)},
            )
        )
    return collect(out)


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


def slot_totals(
    slots: pd.DataFrame, judges: list[str], settings: StatsSettings, cluster: str | None
) -> TotalsBootstrap:
    """Resampled totals of every per-slot column the rating statistics need."""
    h = slots["human"].to_numpy(dtype=np.float64)
    has_h = np.isfinite(h)
    cols: dict[str, np.ndarray] = {"hsum": np.where(has_h, h, 0.0), "hn": has_h * 1.0}
    for gen in sorted(slots["generator"].unique()):
        g = (slots["generator"] == gen).to_numpy()
        cols[f"hsum|{gen}"] = cols["hsum"] * g
        cols[f"hn|{gen}"] = cols["hn"] * g
    mention = (
        slots[MENTION_FLAG].to_numpy(dtype=np.float64)
        if MENTION_FLAG in slots
        else np.full(len(slots), np.nan)
    )
    raters = {"human": h} | {j: slots[f"judge|{j}"].to_numpy(dtype=np.float64) for j in judges}
    for name, x in raters.items():
        has = np.isfinite(x)
        if name != "human":
            cols[f"jsum|{name}"] = np.where(has, x, 0.0)
            cols[f"jn|{name}"] = has * 1.0
            both = has & has_h
            cols[f"diff|{name}"] = np.where(both, x - np.where(has_h, h, 0.0), 0.0)
            cols[f"both|{name}"] = both * 1.0
        for flag, label in ((1.0, "m"), (0.0, "u")):
            sel = has & (mention == flag)
            cols[f"{label}sum|{name}"] = np.where(sel, x, 0.0)
            cols[f"{label}n|{name}"] = sel * 1.0
    unit = unit_noun(cluster, "rating slots")
    return bootstrap_totals(cols, _cluster_of(slots, cluster, SLOT), settings, unit)


def mean_ratings(
    tb: TotalsBootstrap,
    slots: pd.DataFrame,
    judges: list[str],
    round_name: str,
    settings: StatsSettings,
) -> list[Record]:
    """Mean human rating per generator and overall; mean rating of each judge."""
    code = f"{MODULE}:mean_ratings"
    out: list[Record | None] = []
    gens = sorted(slots["generator"].unique())
    for name, label, key in [
        (f"|{g}", f"responses of generator {g}", key_part(g)) for g in gens
    ] + [("", "all generators", "human")]:
        who = name[1:]  # the generator ("" for all)
        n = int(round(tb.point(f"hn{name}")))
        if n == 0:
            continue
        res = tb.stat(lambda g, name=name: ratio(g(f"hsum{name}"), g(f"hn{name}")))
        out.append(
            make_record(
                f"stage3.mean_rating.{key}",
                boot_interval(res, settings, tb.unit),
                fmt=".2f",
                method=(
                    f"mean human rating (1 = personalized much worse, 3 = no difference, 5 = "
                    f"much better) over {n} rating slots of {label}; a slot's rating is the "
                    f"mean of its human raters ({round_name} round)"
                ),
                code=code,
                n=n,
                seed=settings.seed,
                extra=settings.with_caveat(who, {"round": round_name}),
            )
        )
    for j in judges:
        n = int(round(tb.point(f"jn|{j}")))
        if n == 0:
            continue
        res = tb.stat(lambda g, j=j: ratio(g(f"jsum|{j}"), g(f"jn|{j}")))
        out.append(
            make_record(
                f"stage3.judge_mean_rating.{key_part(j)}",
                boot_interval(res, settings, tb.unit),
                fmt=".2f",
                method=(
                    f"mean rating judge {j} gives on the same 1-5 scale over the {n} rating "
                    f"slots it rated ({round_name} round)"
                ),
                code=code,
                n=n,
                seed=settings.seed,
                extra=settings.with_caveat(j, {"round": round_name}),
            )
        )
    return collect(out)


def judge_minus_human(
    tb: TotalsBootstrap,
    slots: pd.DataFrame,
    judges: list[str],
    round_name: str,
    settings: StatsSettings,
) -> list[Record]:
    """Judge minus human rating on shared slots; resample test of 0, Holm across judges.

    The test uses the difference's own cluster resamples (users): the per-slot Wilcoxon test
    it replaces treated a few hundred slots of a few dozen users as independent.
    """
    h = slots["human"].to_numpy(dtype=np.float64)
    diffs: dict[str, np.ndarray] = {}
    results: dict[str, BootstrapResult] = {}
    tests: dict[str, dict[str, Any]] = {}
    for j in judges:
        x = slots[f"judge|{j}"].to_numpy(dtype=np.float64)
        both = np.isfinite(x) & np.isfinite(h)
        if not both.any():
            continue
        diffs[j] = x[both] - h[both]
        results[j] = tb.stat(lambda g, j=j: ratio(g(f"diff|{j}"), g(f"both|{j}")))
        tests[j] = resample_test(results[j], 0.0)
    pvalues = {j: t["p_value"] for j, t in tests.items() if t}
    adjusted = adjust_pvalues(pvalues, settings)
    family = sorted(pvalues)
    out: list[Record | None] = []
    for j in sorted(diffs):
        d = diffs[j]
        out.append(
            make_record(
                f"stage3.judge_minus_human.{key_part(j)}",
                boot_interval(results[j], settings, tb.unit),
                fmt="+.2f",
                method=(
                    f"mean of judge {j}'s rating minus the human rating over the {d.size} "
                    f"rating slots both rate ({round_name} round); "
                    f"{resample_test_phrase(0.0, settings, tb.unit)}, "
                    f"{correction_name(settings)}-adjusted across the {len(family)} judges"
                ),
                code=f"{MODULE}:judge_minus_human",
                n=int(d.size),
                seed=settings.seed,
                extra=settings.with_caveat(
                    j,
                    {
                        "round": round_name,
                        **tests[j],
                        "p_adjusted": adjusted.get(j),
                        "correction": settings.multiple_comparisons,
                        "family": family,
                        "median_difference": float(np.median(d)),
                        "share_judge_higher": float(np.mean(d > 0)),
                    },
                ),
            )
        )
    return collect(out)


def mention_effects(
    tb: TotalsBootstrap, judges: list[str], round_name: str, settings: StatsSettings
) -> tuple[list[Record], dict[str, float]]:
    """Mean rating with an explicit mention minus without, for people and each judge."""
    out: list[Record | None] = []
    deltas: dict[str, float] = {}
    if "mn|human" not in tb.columns:
        return [], {}
    for name in ["human", *judges]:
        nm, nu = int(round(tb.point(f"mn|{name}"))), int(round(tb.point(f"un|{name}")))
        if nm == 0 or nu == 0:
            continue
        res = tb.stat(
            lambda g, name=name: (
                ratio(g(f"msum|{name}"), g(f"mn|{name}"))
                - ratio(g(f"usum|{name}"), g(f"un|{name}"))
            )
        )
        who = "human rating (mean of the slot's raters)" if name == "human" else f"judge {name}"
        rec = make_record(
            f"stage3.mention_delta.{key_part(name)}",
            boot_interval(res, settings, tb.unit),
            fmt="+.2f",
            method=(
                f"mean {who} of the {nm} slots whose attribute the personalized response "
                f"mentions explicitly minus that of the {nu} slots without a mention "
                f"({round_name} round); {resample_test_phrase(0.0, settings, tb.unit)}"
            ),
            code=f"{MODULE}:mention_effects",
            n=nm + nu,
            unit="slots",
            seed=settings.seed,
            extra=settings.with_caveat(
                name,
                {
                    "round": round_name,
                    "n_mentioned": nm,
                    "n_not_mentioned": nu,
                    **resample_test(res, 0.0),
                },
            ),
        )
        if rec is not None:
            out.append(rec)
            if name != "human":
                deltas[name] = rec.value
    return collect(out), deltas


def mention_rates(
    mentions: pd.DataFrame, settings: StatsSettings, cluster: str | None
) -> tuple[list[Record], dict[str, float]]:
    """Share of each generator's personalized rating slots that mention the attribute."""
    gens = sorted(mentions["generator"].unique())
    flag = mentions[MENTION_FLAG].to_numpy(dtype=np.float64)
    cols: dict[str, np.ndarray] = {}
    for gen in gens:
        g = (mentions["generator"] == gen).to_numpy()
        cols[f"m|{gen}"] = flag * g
        cols[f"n|{gen}"] = g * 1.0
    unit = unit_noun(cluster, "rating slots")
    tb = bootstrap_totals(cols, _cluster_of(mentions, cluster, SLOT), settings, unit)
    out: list[Record | None] = []
    rates: dict[str, float] = {}
    for gen in gens:
        n = int(round(tb.point(f"n|{gen}")))
        res = tb.stat(lambda g, gen=gen: ratio(g(f"m|{gen}"), g(f"n|{gen}")))
        rec = make_record(
            f"stage3.mention_rate.{key_part(gen)}",
            boot_interval(res, settings, unit),
            fmt=".1%",
            method=(
                f"share of generator {gen}'s {n} personalized-response attribute slots in "
                "which the response mentions the attribute explicitly"
            ),
            code=f"{MODULE}:mention_rates",
            n=n,
            unit="slots",
            seed=settings.seed,
            extra=settings.with_caveat(gen, {"mentioned": int(round(tb.point(f"m|{gen}")))}),
        )
        if rec is not None:
            out.append(rec)
            rates[gen] = rec.value
    return collect(out), rates


def mention_habit_vs_bias(
    rates: Mapping[str, float], deltas: Mapping[str, float], settings: StatsSettings
) -> list[Record]:
    """Spearman's rho, across models, of mention rate as generator and mention delta as judge.

    Its units are a handful of models, so: with fewer than
    :data:`EXACT_TEST_BELOW` models the p-value is the exact permutation p over all pairings
    (the t approximation is not valid there) and the Fisher-z interval is labelled
    approximate; with at most :data:`DESCRIPTIVE_AT_MOST` models the correlation is
    descriptive (no p-value). A claim on this record is judged on ``extra.p_value``.
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
    if n <= DESCRIPTIVE_AT_MOST:
        text = f"{text}, approximate at n = {n}"
        note = f"; descriptive only: with {n} models no test is reported"
        test = {"descriptive": True}
    elif n < EXACT_TEST_BELOW:
        text = f"{text}, approximate at n = {n}"
        p = exact_permutation_p(x, y, "spearman")
        pairings = math.factorial(n)
        note = (
            f"; test of 0: exact two-sided permutation p over all {pairings} pairings of the "
            f"{n} models (scipy permutation_test), on which any claim is judged; the "
            f"approximate interval and the exact p {DISAGREEMENT_EXPLAINED}"
        )
        test = {
            "null": 0.0,
            "p_value": p,
            "test": f"exact permutation (all {pairings} pairings)",
            "p_value_t_approximation": ci.p_value,
            "statistic": "rho",
            "attainable": exact_permutation_attainable(x, y, "spearman"),
        }
    else:
        note = "; test of 0: t approximation of Spearman's rho (scipy spearmanr)"
        test = {"null": 0.0, "p_value": ci.p_value, "test": "t approximation (spearmanr)"}
    return collect(
        [
            make_record(
                "stage3.mention_habit_vs_bias.spearman",
                replace(ci, text=text),
                fmt=".2f",
                method=(
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
                unit="models",
                seed=None,
                extra={
                    "models": models,
                    "excluded_models": left_out,
                    **test,
                    "mention_rate": {m: rates[m] for m in models},
                    "mention_delta": {m: deltas[m] for m in models},
                },
            )
        ]
    )


def _human_ratings_by_slot(
    human: pd.DataFrame, slots: pd.DataFrame
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each human's rating of each slot as (slot position, rating, rater), sorted by slot.

    One rating per (slot, rater), the first non-missing one, on the slots of ``slots`` only.
    Long arrays rather than a slots x raters matrix: with a crowd of raters the matrix and a
    leave-one-rater-out pass over it grow as the square of the study's size.
    """
    rated = human.dropna(subset=["rating"]).drop_duplicates([*SLOT, "rater"], keep="first")
    position = pd.Series(np.arange(len(slots)), index=pd.MultiIndex.from_frame(slots[list(SLOT)]))
    slot_of = position.reindex(pd.MultiIndex.from_frame(rated[list(SLOT)])).to_numpy()
    found = ~np.isnan(slot_of)
    order = np.argsort(slot_of[found], kind="stable")
    return (
        slot_of[found].astype(np.int64)[order],
        rated["rating"].to_numpy(dtype=np.float64)[found][order],
        rated["rater"].to_numpy()[found][order],
    )


def rank_agreement(
    df: pd.DataFrame,
    slots: pd.DataFrame,
    judges: list[str],
    round_name: str,
    settings: StatsSettings,
    cluster: str | None,
) -> list[Record]:
    """Spearman of each judge with people, and the leave-one-human-out human ceiling."""
    unit = unit_noun(cluster, "rating slots")
    resamples = ClusterResamples.draw(_cluster_of(slots, cluster, SLOT), len(slots), settings, unit)
    bca = settings.ci_method == "bca"
    h = slots["human"].to_numpy(dtype=np.float64)
    out: list[Record | None] = []
    for j in judges:
        x = slots[f"judge|{j}"].to_numpy(dtype=np.float64)
        rows = np.flatnonzero(np.isfinite(x) & np.isfinite(h))
        if rows.size < 3:
            continue
        res = resamples.spearman(x[rows], h[rows], rows, bca)
        out.append(
            make_record(
                f"stage3.judge_spearman_vs_human.{key_part(j)}",
                boot_interval(res, settings, unit),
                fmt=".2f",
                method=(
                    f"Spearman's rho of judge {j}'s ratings and the human ratings (mean of the "
                    f"slot's raters) over {rows.size} rating slots ({round_name} round)"
                ),
                code=f"{MODULE}:rank_agreement",
                n=int(rows.size),
                seed=settings.seed,
                extra=settings.with_caveat(j, {"round": round_name}),
            )
        )
    human = df[df["rater_kind"] == HUMAN]
    people = sorted(human["rater"].unique())
    if len(people) >= 2:
        slot_of, rating, rater = _human_ratings_by_slot(human, slots)
        n_slot = np.bincount(slot_of, minlength=len(slots))
        sum_slot = np.bincount(slot_of, weights=rating, minlength=len(slots))
        per: dict[str, BootstrapResult] = {}
        n_pairs = 0
        for person in people:
            mine = rater == person
            own_slots, own = slot_of[mine], rating[mine]
            keep = n_slot[own_slots] >= 2  # at least one other human rated the slot
            rows, own = own_slots[keep], own[keep]
            if rows.size < 3:
                continue
            # the others' mean, leaving this person out: (slot sum - own) / (slot count - 1)
            rest = (sum_slot[rows] - own) / (n_slot[rows] - 1)
            res = resamples.spearman(own, rest, rows, bca)
            if np.isfinite(res.estimate):
                per[person] = res
                n_pairs += int(rows.size)
        if per:
            res = mean_of_results(list(per.values()))
            out.append(
                make_record(
                    "stage3.ceiling.spearman_human_vs_rest",
                    boot_interval(res, settings, unit),
                    fmt=".2f",
                    method=(
                        f"human ceiling: Spearman's rho of each of {len(per)} human raters with "
                        "the mean rating of the other humans on the slots they share, averaged "
                        f"over humans ({n_pairs} human-slot pairs, {round_name} round)"
                    ),
                    code=f"{MODULE}:rank_agreement",
                    n=n_pairs,
                    seed=settings.seed,
                    extra={
                        "round": round_name,
                        "per_rater": {p: float(r.estimate) for p, r in per.items()},
                    },
                )
            )
    return collect(out)


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
    cluster = cluster_column(settings, {"item": None, "user": "user_id", "prompt": "prompt_id"})
    records: list[Record] = []
    rates: dict[str, float] = {}
    if flags is not None:
        recs, rates = mention_rates(flags, settings, cluster)
        records += recs
    prepared = _ratings(ratings)
    if prepared is None:
        return collect(records)
    df, round_name = prepared
    human = df[df["rater_kind"] == HUMAN]
    records += no_better_share(human, round_name, settings, cluster)
    records += better_shares(df, round_name, settings, cluster)
    slots, judges = _slots(df, flags)
    tb = slot_totals(slots, judges, settings, cluster)
    records += mean_ratings(tb, slots, judges, round_name, settings)
    records += judge_minus_human(tb, slots, judges, round_name, settings)
    mention_recs, deltas = mention_effects(tb, judges, round_name, settings)
    records += mention_recs
    records += mention_habit_vs_bias(rates, deltas, settings)
    records += rank_agreement(df, slots, judges, round_name, settings, cluster)
    return collect(records)
