"""Stage-1 records on hand-checkable judgments: acceptance, the real-synthetic gap, agreement."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from analysis.stats.intervals import clopper_pearson
from analysis.stats.records import NOT_ESTIMABLE
from analysis.stats.resampling import plan
from analysis.stats.settings import StatsSettings
from analysis.stats.study_common import StudyDataError
from analysis.stats.study_stage1 import (
    JUDGMENTS,
    _judgments,
    acceptance_rates,
    flagged_attribute_shares,
    judgment_units,
    stage1_records,
)
from tests.settings_defaults import stats_settings


#: a rule-style test config -> the typed settings the statistics take (as a rule script does)
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
    "seed": 11,
}

USERS = pd.DataFrame(
    {
        "user_id": ["u1", "u2", "u3", "u4"],
        "source": ["wildchat", "wildchat", "synthetic:cupid", "synthetic:prefeval"],
        "source_kind": ["real", "real", "synthetic", "synthetic"],
    }
)
# attribute: user, labels of humans A B C, verifier V   (a = accepted, u = uncertain, r = rejected)
JUDGED = {
    "a1": ("u1", "aar", "a"),
    "a2": ("u1", "urr", "r"),
    "a3": ("u2", "aua", "a"),
    "a4": ("u2", "rrr", "a"),
    "a5": ("u3", "aaa", "a"),
    "a6": ("u3", "aau", "u"),
    "a7": ("u4", "aaa", "a"),
    "a8": ("u4", "ara", "r"),
}
NAMES = {"a": "accepted", "u": "uncertain", "r": "rejected"}


def judgments(with_verifier: bool = True, round_name: str = "final") -> pd.DataFrame:
    rows = []
    for attr, (user, humans, verifier) in JUDGED.items():
        labels = list(zip("ABC", humans, strict=True))
        if with_verifier:
            labels.append(("V", verifier))
        for rater, code in labels:
            rows.append(
                {
                    "attribute_id": attr,
                    "user_id": user,
                    "rater": rater,
                    "rater_kind": "model" if rater == "V" else "human",
                    "raw_rater": rater,
                    "round": round_name,
                    "label": NAMES[code],
                    "note": None,
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def recs() -> dict:
    return {r.key: r for r in stage1_records(judgments(), USERS, settings(CFG))}


def human_labels(rater: str) -> list[str]:
    return [h["ABC".index(rater)] for _, h, _ in JUDGED.values()]


def test_acceptance_rates_by_hand(recs: dict) -> None:
    # real users (a1-a4): accepted 2 + 0 + 2 + 0 = 4 of 12; synthetic (a5-a8): 3+2+3+2 = 10 of 12
    assert recs["stage1.acceptance_rate.real"].value == pytest.approx(4 / 12)
    assert recs["stage1.acceptance_rate.synthetic"].value == pytest.approx(10 / 12)
    assert recs["stage1.acceptance_rate.overall"].value == pytest.approx(14 / 24)
    assert recs["stage1.acceptance_rate.wildchat"].value == pytest.approx(4 / 12)
    assert recs["stage1.acceptance_rate.synthetic:cupid"].value == pytest.approx(5 / 6)
    assert recs["stage1.acceptance_rate.synthetic:prefeval"].value == pytest.approx(5 / 6)
    assert recs["stage1.acceptance_rate.overall"].n == 24
    # the verifier's judgments are not human acceptance
    assert recs["stage1.acceptance_rate.overall"].extra["accepted"] == 14


def test_problematic_gap(recs: dict) -> None:
    gap = recs["stage1.problematic_gap_real_vs_synthetic"]
    assert gap.value == pytest.approx((1 - 4 / 12) - (1 - 10 / 12))
    assert gap.extra["problematic_real"] == pytest.approx(8 / 12)
    # the two users of each kind accept alike here: every resample gives the same gap, so it
    # is not estimable (no interval of width zero); its test is the family of one
    assert gap.ci_low is None and gap.text == NOT_ESTIMABLE and "p_value" not in gap.extra


def test_human_agreement(recs: dict) -> None:
    pairs = [("A", "B"), ("A", "C"), ("B", "C")]
    expected = np.mean([cohen_kappa_score(human_labels(a), human_labels(b)) for a, b in pairs])
    assert recs["stage1.kappa.human_human"].value == pytest.approx(expected)
    codes = {"a": 0, "u": 1, "r": 2}
    data = np.array([[codes[c] for c in human_labels(r)] for r in "ABC"], dtype=float)
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert recs["stage1.alpha.human"].value == pytest.approx(alpha)
    assert recs["stage1.alpha.human"].n == 8


def test_verifier_agreement_and_ceiling(recs: dict) -> None:
    accepted = {r: [int(c == "a") for c in human_labels(r)] for r in "ABC"}
    majority = [int(sum(accepted[r][i] for r in "ABC") >= 2) for i in range(8)]
    verifier = [int(v == "a") for _, _, v in JUDGED.values()]
    rec = recs["stage1.verifier_agreement.V"]
    assert rec.value == pytest.approx(cohen_kappa_score(verifier, majority))
    assert rec.n == 8
    ceiling = []
    for r in "ABC":
        rest = [o for o in "ABC" if o != r]
        # the majority of the two others; a 1-1 tie has no majority and is dropped
        keep = [i for i in range(8) if accepted[rest[0]][i] == accepted[rest[1]][i]]
        ref = [accepted[rest[0]][i] for i in keep]
        ceiling.append(cohen_kappa_score([accepted[r][i] for i in keep], ref))
    assert recs["stage1.ceiling.kappa_human_vs_rest"].value == pytest.approx(np.mean(ceiling))


def test_records_are_complete(recs: dict) -> None:
    for key, rec in recs.items():
        assert rec.code.startswith("analysis.stats.study_stage1:"), key
        assert rec.extra["round"] == "final"
        assert "design one-way" in rec.method and rec.seed == 11, key
        if key.startswith("stage1.acceptance_rate."):  # shares of 4 users: exact
            assert "Clopper-Pearson (exact)" in rec.method and rec.extra["exact"], key
        elif rec.text is None:
            assert "cluster bootstrap over users (4), B=300" in rec.method, key


def test_keys_absent_without_verifier_or_second_kind() -> None:
    keys = {r.key for r in stage1_records(judgments(with_verifier=False), USERS, settings(CFG))}
    assert not any("verifier" in k or "ceiling" in k for k in keys)
    real_only = judgments(with_verifier=False)
    real_only = real_only[real_only["user_id"].isin(["u1", "u2"])]
    keys = {r.key for r in stage1_records(real_only, USERS, settings(CFG))}
    assert "stage1.acceptance_rate.real" in keys
    assert "stage1.acceptance_rate.synthetic" not in keys
    assert "stage1.problematic_gap_real_vs_synthetic" not in keys
    assert stage1_records(judgments().iloc[:0], USERS, settings(CFG)) == []


def test_single_human_has_no_agreement() -> None:
    one = judgments(with_verifier=False)
    keys = {r.key for r in stage1_records(one[one["rater"] == "A"], USERS, settings(CFG))}
    assert "stage1.acceptance_rate.overall" in keys
    assert "stage1.kappa.human_human" not in keys and "stage1.alpha.human" not in keys


def test_final_round_is_reported_and_pilot_not_pooled() -> None:
    pilot = judgments(with_verifier=False, round_name="pilot").assign(label="rejected")
    both = pd.concat([judgments(), pilot], ignore_index=True)
    recs = {r.key: r for r in stage1_records(both, USERS, settings(CFG))}
    assert recs["stage1.acceptance_rate.overall"].value == pytest.approx(14 / 24)
    only_pilot = {r.key: r for r in stage1_records(pilot, USERS, settings(CFG))}
    assert only_pilot["stage1.acceptance_rate.overall"].value == 0.0
    assert only_pilot["stage1.acceptance_rate.overall"].extra["round"] == "pilot"


def test_item_clusters_resample_attributes() -> None:
    recs = {
        r.key: r for r in stage1_records(judgments(), USERS, settings({**CFG, "cluster": "prompt"}))
    }
    assert "over users (4)" in recs["stage1.kappa.human_human"].method  # no prompt: users
    recs = {
        r.key: r for r in stage1_records(judgments(), USERS, settings({**CFG, "cluster": "item"}))
    }
    # attributes of each source resampled within it (4 of wildchat, 2 of each benchmark)
    assert (
        "over attributes (8) within the 3 strata of source (Rao-Wu)"
        in recs["stage1.kappa.human_human"].method
    )


def test_bad_input() -> None:
    bad = judgments()
    bad.loc[2, "label"] = "ok"
    with pytest.raises(StudyDataError, match="row 2: field 'label' = 'ok'"):
        stage1_records(bad, USERS, settings(CFG))
    with pytest.raises(StudyDataError, match="not in the users table"):
        stage1_records(judgments(), USERS.iloc[:2], settings(CFG))
    dup = pd.concat([judgments(), judgments().iloc[[5]]], ignore_index=True)
    with pytest.raises(StudyDataError, match="attribute_judgments: rows"):
        stage1_records(dup, USERS, settings(CFG))


REASONS = ("overgeneralization", "task_context_confusion", "other")


def with_reasons(frame: pd.DataFrame) -> pd.DataFrame:
    """Each human flag (non-accepted judgment) gets a reason in turn; the rest none."""
    out = frame.assign(flag_reason=None)
    flags = out.index[(out["rater_kind"] == "human") & (out["label"] != "accepted")]
    for i, row in enumerate(flags):
        out.loc[row, "flag_reason"] = REASONS[min(i % 4, 2)]  # o, t, x, x, o, t, x, x, ...
    return out


def test_flag_reason_shares_by_hand() -> None:
    frame = with_reasons(judgments())
    flags = frame[(frame["rater_kind"] == "human") & (frame["label"] != "accepted")]
    assert len(flags) == 10  # a1 1, a2 3, a3 1, a4 3, a6 1, a8 1
    recs = {r.key: r for r in stage1_records(frame, USERS, settings(CFG))}
    expected = flags["flag_reason"].value_counts(normalize=True)
    for reason in REASONS:
        rec = recs[f"stage1.flags.share.{reason}"]
        assert rec.value == pytest.approx(expected[reason])
        assert rec.n == 10 and rec.ci_low <= rec.value <= rec.ci_high
        assert "not read from its note" in rec.method
        assert rec.extra["counts"] == flags["flag_reason"].value_counts().to_dict()
    total = sum(recs[f"stage1.flags.share.{r}"].value for r in REASONS)
    assert total == pytest.approx(1.0)
    # flags are shares of the design's users like the acceptance rates (4: exact)
    assert "the design's variance, 4 units" in recs["stage1.flags.share.other"].method


def test_flagged_attributes_are_counted_by_attribute() -> None:
    """The study counts flagged *attributes*: an attribute with three flags counts once, and
    one whose flags give two reasons is split between them in proportion to its flags."""
    frame = with_reasons(judgments())
    flags = frame[(frame["rater_kind"] == "human") & (frame["label"] != "accepted")]
    recs = {r.key: r for r in stage1_records(frame, USERS, settings(CFG))}
    count = recs["stage1.flags.n_attributes"]
    assert count.value == flags["attribute_id"].nunique() == 6  # 10 flags on 6 attributes
    assert count.ci_low is None and count.unit == "attributes"
    by_hand = (
        flags.groupby("attribute_id")["flag_reason"].value_counts(normalize=True).groupby(level=1)
    ).sum() / 6
    for reason in REASONS:
        rec = recs[f"stage1.flags.attribute_share.{reason}"]
        assert rec.value == pytest.approx(by_hand.get(reason, 0.0))
        assert rec.n == 6 and rec.unit == "attributes"
        assert rec.ci_low <= rec.value <= rec.ci_high
    total = sum(recs[f"stage1.flags.attribute_share.{r}"].value for r in REASONS)
    assert total == pytest.approx(1.0)
    # the judgment-level shares weigh the three-flag attributes three times: they differ
    assert any(
        recs[f"stage1.flags.attribute_share.{r}"].value
        != pytest.approx(recs[f"stage1.flags.share.{r}"].value)
        for r in REASONS
    )


def test_deleting_an_annotator_reweighs_the_other_flags_of_its_attributes() -> None:
    """The declared design's annotator deletions of the attribute shares are the shares
    recomputed without that annotator (its flags gone, the others' re-weighed)."""
    frame = with_reasons(judgments())
    df, round_name = _judgments(frame, USERS)
    human = df[df["rater_kind"] == "human"].reset_index(drop=True)
    people = plan(stats_settings(n_boot=50), JUDGMENTS, judgment_units(human))
    assert people.annotators
    shares, _ = flagged_attribute_shares(human, round_name, people)
    for stat in shares:
        part = next(p for p in stat.estimate.parts if p.cluster == "annotators")
        for i, rater in enumerate(people.annotators):
            rest = human[human["rater"] != rater].reset_index(drop=True)
            again, _ = flagged_attribute_shares(
                rest, round_name, plan(stats_settings(n_boot=50), JUDGMENTS, judgment_units(rest))
            )
            want = next(a for a in again if a.key == stat.key).estimate.estimate
            assert part.jackknife[i] == pytest.approx(float(want)), (stat.key, rater)


def test_flags_without_a_reason_are_counted_not_guessed() -> None:
    frame = with_reasons(judgments())
    first = frame.index[frame["flag_reason"].notna()][0]
    frame.loc[first, "flag_reason"] = None
    frame.loc[first, "note"] = "Overgeneralized from a single request."  # notes are not read
    rec = {r.key: r for r in stage1_records(frame, USERS, settings(CFG))}[
        "stage1.flags.share.other"
    ]
    assert rec.n == 9 and rec.extra["without_reason"] == 1
    assert "1 non-accepted judgments carry no reason" in rec.method


def test_no_reason_field_no_flag_keys() -> None:
    for frame in (judgments(), judgments().assign(flag_reason=None)):
        keys = {r.key for r in stage1_records(frame, USERS, settings(CFG))}
        assert not any(k.startswith("stage1.flags.") for k in keys)


@pytest.mark.parametrize(
    ("label", "reason", "message"),
    [
        ("accepted", "other", "judgment that accepts the attribute"),
        ("rejected", "rude", "field 'flag_reason' = 'rude' is not one of"),
    ],
)
def test_bad_flag_reason_is_an_error(label: str, reason: str, message: str) -> None:
    frame = judgments().assign(flag_reason=None)
    frame.loc[0, ["label", "flag_reason"]] = [label, reason]
    with pytest.raises(StudyDataError, match=message):
        stage1_records(frame, USERS, settings(CFG))


def test_resamples_keep_each_source_s_number_of_users() -> None:
    """Users of one source all accept, of the other all reject, two attributes each: with each
    source's number of users fixed in every resample, as the study drew them, the overall
    share cannot move, so its interval is the point (resampling all users together would mix
    the sources anew each time); the method says the resamples were stratified."""
    users = pd.DataFrame(
        {
            "user_id": [f"u{i}" for i in range(6)],
            "source": ["wildchat"] * 3 + ["synthetic:cupid"] * 3,
            "source_kind": ["real"] * 3 + ["synthetic"] * 3,
        }
    )
    rows = [
        {
            "attribute_id": f"a{i}{k}",
            "user_id": f"u{i}",
            "rater": rater,
            "rater_kind": "human",
            "raw_rater": rater,
            "round": "final",
            "label": "rejected" if i < 3 else "accepted",
            "note": None,
        }
        for i in range(6)
        for k in range(2)
        for rater in "AB"
    ]
    frame = pd.DataFrame(rows)
    recs = {r.key: r for r in stage1_records(frame, users, settings(CFG))}
    overall = recs["stage1.acceptance_rate.overall"]
    assert overall.value == 0.5
    # a share that never moves is exact on the design's six users, not the point
    assert (overall.ci_low, overall.ci_high) == pytest.approx(clopper_pearson(3, 6))
    assert "users (6) within the 2 strata of source" in recs["stage1.kappa.human_human"].method
    human, _ = _judgments(frame, users)
    (statistic, *_) = acceptance_rates(
        human, "final", plan(settings(CFG), JUDGMENTS, judgment_units(human))
    )
    (part,) = statistic.estimate.parts
    assert part.stratified_by == "source" and np.all(part.replicates == 0.5)


def test_deleting_a_person_rebuilds_the_others_ceiling_references() -> None:
    """The annotators' jackknife values of the verifier ceiling are the ceiling recomputed
    without each person: its own decisions go, and every other person's leave-one-out
    reference on an attribute it judged is rebuilt from the people left (a first-order
    deletion kept the others' references, its vote included). Deleting D is worked by hand
    below; every deletion is checked against the records of the data without that person."""
    from analysis.stats.study_stage1 import verifier_agreement

    # attribute: user, accept decisions of A B C D ("-": not judged); verifier V accepts all
    table = {
        "x1": ("u1", "1110"),
        "x2": ("u1", "0011"),
        "x3": ("u1", "1011"),
        "x4": ("u2", "0001"),
        "x5": ("u2", "110-"),
        "x6": ("u3", "010-"),
        "x7": ("u3", "111-"),
        "x8": ("u4", "-001"),
        "x9": ("u4", "1-00"),
        "x10": ("u4", "01-1"),
    }
    rows = [
        {
            "attribute_id": attr,
            "user_id": user,
            "rater": rater,
            "rater_kind": "model" if rater == "V" else "human",
            "raw_rater": rater,
            "round": "final",
            "label": "accepted" if code == "1" else "rejected",
            "note": None,
        }
        for attr, (user, codes) in table.items()
        for rater, code in zip("ABCDV", codes + "1", strict=True)
        if code != "-"
    ]
    frame = pd.DataFrame(rows)
    cfg = stats_settings(n_boot=50, design="declared", min_shared_items=1)

    def ceiling_statistic(data: pd.DataFrame):
        df, round_name = _judgments(data, USERS)
        per_attr = df.groupby("attribute_id")[["user_id", "source"]].first()
        stats = verifier_agreement(df, round_name, cfg, per_attr)
        return next(s for s in stats if s.key == "stage1.ceiling.kappa_human_vs_rest")

    part = next(p for p in ceiling_statistic(frame).estimate.parts if p.cluster == "annotators")
    jackknife = np.asarray(part.jackknife).ravel()
    assert jackknife.size == 4
    # without D, x1-x7 keep three people (each person's reference: the two others, a 1-1
    # tie dropped) and x8-x10 two (one other person is no reference):
    #   A vs (B, C): x1 1|1, x4 0|0, x7 1|1              (x2, x3, x5, x6 tie)
    #   B vs (A, C): x1 1|1, x3 0|1, x4 0|0, x6 1|0, x7 1|1   (x2, x5 tie)
    #   C vs (A, B): x1 1|1, x2 1|0, x4 0|0, x5 0|1, x7 1|1   (x3, x6 tie)
    by_hand = np.mean(
        [
            cohen_kappa_score([1, 0, 1], [1, 0, 1]),
            cohen_kappa_score([1, 0, 0, 1, 1], [1, 1, 0, 0, 1]),
            cohen_kappa_score([1, 1, 0, 0, 1], [1, 0, 0, 1, 1]),
        ]
    )
    assert jackknife[3] == pytest.approx(by_hand)
    for i, person in enumerate("ABCD"):
        without = ceiling_statistic(frame[frame["rater"] != person]).estimate.estimate
        assert jackknife[i] == pytest.approx(float(np.ravel(without)[0])), person
