"""Stage-3 records on hand-checkable ratings: preference, judge gaps, mentions, rank agreement."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from analysis.stats.bootstrap import resample_counts
from analysis.stats.records import make_records
from analysis.stats.resampling import spearman_from_tables
from analysis.stats.settings import StatsSettings
from analysis.stats.study_common import StudyDataError
from analysis.stats.study_stage3 import mention_habit_vs_bias, stage3_records
from analysis.stats.weighted_bootstrap import weighted_spearman
from tests.settings_defaults import compose_config_plain, stats_settings


def settings(cfg: dict) -> StatsSettings:
    """A rule-style test config as the typed settings the statistics take."""
    return stats_settings(**cfg)


CFG = {
    "n_boot": 300,
    "ci_level": 0.95,
    "ci_method": "percentile",
    "cluster": "user",
    "multiple_comparisons": "holm",
    "design": "one_way",  # the hand-checked values; the declared designs: test_resampling
    "min_shared_items": 1,  # tiny fixtures: every pair that meets
    "seed": 5,
}

# slot: (user, prompt, generator, attribute): humans H1 H2 (None = not rated), judges J1 J2,
# and whether the personalized response mentions the attribute explicitly
SLOTS = [
    (("u1", "p1", "G1", "x1"), (4, 2), (5, 3), True),
    (("u1", "p1", "G1", "x2"), (3, 3), (4, 3), False),
    (("u1", "p1", "G2", "x1"), (5, 4), (5, 4), True),
    (("u1", "p1", "G2", "x2"), (4, None), (4, 2), False),
    (("u2", "p2", "G1", "y1"), (2, 1), (3, 1), False),
    (("u2", "p2", "G2", "y1"), (3, 4), (4, 5), True),
    (("u2", "p2", "G2", "y2"), (None, 2), (2, 2), False),
]
HUMAN_MEAN = [3.0, 3.0, 4.5, 4.0, 1.5, 3.5, 2.0]
J1 = [5, 4, 5, 4, 3, 4, 2]
J2 = [3, 3, 4, 2, 1, 5, 2]
MENTIONED = [s[3] for s in SLOTS]


def ratings() -> pd.DataFrame:
    rows = []
    for (user, prompt, gen, attr), humans, judges, _ in SLOTS:
        for kind, names, values in (
            ("human", ("H1", "H2"), humans),
            ("model", ("J1", "J2"), judges),
        ):
            for rater, rating in zip(names, values, strict=True):
                if rating is not None:
                    rows.append(
                        {
                            "user_id": user,
                            "prompt_id": prompt,
                            "generator": gen,
                            "attribute_id": attr,
                            "rater": rater,
                            "rater_kind": kind,
                            "raw_rater": rater,
                            "round": "final",
                            "rating": rating,
                        }
                    )
    return pd.DataFrame(rows)


def responses() -> pd.DataFrame:
    rows = []
    for user, prompt in (("u1", "p1"), ("u2", "p2")):
        for gen in ("G1", "G2"):
            for cond in ("generic", "personalized"):
                rows.append(
                    {
                        "response_id": f"{user}-{prompt}-{gen}-{cond}",
                        "user_id": user,
                        "prompt_id": prompt,
                        "generator": gen,
                        "condition": cond,
                        "text": "...",
                    }
                )
    return pd.DataFrame(rows)


def mentions() -> pd.DataFrame:
    """Flags of the rated slots, an unrated G1 slot, and generic responses (ignored)."""
    rows = [
        {"response_id": f"{u}-{p}-{g}-personalized", "attribute_id": a, "mentioned": m}
        for (u, p, g, a), _, _, m in SLOTS
    ]
    rows.append({"response_id": "u2-p2-G1-personalized", "attribute_id": "y9", "mentioned": False})
    rows += [
        {"response_id": f"{u}-{p}-{g}-generic", "attribute_id": a, "mentioned": True}
        for (u, p, g, a), _, _, _ in SLOTS
    ]
    return pd.DataFrame(rows).assign(method="lexical-minilm-v1")


@pytest.fixture(scope="module")
def recs() -> dict:
    out = stage3_records(ratings(), settings(CFG), mentions=mentions(), responses=responses())
    return {r.key: r for r in out}


def test_no_better_share_rule(recs: dict) -> None:
    # responses: (u1,G1) mean 3 -> no better; (u1,G2) 4.25; (u2,G1) 1.5 -> no; (u2,G2) 2.75 -> no
    rec = recs["stage3.no_better_share"]
    assert rec.value == pytest.approx(3 / 4)
    assert rec.n == 4 and rec.extra["no_better"] == 3
    assert "<= 3" in rec.method


def test_no_better_share_names_the_raters_by_the_datasets_noun() -> None:
    # a simulated world's raters are "simulated raters", never "people" (data.nouns, read from
    # the rule's params as rule stage3_statistics passes them)
    params = {"stats": compose_config_plain()["stats"], "run.seed": 5}
    base = StatsSettings.from_rule_params(params)
    assert base.people == "human raters"
    for noun in ("simulated raters", "people"):
        typed = StatsSettings.from_rule_params({**params, "data.nouns": {"people": noun}})
        assert typed.people == noun
    cfg = {k: v for k, v in CFG.items() if k != "seed"}
    sim = replace(stats_settings(**cfg, seed=5), people="simulated raters")
    method = {r.key: r for r in stage3_records(ratings(), sim)}["stage3.no_better_share"].method
    assert "responses that the simulated raters rate no better" in method
    assert "mean rating by the simulated raters" in method
    # (the design's name, rating_people, is an identifier, not a noun of the sentence)
    assert "people rate" not in method and "human rating" not in method


def test_mean_ratings(recs: dict) -> None:
    assert recs["stage3.mean_rating.G1"].value == pytest.approx((3 + 3 + 1.5) / 3)
    assert recs["stage3.mean_rating.G2"].value == pytest.approx((4.5 + 4 + 3.5 + 2) / 4)
    assert recs["stage3.mean_rating.human"].value == pytest.approx(np.mean(HUMAN_MEAN))
    assert recs["stage3.judge_mean_rating.J1"].value == pytest.approx(np.mean(J1))
    assert recs["stage3.judge_mean_rating.J2"].value == pytest.approx(np.mean(J2))


def test_judge_minus_human_resample_test_holm(recs: dict) -> None:
    # users u1 (slots 1-4), u2 (slots 5-7). J1 - human is >= 0 on every slot, so every
    # resample's mean is > 0 and p is floored at 1/B. J2 - human sums to -2.5 over u1's 4
    # slots and +1 over u2's 3: only "u2 twice" resamples are >= 0.
    counts = resample_counts(2, CFG["n_boot"], CFG["seed"])
    expected = {"J1": 1 / CFG["n_boot"], "J2": 2 * np.mean(counts[:, 1] == 2)}
    for name, judge in (("J1", J1), ("J2", J2)):
        d = np.array(judge, dtype=float) - np.array(HUMAN_MEAN)
        rec = recs[f"stage3.judge_minus_human.{name}"]
        assert rec.value == pytest.approx(d.mean())
        assert rec.extra["p_value"] == pytest.approx(expected[name])
        assert rec.extra["null"] == 0.0
        assert rec.extra["correction"] == "holm" and "Wilcoxon" not in rec.method
    _, holm, _, _ = multipletests([expected["J1"], expected["J2"]], method="holm")
    for name, adj in zip(("J1", "J2"), holm, strict=True):
        assert recs[f"stage3.judge_minus_human.{name}"].extra["p_adjusted"] == pytest.approx(adj)


def test_mention_effects(recs: dict) -> None:
    m = np.array(MENTIONED)
    h = np.array(HUMAN_MEAN)
    assert recs["stage3.mention_delta.human"].value == pytest.approx(h[m].mean() - h[~m].mean())
    j = np.array(J1, dtype=float)
    assert recs["stage3.mention_delta.J1"].value == pytest.approx(j[m].mean() - j[~m].mean())
    # generic responses' flags are ignored; G1 has one unrated slot without a mention
    assert recs["stage3.mention_rate.G1"].value == pytest.approx(1 / 4)
    assert recs["stage3.mention_rate.G2"].value == pytest.approx(2 / 4)
    # two models only: no across-model correlation
    assert "stage3.mention_habit_vs_bias.spearman" not in recs


def test_worse_and_equal_shares_split_the_no_better_share(recs: dict) -> None:
    # response scores: (u1,G1) 3 (equal), (u1,G2) 4.25, (u2,G1) 1.5 (worse), (u2,G2) 2.75
    assert recs["stage3.worse_share"].value == pytest.approx(2 / 4)
    assert recs["stage3.equal_share"].value == pytest.approx(1 / 4)
    assert recs["stage3.worse_share"].value + recs["stage3.equal_share"].value == pytest.approx(
        recs["stage3.no_better_share"].value
    )
    assert recs["stage3.worse_share"].unit == "responses"


def test_mention_effect_within_generators_by_hand(recs: dict) -> None:
    """G1: mentioned slot 1 vs unmentioned slots 2 and 5 (weight 1*2/3); G2: mentioned 3 and 6
    vs unmentioned 4 and 7 (weight 2*2/4)."""
    m, gen = np.array(MENTIONED), np.array([s[0][2] for s in SLOTS])
    for name, values in (("human", HUMAN_MEAN), ("J1", J1), ("J2", J2)):
        x = np.array(values, dtype=float)
        diffs, weights = [], []
        for g in ("G1", "G2"):
            a, b = x[(gen == g) & m], x[(gen == g) & ~m]
            diffs.append(a.mean() - b.mean())
            weights.append(a.size * b.size / (a.size + b.size))
        rec = recs[f"stage3.mention_delta_within_generator.{name}"]
        assert rec.value == pytest.approx(np.average(diffs, weights=weights))
        assert rec.extra["family"] == "mention_delta_within_generator"
        assert rec.extra["weights"] == pytest.approx({"G1": 0.4, "G2": 0.6})


def test_rank_agreement_and_ceiling(recs: dict) -> None:
    rho = stats.spearmanr(J1, HUMAN_MEAN).statistic
    assert recs["stage3.judge_spearman_vs_human.J1"].value == pytest.approx(rho)
    both = [i for i, s in enumerate(SLOTS) if None not in s[1]]
    h1 = [SLOTS[i][1][0] for i in both]
    h2 = [SLOTS[i][1][1] for i in both]
    ceiling = recs["stage3.ceiling.spearman_human_vs_rest"]
    assert ceiling.value == pytest.approx(stats.spearmanr(h1, h2).statistic)
    assert ceiling.n == 2 * len(both)


def test_records_are_complete(recs: dict) -> None:
    for key, rec in recs.items():
        assert rec.code.startswith("analysis.stats.study_stage3:"), key
        assert "95% CI" in rec.method, key
        assert rec.n > 0


def test_habit_vs_bias_across_models() -> None:
    settings = stats_settings(seed=1)
    rates = {"m1": 0.05, "m2": 0.2, "m3": 0.4, "m4": 0.5, "m5": 0.7}
    deltas = {"m1": -0.39, "m2": 0.1, "m3": 0.2, "m4": 0.5, "m5": 0.4, "judge-only": 1.0}
    (rec,) = make_records(mention_habit_vs_bias(rates, deltas, settings), settings)
    x = [rates[m] for m in sorted(rates)]
    y = [deltas[m] for m in sorted(rates)]
    assert rec.value == pytest.approx(stats.spearmanr(x, y).statistic)  # 0.9
    assert rec.n == 5 and "Fisher z" in rec.method
    assert rec.ci_low < rec.value < rec.ci_high
    # five models: the exact permutation p over 5! = 120 pairings (|rho| >= 0.9: 10 of them)
    assert rec.extra["p_value"] == pytest.approx(10 / 120)
    assert rec.extra["null"] == 0.0 and "120 pairings" in rec.method
    assert rec.extra["p_value_t_approximation"] == pytest.approx(stats.spearmanr(x, y).pvalue)
    assert "approximate" in rec.method and "can disagree" in rec.method
    # four models: descriptive (an approximate interval, no p-value); three: nothing
    (four,) = make_records(
        mention_habit_vs_bias(dict(list(rates.items())[:4]), deltas, settings), settings
    )
    assert "p_value" not in four.extra and four.extra["descriptive"] is True
    assert "no test" in four.method
    assert mention_habit_vs_bias(dict(list(rates.items())[:3]), deltas, settings) == []


def test_keys_absent_without_humans_or_mentions() -> None:
    judges_only = ratings()[lambda d: d.rater_kind == "model"]
    keys = {r.key for r in stage3_records(judges_only, settings(CFG))}
    assert keys == {"stage3.judge_mean_rating.J1", "stage3.judge_mean_rating.J2"}
    keys = {r.key for r in stage3_records(ratings(), settings(CFG))}
    assert not any("mention" in k for k in keys)
    assert "stage3.no_better_share" in keys
    assert stage3_records(ratings().iloc[:0], settings(CFG)) == []


def test_mentions_without_responses_is_an_error() -> None:
    with pytest.raises(StudyDataError, match="responses table is needed"):
        stage3_records(ratings(), settings(CFG), mentions=mentions())
    bad = ratings()
    bad.loc[4, "rating"] = 6
    with pytest.raises(StudyDataError, match="row 4: field 'rating' = 6"):
        stage3_records(bad, settings(CFG))


def test_bca_intervals() -> None:
    recs = stage3_records(ratings(), settings({**CFG, "ci_method": "bca"}))
    assert any("BCa" in r.method for r in recs)


def test_vectorized_spearman_equals_scipy_on_resamples() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(1, 6, 60).astype(float)
    y = np.round(x / 2 + rng.integers(0, 3, 60), 1)
    w = rng.integers(0, 3, (4, 60))
    expected = [stats.spearmanr(np.repeat(x, row), np.repeat(y, row)).statistic for row in w]
    assert weighted_spearman(x, y)(w) == pytest.approx(expected)
    ux, ix = np.unique(x, return_inverse=True)
    uy, iy = np.unique(y, return_inverse=True)
    tables = np.zeros((4, ux.size, uy.size))
    for b in range(4):
        np.add.at(tables[b], (ix, iy), w[b])
    assert spearman_from_tables(tables) == pytest.approx(expected)
    assert np.isnan(weighted_spearman(np.ones(5), np.arange(5.0))(np.ones((1, 5)))[0])


def test_habit_vs_bias_leaves_out_caveated_models() -> None:
    rates = {"m1": 0.05, "m2": 0.2, "m3": 0.4, "m4": 0.5, "m5": 0.7}
    deltas = {"m1": -0.39, "m2": 0.1, "m3": 0.2, "m4": 0.5, "m5": 0.4}
    settings = stats_settings(seed=1, caveats={"m5": "toy model"})
    (rec,) = make_records(mention_habit_vs_bias(rates, deltas, settings), settings)
    assert rec.n == 4 and rec.extra["excluded_models"] == ["m5"]
    assert rec.value == pytest.approx(
        stats.spearmanr([0.05, 0.2, 0.4, 0.5], [-0.39, 0.1, 0.2, 0.5]).statistic
    )
    assert "left out" in rec.method


def test_better_shares_of_people_and_judges(recs: dict) -> None:
    # responses (human / J1 / J2 means): (u1,G1) 3 / 4.5 / 3; (u1,G2) 4.25 / 4.5 / 3;
    # (u2,G1) 1.5 / 3 / 1; (u2,G2) 2.75 / 3 / 3.5 -> better (> 3): people 1, J1 2, J2 1 of 4
    human = recs["stage3.human_better_share"]
    assert human.value == pytest.approx(1 / 4)
    assert human.value == pytest.approx(1 - recs["stage3.no_better_share"].value)
    assert recs["stage3.judge_better_share.J1"].value == pytest.approx(2 / 4)
    assert recs["stage3.judge_better_share.J2"].value == pytest.approx(1 / 4)
    gap = recs["stage3.judge_better_share_minus_human.J1"]
    assert gap.value == pytest.approx(2 / 4 - 1 / 4) and gap.n == 4
    assert recs["stage3.judge_better_share_minus_human.J2"].value == pytest.approx(0.0)
    # the same responses and clusters as the no-better share: the same resamples
    no_better = recs["stage3.no_better_share"]
    assert human.ci_low == pytest.approx(1 - no_better.ci_high)
    assert human.ci_high == pytest.approx(1 - no_better.ci_low)


def test_judge_better_share_only_on_responses_people_rated() -> None:
    extra = ratings().iloc[:0].copy()
    rows = [
        # J3 rates one response people rated (better) and one nobody else rated
        ("u1", "p1", "G2", "x1", 5),
        ("u3", "p3", "G1", "z1", 5),
    ]
    for user, prompt, gen, attr, rating in rows:
        extra.loc[len(extra)] = {
            "user_id": user,
            "prompt_id": prompt,
            "generator": gen,
            "attribute_id": attr,
            "rater": "J3",
            "rater_kind": "model",
            "raw_rater": "J3",
            "round": "final",
            "rating": rating,
        }
    out = {r.key: r for r in stage3_records(pd.concat([ratings(), extra]), settings(CFG))}
    rec = out["stage3.judge_better_share.J3"]
    assert rec.value == pytest.approx(1.0) and rec.n == 1
    # people rate that one response better too: no difference
    assert out["stage3.judge_better_share_minus_human.J3"].value == pytest.approx(0.0)


def test_ceiling_leave_one_out_equals_the_raters_matrix() -> None:
    """The long-format leave-one-rater-out means equal the slots x raters matrix ones.

    A crowd of raters on overlapping slots, with a missing rating, a duplicate (the first
    counts) and a rating of a slot outside ``slots``: each rater's rho is the one of the
    old dense computation (nanmean over the other columns).
    """
    from analysis.stats.study_stage3 import SLOT, HumanRatings, rank_agreement

    rng = np.random.default_rng(7)
    n_slots, raters = 40, [f"h{i:02d}" for i in range(12)]
    slots = pd.DataFrame(
        {
            "user_id": [f"u{i % 8}" for i in range(n_slots)],
            "prompt_id": [f"p{i}" for i in range(n_slots)],
            "generator": "G1",
            "attribute_id": "a",
        }
    )
    rows = []
    for i in range(n_slots):
        for r in rng.choice(raters, size=int(rng.integers(1, 5)), replace=False):
            rows.append(
                {**slots.iloc[i].to_dict(), "rater": r, "rating": float(rng.integers(1, 6))}
            )
    rows.append({**rows[0], "rating": 5.0 if rows[0]["rating"] != 5.0 else 1.0})  # duplicate
    rows.append({**rows[1], "rating": np.nan})
    rows.append({**rows[2], "prompt_id": "elsewhere"})
    df = pd.DataFrame(rows).assign(rater_kind="human")
    slots = slots.assign(human=0.0)
    settings = stats_settings(seed=2)
    hr = HumanRatings.of(df, slots)
    (rec,) = make_records(rank_agreement(df, slots, [], "final", settings, hr), settings)
    wide = (
        df.drop(df.index[-3])
        .pivot_table(index=list(SLOT), columns="rater", values="rating", aggfunc="first")
        .reindex(pd.MultiIndex.from_frame(slots[list(SLOT)]))
    )
    assert len(rec.extra["per_rater"]) >= 8
    for person, rho in rec.extra["per_rater"].items():
        own = wide[person].to_numpy()
        others = wide.drop(columns=person).to_numpy()
        ok = np.isfinite(own) & (np.isfinite(others).sum(axis=1) >= 1)
        rest = np.nanmean(others[ok], axis=1)
        assert rho == pytest.approx(stats.spearmanr(own[ok], rest).statistic, abs=1e-12)
