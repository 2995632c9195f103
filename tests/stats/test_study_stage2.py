"""Stage-2 records on hand-checkable votes: rates, over-selection, kappas, F1, ceiling."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score, f1_score, precision_score, recall_score
from statsmodels.stats.multitest import multipletests

from analysis.stats.bootstrap import resample_counts
from analysis.stats.settings import StatsSettings
from analysis.stats.study_common import StudyDataError
from analysis.stats.study_stage2 import kappa_matrix_table, stage2_records, stage2_statistics
from tests.settings_defaults import stats_settings


#: a rule-style test config -> the typed settings the statistics take (as a rule script does)
def settings(cfg: dict) -> StatsSettings:
    """A rule-style test config as the typed settings the statistics take."""
    return stats_settings(**cfg)


CFG = {
    "n_boot": 400,
    "ci_level": 0.95,
    "ci_method": "percentile",
    "cluster": "user",
    "multiple_comparisons": "holm",
    "design": "one_way",  # the hand-checked values; the declared designs: test_resampling
    "min_shared_items": 1,  # tiny fixtures: every pair that meets
    "seed": 7,
}

# item: humans A B C | majority | models M1 M2   (two users, three items each)
VOTES = {
    "i1": (1, 1, 0, 1, 1),
    "i2": (0, 0, 0, 1, 0),
    "i3": (1, 0, 0, 1, 1),
    "i4": (0, 0, 1, 0, 0),
    "i5": (1, 1, 1, 1, 1),
    "i6": (0, 1, 0, 1, 0),
}
RATERS = [("A", "human"), ("B", "human"), ("C", "human"), ("M1", "model"), ("M2", "model")]
MAJORITY = {"i1": 1, "i2": 0, "i3": 0, "i4": 0, "i5": 1, "i6": 0}


def votes_frame(round_name: str = "final", items: dict | None = None) -> pd.DataFrame:
    rows = []
    for n, (item, votes) in enumerate((items or VOTES).items()):
        for (rater, kind), vote in zip(RATERS, votes, strict=True):
            rows.append(
                {
                    "item_id": item,
                    "user_id": "u1" if n < 3 else "u2",
                    "prompt_id": f"p{n % 2}",
                    "attribute_id": f"a{n}",
                    "rater": rater,
                    "rater_kind": kind,
                    "raw_rater": rater,
                    "round": round_name,
                    "vote": bool(vote),
                }
            )
    return pd.DataFrame(rows)


def by_key(records):
    return {r.key: r for r in records}


def col(rater: str) -> list[int]:
    i = [r for r, _ in RATERS].index(rater)
    return [v[i] for v in VOTES.values()]


MAJ = [MAJORITY[i] for i in VOTES]


@pytest.fixture(scope="module")
def final() -> dict:
    return by_key(stage2_records(votes_frame(), settings(CFG)))


def test_relevance_rates_by_hand(final: dict) -> None:
    assert final["stage2.final.relevance_rate.human_majority"].value == pytest.approx(2 / 6)
    assert final["stage2.final.relevance_rate.M1"].value == pytest.approx(5 / 6)
    assert final["stage2.final.relevance_rate.M2"].value == pytest.approx(3 / 6)
    # humans: A 3/6, B 3/6, C 2/6 -> mean 8/18
    assert final["stage2.final.relevance_rate.human"].value == pytest.approx(8 / 18)
    assert final["stage2.final.relevance_rate.human"].n == 18


def test_over_selection_and_resample_test_holm(final: dict) -> None:
    m1 = final["stage2.final.over_selection.M1"]
    m2 = final["stage2.final.over_selection.M2"]
    assert m1.value == pytest.approx(5 / 2)
    assert m2.value == pytest.approx(3 / 2)
    # users u1 (i1-i3), u2 (i4-i6). M1's ratio is 3 (u1 twice), 2.5 or 2 (u2 twice): never
    # <= 1, so p is floored at 1/B. M2's is 2, 1.5 or 1: p = 2 * share of "u2 twice".
    counts = resample_counts(2, CFG["n_boot"], CFG["seed"])
    assert m1.extra["p_value"] == pytest.approx(1 / CFG["n_boot"])
    assert m1.extra["p_value_is_upper_bound"] is True  # printed "< 1/B"
    assert m1.extra["null"] == 1.0 and "same resamples" in m1.extra["test"]
    assert m1.extra["model_yes_majority_no"] == 3 and m1.extra["model_no_majority_yes"] == 0
    assert m2.extra["p_value"] == pytest.approx(2 * np.mean(counts[:, 1] == 2))
    # Holm over the two p-values
    _, holm, _, _ = multipletests([m1.extra["p_value"], m2.extra["p_value"]], method="holm")
    assert [m1.extra["p_adjusted"], m2.extra["p_adjusted"]] == pytest.approx(list(holm))
    assert m1.extra["correction"] == "holm" and "McNemar" not in m1.method
    assert "same resamples as the interval" in m1.method
    assert m1.extra["family"] == "over_selection"
    assert m1.extra["family_members"] == ["stage2.final.over_selection.M1", m2.key]
    assert final["stage2.final.over_selection.mean_model"].value == pytest.approx(2.0)


def test_agreement_with_majority_matches_sklearn(final: dict) -> None:
    for m in ("M1", "M2"):
        pred = col(m)
        assert final[f"stage2.final.kappa_vs_majority.{m}"].value == pytest.approx(
            cohen_kappa_score(pred, MAJ)
        )
        assert final[f"stage2.final.f1_vs_majority.{m}"].value == pytest.approx(f1_score(MAJ, pred))
        assert final[f"stage2.final.precision_vs_majority.{m}"].value == pytest.approx(
            precision_score(MAJ, pred)
        )
        assert final[f"stage2.final.recall_vs_majority.{m}"].value == pytest.approx(
            recall_score(MAJ, pred)
        )
    # by hand for M1: p_o = 3/6, p_e = 5/6*2/6 + 1/6*4/6 = 14/36 -> kappa = 4/22
    assert final["stage2.final.kappa_vs_majority.M1"].value == pytest.approx(4 / 22)
    assert final["stage2.final.f1_vs_majority.M1"].value == pytest.approx(4 / 7)


def test_group_means_of_pairwise_kappa(final: dict) -> None:
    def k(a: str, b: str) -> float:
        return cohen_kappa_score(col(a), col(b))

    hh = np.mean([k("A", "B"), k("A", "C"), k("B", "C")])
    hm = np.mean([k(h, m) for h in "ABC" for m in ("M1", "M2")])
    assert final["stage2.final.kappa.human_human"].value == pytest.approx(hh)
    assert final["stage2.final.kappa.model_model"].value == pytest.approx(k("M1", "M2"))
    assert final["stage2.final.kappa.human_model"].value == pytest.approx(hm)
    assert "mean pairwise Cohen's kappa over the 3 pairs of 3 human raters" in (
        final["stage2.final.kappa.human_human"].method
    )


def share_of_max(a: list[int], b: list[int]) -> tuple[float, float]:
    """(kappa_max, kappa / kappa_max) of two raters by hand."""
    n = len(a)
    pa, pb = sum(a) / n, sum(b) / n
    p_o = sum(x == y for x, y in zip(a, b, strict=True)) / n
    p_e = pa * pb + (1 - pa) * (1 - pb)
    p_max = min(pa, pb) + min(1 - pa, 1 - pb)
    return (p_max - p_e) / (1 - p_e), (p_o - p_e) / (p_max - p_e)


def test_attainable_kappa_group_means_and_their_differences(final: dict) -> None:
    """kappa_max and kappa / kappa_max per pair by hand, averaged over each group's pairs; the
    difference of two groups' shares is the difference of their records."""
    pairs = {
        "human_human": [("A", "B"), ("A", "C"), ("B", "C")],
        "model_model": [("M1", "M2")],
        "human_model": [(h, m) for h in "ABC" for m in ("M1", "M2")],
    }
    for group, members in pairs.items():
        by_hand = np.array([share_of_max(col(a), col(b)) for a, b in members])
        kmax = final[f"stage2.final.kappa_max.{group}"]
        share = final[f"stage2.final.kappa_share_of_max.{group}"]
        assert kmax.value == pytest.approx(by_hand[:, 0].mean())
        assert share.value == pytest.approx(by_hand[:, 1].mean())
        assert share.unit == "items" and "kappa / kappa_max" in share.method
    diff = final["stage2.final.kappa_share_of_max_diff.model_model_minus_human_model"]
    assert diff.value == pytest.approx(
        final["stage2.final.kappa_share_of_max.model_model"].value
        - final["stage2.final.kappa_share_of_max.human_model"].value
    )
    assert diff.extra["family"] == "kappa_share_differences"


def test_krippendorff_alpha_over_people_models_and_both(final: dict) -> None:
    import krippendorff

    def alpha(raters: list[str]) -> float:
        data = np.array([col(r) for r in raters], dtype=float)
        return krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")

    assert final["stage2.final.alpha.human"].value == pytest.approx(alpha(["A", "B", "C"]))
    assert final["stage2.final.alpha.model"].value == pytest.approx(alpha(["M1", "M2"]))
    assert final["stage2.final.alpha.all"].value == pytest.approx(
        alpha(["A", "B", "C", "M1", "M2"])
    )
    assert final["stage2.final.alpha.all"].n == 6
    assert "every human and model rater (5 raters" in final["stage2.final.alpha.all"].method


def loo_reference(h: str, humans: str = "ABC") -> list[float]:
    """The majority of the other humans by hand: NaN where fewer than 2 or they tie."""
    rest = [c for c in humans if c != h]
    out = []
    for i in range(6):
        yes = sum(col(r)[i] for r in rest)
        out.append(np.nan if 2 * yes == len(rest) else float(2 * yes > len(rest)))
    return out


def test_human_ceiling_leave_one_out_drops_ties(final: dict) -> None:
    """Each human against the majority of the two others; a 1-1 tie is dropped."""
    kappas, f1s = [], []
    for h in "ABC":
        ref = loo_reference(h)
        keep = [i for i in range(6) if np.isfinite(ref[i])]
        truth, pred = [ref[i] for i in keep], [col(h)[i] for i in keep]
        kappas.append(cohen_kappa_score(pred, truth))
        f1s.append(f1_score(truth, pred))
    ceiling_k = final["stage2.final.ceiling.kappa_human_vs_rest"]
    assert ceiling_k.value == pytest.approx(np.nanmean(kappas))
    assert final["stage2.final.ceiling.f1_human_vs_rest"].value == pytest.approx(np.mean(f1s))
    # ties: A 3 (i1, i4, i6), B 3 (i1, i3, i4), C 2 (i3, i6) of 18 human-item pairs
    assert ceiling_k.extra["tied_pairs_dropped"] == 8
    assert ceiling_k.extra["tied_share"] == pytest.approx(8 / 18)
    assert ceiling_k.n == 10
    assert ceiling_k.extra["per_rater"]["A"] == pytest.approx(kappas[0])


def test_models_scored_against_the_ceiling_references(final: dict) -> None:
    for m in ("M1", "M2"):
        kappas, f1s, gap_k, gap_f = [], [], [], []
        for h in "ABC":
            ref = loo_reference(h)
            keep = [i for i in range(6) if np.isfinite(ref[i])]
            truth = [ref[i] for i in keep]
            pm, ph = [col(m)[i] for i in keep], [col(h)[i] for i in keep]
            kappas.append(cohen_kappa_score(pm, truth))
            f1s.append(f1_score(truth, pm))
            gap_k.append(kappas[-1] - cohen_kappa_score(ph, truth))
            gap_f.append(f1s[-1] - f1_score(truth, ph))
        p = "stage2.final.vs_rest"
        assert final[f"{p}.kappa.{m}"].value == pytest.approx(np.nanmean(kappas))
        assert final[f"{p}.f1.{m}"].value == pytest.approx(np.mean(f1s))
        gap = final[f"{p}.gap_kappa.{m}"]
        assert gap.value == pytest.approx(np.nanmean(gap_k))
        assert final[f"{p}.gap_f1.{m}"].value == pytest.approx(np.mean(gap_f))
        assert gap.extra["null"] == 0.0 and 1 / CFG["n_boot"] <= gap.extra["p_value"] <= 1
        assert gap.extra["p_adjusted"] >= gap.extra["p_value"]


def test_kappa_differences_are_differences_of_group_means(final: dict) -> None:
    k = {g: final[f"stage2.final.kappa.{g}"].value for g in ("human_human", "model_model")}
    k["human_model"] = final["stage2.final.kappa.human_model"].value
    for a, b in (
        ("model_model", "human_model"),
        ("human_human", "human_model"),
        ("model_model", "human_human"),
    ):
        rec = final[f"stage2.final.kappa_diff.{a}_minus_{b}"]
        assert rec.value == pytest.approx(k[a] - k[b])
        assert rec.extra["null"] == 0.0 and "p_value" in rec.extra


def test_every_record_is_complete(final: dict) -> None:
    for key, rec in final.items():
        assert rec.code.startswith("analysis.stats.study_stage2:"), key
        assert rec.seed == 7 and rec.n > 0, key
        if rec.text == "not estimable":
            # M2's relevant items are a subset of M1's: the pair reaches its largest kappa on
            # every resample, a constant, and says so instead of printing a zero-width interval
            assert key == "stage2.final.kappa_share_of_max.model_model" and rec.value == 1.0
            assert rec.ci_low is None and "same value on every resample" in rec.method
            continue
        assert "95% CI" in rec.method, key
        assert rec.ci_low is not None and rec.ci_high is not None, key
        assert rec.ci_low <= rec.value + 1e-12 and rec.value <= rec.ci_high + 1e-12, key
        assert np.isfinite(rec.value)
    assert "cluster bootstrap over users (2), B=400, percentile" in (
        final["stage2.final.kappa.model_model"].method
    )


def test_keys_absent_without_individual_humans() -> None:
    """A published majority and models only: no human kappa, no per-human rate, no ceiling."""
    df = votes_frame()
    df = df[df["rater_kind"] == "model"]
    maj = (
        votes_frame()
        .drop_duplicates("item_id")
        .assign(
            rater="human-majority",
            rater_kind="human_majority",
            vote=[bool(MAJORITY[i]) for i in VOTES],
        )
    )
    keys = set(by_key(stage2_records(pd.concat([df, maj]), settings(CFG))))
    assert "stage2.final.relevance_rate.human_majority" in keys
    assert "stage2.final.kappa.model_model" in keys
    assert "stage2.final.over_selection.M1" in keys
    absent = {
        "stage2.final.kappa.human_human",
        "stage2.final.kappa.human_model",
        "stage2.final.relevance_rate.human",
        "stage2.final.ceiling.kappa_human_vs_rest",
        "stage2.final.ceiling.f1_human_vs_rest",
    }
    assert not keys & absent


def test_keys_absent_without_majority_or_second_model() -> None:
    df = votes_frame()
    only = df[df["rater"] == "M1"]
    keys = set(by_key(stage2_records(only, settings(CFG))))
    assert keys == {"stage2.final.relevance_rate.M1"}


def test_published_majority_wins_over_computed() -> None:
    df = votes_frame()
    published = df.drop_duplicates("item_id").assign(
        rater="human-majority", rater_kind="human_majority", vote=True
    )
    recs = by_key(stage2_records(pd.concat([df, published]), settings(CFG)))
    assert recs["stage2.final.relevance_rate.human_majority"].value == 1.0
    assert "published" in recs["stage2.final.relevance_rate.human_majority"].method


def test_rounds_are_never_pooled() -> None:
    flipped = {k: tuple(1 - x for x in v) for k, v in VOTES.items()}
    df = pd.concat([votes_frame("final"), votes_frame("pilot", flipped)])
    recs = by_key(stage2_records(df, settings(CFG)))
    assert recs["stage2.final.relevance_rate.M1"].value == pytest.approx(5 / 6)
    assert recs["stage2.pilot.relevance_rate.M1"].value == pytest.approx(1 / 6)
    assert recs["stage2.pilot.relevance_rate.M1"].extra["round"] == "pilot"


def test_kappa_matrix_table() -> None:
    result = stage2_statistics(votes_frame(), settings(CFG))
    table = kappa_matrix_table(result)
    assert len(table) == 5 * 4  # both orders, no diagonal
    cell = table[(table["rater_a"] == "A") & (table["rater_b"] == "M1")].iloc[0]
    assert cell["kappa"] == pytest.approx(cohen_kappa_score(col("A"), col("M1")))
    assert cell["kind_a"] == "human" and cell["kind_b"] == "model" and cell["n_items"] == 6
    assert list(table.drop_duplicates("rater_a")["rater_a"]) == ["A", "B", "C", "M1", "M2"]
    # cells whose kappa never moves (or is undefined) have no interval; the others hold it
    has = table["ci_low"].notna()
    assert (table.loc[has, "ci_low"] <= table.loc[has, "kappa"] + 1e-12).all()
    empty = kappa_matrix_table(
        stage2_statistics(votes_frame()[lambda d: d.rater == "M1"], settings(CFG))
    )
    assert empty.empty and "kappa" in empty.columns


def test_deterministic_and_seeded() -> None:
    a = stage2_records(votes_frame(), settings(CFG))
    b = stage2_records(votes_frame().sample(frac=1.0, random_state=3), settings(CFG))
    assert [(r.key, r.value, r.ci_low, r.ci_high) for r in a] == [
        (r.key, r.value, r.ci_low, r.ci_high) for r in b
    ]
    # with two clusters every seed gives the same 4 possible resamples: use more users
    votes = bundled_sized_votes(n_items=300)
    c1 = stage2_records(votes, settings(CFG))
    c2 = stage2_records(votes, settings({**CFG, "seed": 8}))
    assert [r.value for r in c1] == [r.value for r in c2]
    assert [r.ci_low for r in c1] != [r.ci_low for r in c2]
    assert all(r.seed == 8 for r in c2)


def test_item_clusters_and_shares_on_few_units() -> None:
    recs = by_key(stage2_records(votes_frame(), settings({**CFG, "cluster": "item"})))
    rate = recs["stage2.final.relevance_rate.human_majority"]
    # a share on six items: exact (Clopper-Pearson) on the design's units
    assert "Clopper-Pearson (exact)" in rate.method and rate.extra["exact"] is True
    assert "items (6) resampled alone" in recs["stage2.final.kappa.human_human"].method


def test_bad_config() -> None:
    with pytest.raises(TypeError, match="unknown statistics settings"):
        settings({**CFG, "n_bootstrap": 5})
    with pytest.raises(ValueError, match="stats.cluster"):
        settings({**CFG, "cluster": "attribute"})


def test_bad_input_names_table_row_and_field() -> None:
    df = pd.concat([votes_frame(), votes_frame().iloc[[0]]], ignore_index=True)
    with pytest.raises(StudyDataError, match=r"relevance_votes: rows \[0, 30\].*item_id='i1'"):
        stage2_records(df, settings(CFG))
    with pytest.raises(StudyDataError, match="missing column"):
        stage2_records(votes_frame().drop(columns=["vote"]), settings(CFG))
    bad = votes_frame()
    bad.loc[3, "rater_kind"] = "robot"
    with pytest.raises(StudyDataError, match="row 3: field 'rater_kind'"):
        stage2_records(bad, settings(CFG))


def bundled_sized_votes(seed: int = 0, n_items: int = 3973) -> pd.DataFrame:
    """~4,000 items x (3 humans + 5 models), 164 users: the bundled world's stage-2 size."""
    rng = np.random.default_rng(seed)
    truth = rng.random(n_items) < 0.2
    users = rng.integers(0, 164, n_items)
    frames = []
    for r in range(8):
        human = r < 3
        vote = (
            np.where(rng.random(n_items) < 0.85, truth, rng.random(n_items) < 0.15)
            if human
            else np.where(truth, rng.random(n_items) < 0.9, rng.random(n_items) < 0.35)
        )
        frames.append(
            pd.DataFrame(
                {
                    "item_id": [f"i{i}" for i in range(n_items)],
                    "user_id": [f"u{u}" for u in users],
                    "prompt_id": [f"p{u % 41}" for u in users],
                    "rater": f"sim-human-{r}" if human else f"sim-llm-{r}",
                    "rater_kind": "human" if human else "model",
                    "round": "final",
                    "vote": vote,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def test_bundled_size_gives_every_record() -> None:
    """At the bundled size (its time is the ``stage2_statistics`` rule's benchmark file, read
    by ``make bench``; speed is never asserted in a test) every record is made."""
    votes = bundled_sized_votes()
    result = stage2_statistics(votes, settings({**CFG, "n_boot": 2000}))
    keys = {r.key for r in result.records}
    # 38 records, + 4 vs_rest records per model (5) + 3 kappa differences, + 3 x 2 group
    # means of kappa_max and kappa / kappa_max, their 3 differences and 3 alphas
    assert "stage2.final.kappa.human_model" in keys
    assert len(result.records) == 38 + 20 + 3 + 6 + 3 + 3
    rate = by_key(result.records)["stage2.final.relevance_rate.human_majority"]
    assert 0.15 < rate.value < 0.3


def test_caveated_model_is_reported_but_not_averaged() -> None:
    """A model with a configured caveat keeps its own records (with the caveat) but stays out
    of the group means and the mean over models; the matrix marks its cells."""
    cfg = {**CFG, "caveats": {"M2": "near-random test model"}}
    result = stage2_statistics(votes_frame(), settings(cfg))
    recs = by_key(result.records)
    assert recs["stage2.final.kappa_vs_majority.M2"].extra["caveat"] == "near-random test model"
    assert "caveat" not in recs["stage2.final.kappa_vs_majority.M1"].extra
    assert "stage2.final.kappa.model_model" not in recs  # one model left
    hm = np.mean([cohen_kappa_score(col(h), col("M1")) for h in "ABC"])
    assert recs["stage2.final.kappa.human_model"].value == pytest.approx(hm)
    assert "left out" in recs["stage2.final.kappa.human_model"].method
    assert recs["stage2.final.over_selection.mean_model"].value == pytest.approx(2.5)
    # the Holm family still holds every tested model
    assert recs["stage2.final.over_selection.M1"].extra["family_members"] == [
        "stage2.final.over_selection.M1",
        "stage2.final.over_selection.M2",
    ]
    table = kappa_matrix_table(result)
    assert not table.loc[table["rater_a"] == "M2", "in_group_means"].any()
    assert table.loc[(table["rater_a"] == "A") & (table["rater_b"] == "M1"), "in_group_means"].all()


def test_deleting_a_person_recomputes_the_others_references_but_not_the_gaps() -> None:
    """The annotators' jackknife values of the ceiling and a model's score against the rest
    are the statistics recomputed by hand without that person: its own references go, and
    every other person's reference on an item it voted on is rebuilt from the voters left (so
    a person's vote counts wherever it is part of a reference, not only where it is left
    out). Items have three or four voters, so references are dropped and rebuilt. A gap's
    value without a person is the mean of the other people's paired terms against the
    references as they were: its people part is the left-out people's own comparisons."""
    from analysis.stats.study_stage2 import (
        human_ceiling,
        round_totals,
        round_votes,
        scores_vs_rest,
    )

    rng = np.random.default_rng(3)
    humans = ["A", "B", "C", "D"]
    bias = {"A": 0.8, "B": -0.6, "C": 0.1, "D": 0.4}
    rows = []
    for i in range(60):
        truth = rng.random() < 0.4
        voters = humans if i % 3 == 0 else list(rng.choice(humans, 3, replace=False))
        for h in [*voters, "M"]:
            p = (0.8 if truth else 0.25) + (0.1 * bias[h] if h in bias else 0.05)
            rows.append(
                {
                    "item_id": f"i{i:02d}",
                    "user_id": f"u{i % 12}",
                    "prompt_id": f"p{i % 11}",
                    "rater": h,
                    "rater_kind": "model" if h == "M" else "human",
                    "round": "final",
                    "vote": bool(rng.random() < p),
                }
            )
    votes = pd.DataFrame(rows)
    cfg = settings({**CFG, "design": "declared"})
    rv = round_votes(votes, "final")
    rt = round_totals(rv, cfg)
    stats = {s.key: s for s in human_ceiling(rv, rt) + scores_vs_rest(rv, rt)}

    def by_hand(kept: list[str], voters: list[str] | None = None) -> dict[str, float]:
        """The statistics of the ``kept`` people, each against the majority of the other
        ``voters`` (default: the other kept people)."""
        voters = kept if voters is None else voters
        wide = votes[votes["rater"].isin([*voters, "M"])].pivot(
            index="item_id", columns="rater", values="vote"
        )
        wide = wide.astype(float)
        kappa, f1, model_kappa, gap = [], [], [], []
        for h in kept:
            others = wide[[x for x in voters if x != h]]
            n_rest, yes = others.notna().sum(axis=1), others.sum(axis=1)
            ok = wide[h].notna() & (n_rest >= 2) & (2 * yes != n_rest)
            ref = (2 * yes[ok] > n_rest[ok]).astype(int)
            own, model = wide.loc[ok, h].astype(int), wide.loc[ok, "M"].astype(int)
            kappa.append(cohen_kappa_score(own, ref))
            f1.append(f1_score(ref, own))
            model_kappa.append(cohen_kappa_score(model, ref))
            gap.append(model_kappa[-1] - kappa[-1])
        return {
            "ceiling.kappa_human_vs_rest": np.mean(kappa),
            "ceiling.f1_human_vs_rest": np.mean(f1),
            "vs_rest.kappa.M": np.mean(model_kappa),
            "vs_rest.gap_kappa.M": np.mean(gap),
        }

    assert by_hand(humans)["ceiling.kappa_human_vs_rest"] == pytest.approx(
        stats["stage2.final.ceiling.kappa_human_vs_rest"].estimate.value
    )
    left = [[x for x in humans if x != d] for d in humans]
    expected_values = {k: [by_hand(kept)[k] for kept in left] for k in by_hand(humans)}
    expected_values["vs_rest.gap_kappa.M"] = [
        by_hand(kept, humans)["vs_rest.gap_kappa.M"] for kept in left
    ]
    # the gap's deletions differ from the rebuilt references' (the test can tell them apart)
    assert expected_values["vs_rest.gap_kappa.M"] != pytest.approx(
        [by_hand(kept)["vs_rest.gap_kappa.M"] for kept in left]
    )
    for key, expected in expected_values.items():
        part = next(
            p for p in stats[f"stage2.final.{key}"].estimate.parts if p.cluster == "annotators"
        )
        assert np.asarray(part.jackknife).ravel() == pytest.approx(expected), key
