"""Validation records and tables: truths beside estimates, coverage across simulated worlds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from analysis import REPO_ROOT
from analysis.paper.validation import (
    CoverageWorlds,
    coverage_records,
    coverage_summary,
    family_of,
    read_coverage_worlds,
    read_truth,
    recovery_records,
    render_recovery_table,
    render_validation_table,
    validation_records,
)
from analysis.provenance import RecordError
from analysis.stats.coverage import interval_coverage, pooled_coverage
from tests.settings_defaults import stats_settings

ESTIMATES = {
    "stage2.final.kappa.human_human": {
        "value": 0.43,
        "ci_low": 0.40,
        "ci_high": 0.45,
        "fmt": ".2f",
    },
    "stage3.mention_delta.human": {"value": 0.02, "ci_low": -0.13, "ci_high": 0.18, "fmt": "+.2f"},
    "stage2.final.relevance_rate.sim-llm-e": {
        "value": 0.592,
        "ci_low": 0.574,
        "ci_high": 0.610,
        "fmt": ".1%",
    },
    "data.n_users": {"value": 90, "ci_low": None, "ci_high": None, "fmt": ",d"},
}
TRUTH = {
    "stage2.final.kappa.human_human": {"value": 0.429, "how": "closed form", "in_coverage": True},
    "stage3.mention_delta.human": {"value": 0.026, "how": "large draw", "in_coverage": True},
    "stage2.final.relevance_rate.sim-llm-e": {"value": 0.5753, "how": "x", "in_coverage": True},
    "stage1.acceptance_rate.real": {"value": 0.51, "how": "x", "in_coverage": True},
}
N = 400


def _numbers(records) -> dict:
    out = {k: dict(v) for k, v in ESTIMATES.items()}
    for r in records:
        out[r.key] = {
            "value": r.value,
            "fmt": r.fmt,
            "ci_low": r.ci_low,
            "ci_high": r.ci_high,
            "n": r.n,
            "extra": r.extra,
        }
    return out


def _rows(truth: np.ndarray, half_width: float, spread: float, seed: int) -> np.ndarray:
    """Worlds' [value, low, high, truth] of a normal estimator with a fixed interval width."""
    values = truth + np.random.default_rng(seed).normal(0.0, spread, len(truth))
    return np.column_stack([values, values - half_width, values + half_width, truth])


def _worlds() -> CoverageWorlds:
    """Users-only intervals too narrow where prompts matter; the design's nominal."""
    truth = np.full(N, 0.429)
    moving = 0.5 + np.random.default_rng(9).normal(0, 0.05, N)  # conditional on fixed models
    design = {
        # nominal: half width 1.96 sd
        "stage2.final.kappa.human_human": _rows(truth, 0.0196, 0.01, 1),
        "stage2.final.relevance_rate.sim-llm-e": _rows(moving, 0.0196, 0.01, 2),
        # far too wide: half width 4 sd -> covers all
        "stage1.acceptance_rate.overall": _rows(np.full(N, 0.58), 0.04, 0.01, 3),
    }
    user_only = {
        # far too narrow: half width 0.5 sd -> covers about 38%
        "stage2.final.kappa.human_human": _rows(truth, 0.005, 0.01, 1),
        "stage2.final.relevance_rate.sim-llm-e": _rows(moving, 0.0196, 0.01, 2),
        "stage1.acceptance_rate.overall": _rows(np.full(N, 0.58), 0.04, 0.01, 3),
    }
    index = {k: np.arange(N) for k in design}
    return CoverageWorlds(
        n_worlds=N,
        seeds=(10_000, 10_000 + N - 1),
        n_boot=2000,
        rows={"design": design, "user_only": user_only},
        world={"design": index, "user_only": dict(index)},
    )


def test_truth_records_are_printed_like_their_estimate() -> None:
    recs = {r.key: r for r in validation_records(ESTIMATES, TRUTH)}
    assert recs["validation.stage2.final.kappa.human_human.truth"].value == pytest.approx(0.429)
    assert recs["validation.stage2.final.relevance_rate.sim-llm-e.truth"].fmt == ".1%"
    # no estimate: no truth record; and no verdict computed on this one world
    assert not any("acceptance_rate" in k for k in recs)
    assert not any(k.endswith(".covered") or k.startswith("validation.n_") for k in recs)


def test_read_truth_names_file_and_estimand(tmp_path: Path) -> None:
    bad = tmp_path / "truth.json"
    bad.write_text(json.dumps({"estimands": {"a.b": {"how": "x"}}}))
    with pytest.raises(RecordError, match=r"truth\.json.*'a\.b'.*value"):
        read_truth(bad)
    bad.write_text("{")
    with pytest.raises(RecordError, match="not valid JSON"):
        read_truth(bad)


def test_committed_truth_reads_with_its_fixed_factors_and_effect_sizes() -> None:
    path = REPO_ROOT / "data" / "raw" / "bundled" / "truth.json"
    truth = read_truth(path)
    assert "stage2.final.kappa_diff.model_model_minus_human_model" in truth
    doc = json.loads(path.read_text())
    assert set(doc["fixed_factors"]["llm_offsets"]) == {f"sim-llm-{c}" for c in "abcde"}
    assert {e["size_from"] for e in doc["random_effects"].values()} == {"data", "stated"}


def test_interval_coverage_uses_each_worlds_own_truth() -> None:
    truth = 0.5 + np.random.default_rng(0).normal(0, 0.2, N)
    rows = _rows(truth, 0.0196, 0.01, 5)
    assert interval_coverage(rows[:, :3], truth).coverage == pytest.approx(0.95, abs=0.03)
    # against one pooled truth the same intervals would almost never cover
    assert interval_coverage(rows[:, :3], 0.5).coverage < 0.2


def test_pooled_coverage_resamples_worlds_and_tests_the_nominal_level() -> None:
    rng = np.random.default_rng(1)
    nominal = (rng.random((N, 20)) < 0.95).astype(float)
    res = pooled_coverage(nominal)
    assert res.mc_low < 0.95 < res.mc_high and res.p_vs_nominal > 0.01 and res.verdict == "ok"
    # estimands of one world that miss together: a wider interval than independence would give
    shared = np.repeat((rng.random((N, 1)) < 0.95).astype(float), 20, axis=1)
    wide = pooled_coverage(shared)
    assert wide.mc_high - wide.mc_low > 2 * (res.mc_high - res.mc_low)
    low = pooled_coverage((rng.random((N, 20)) < 0.90).astype(float))
    assert low.verdict == "under-covers" and low.p_vs_nominal < 1e-6
    # a world without an estimate for an estimand (NaN) is left out of it
    gaps = nominal.copy()
    gaps[:10, 0] = np.nan
    assert pooled_coverage(gaps).estimands == 20


def test_pooled_coverage_at_a_boundary_is_exact_over_worlds() -> None:
    # 8 worlds that each cover all their estimands: every resample of worlds is 1, so the
    # percentile interval would be [1, 1]; the exact interval of 8 worlds out of 8 is not
    every = pooled_coverage(np.ones((8, 2)))
    assert every.exact and every.coverage == 1.0 and every.mc_high == 1.0
    assert every.mc_low == pytest.approx(0.025 ** (1 / 8))
    none = pooled_coverage(np.zeros((8, 2)))
    assert none.exact and none.mc_low == 0.0 and none.mc_high == pytest.approx(1 - 0.025 ** (1 / 8))
    assert not pooled_coverage(np.array([[1.0, 0.0]] * 8)).exact


def test_conservative_designs_may_over_cover_only_when_not_too_wide() -> None:
    rows = _rows(np.full(N, 0.58), 0.04, 0.01, 3)[:, :3]  # 4 sd half width: 2.04 x spread
    assert interval_coverage(rows, 0.58).verdict == "over-covers"
    assert interval_coverage(rows, 0.58, conservative=True).verdict == "over-covers"
    snug = _rows(np.full(N, 0.58), 0.0235, 0.01, 3)[:, :3]  # 1.2 x spread, covers ~98.2%
    cov = interval_coverage(snug, 0.58, conservative=True)
    assert cov.mc_low > 0.97 or cov.verdict == "ok"
    if cov.mc_low > 0.97:
        assert cov.verdict == "conservative"


def test_summary_sets_users_only_beside_the_design() -> None:
    res = coverage_summary(_worlds())
    kappa = res["estimands"]["stage2.final.kappa.human_human"]
    assert kappa["design"]["verdict"] == "ok"
    assert kappa["user_only"]["verdict"] == "under-covers" and kappa["user_only"]["coverage"] < 0.5
    assert res["user_only_under_floor"] == ["stage2.final.kappa.human_human"]
    assert res["estimands"]["stage1.acceptance_rate.overall"]["design"]["verdict"] == "over-covers"
    assert not res["targets_met"]
    assert res["target_misses"][0].startswith("stage1.acceptance_rate.overall")
    assert set(res["families"]) == {"stage1_rates", "stage2_rates", "stage2_kappa"}


def test_coverage_records_and_the_side_by_side_table() -> None:
    recs = {r.key: r for r in coverage_records(_worlds())}
    ok = recs["validation.stage2.final.kappa.human_human.coverage"]
    assert ok.extra["verdict"] == "ok" and ok.n == N
    assert ok.ci_low < 0.95 < ok.ci_high
    assert ok.extra["width_to_spread"] == pytest.approx(1.0, abs=0.1)
    narrow = recs["validation.stage2.final.kappa.human_human.coverage_user_only"]
    assert narrow.value < 0.5
    assert recs["validation.coverage.n_worlds"].value == N
    assert recs["validation.coverage.n_boot"].value == 2000
    assert recs["validation.coverage.n_findings"].value == 1
    assert recs["validation.coverage.n_user_only_under"].value == 1
    pooled = recs["validation.coverage.pooled"]
    assert pooled.ci_low <= pooled.value <= pooled.ci_high and pooled.n == 3
    assert 0 <= recs["validation.coverage.p_vs_nominal"].value <= 1
    assert "validation.coverage.family.stage2_kappa.pooled_user_only" in recs
    tex = render_validation_table(
        _numbers(validation_records(ESTIMATES, TRUTH) + list(recs.values()))
    )
    assert r"\rcint{validation.coverage.family.stage2_kappa.pooled_user_only}" in tex
    assert r"\rcint{validation.coverage.pooled}" in tex
    assert r"\code{stage1.acceptance\_rate.overall: over-covers}" in tex
    assert "shorter than" in tex  # 400 worlds
    assert r"\emph{Simulated data}" in tex  # every table of a simulated build says so


def test_a_family_whose_declared_design_under_covers_is_named_in_the_table_note() -> None:
    worlds = _worlds()
    assert {r.key: r for r in coverage_records(worlds)}[
        "validation.coverage.n_families_under_nominal"
    ].value == 0
    narrow = worlds.rows["user_only"]["stage2.final.kappa.human_human"]
    worlds.rows["design"]["stage2.final.kappa.human_human"] = narrow
    recs = {r.key: r for r in coverage_records(worlds)}
    under = recs["validation.coverage.n_families_under_nominal"]
    assert under.value == 1
    assert under.extra["families"] == {"stage2_kappa": "Stage 2: kappa group means, differences"}
    tex = render_validation_table(
        _numbers(validation_records(ESTIMATES, TRUTH) + list(recs.values()))
    )
    assert "wholly below 0.95): Stage 2: kappa group means, differences." in tex


def test_real_data_has_no_truth_and_no_table() -> None:
    tex = render_validation_table(ESTIMATES)
    assert "no ground truth" in tex and "tabular" not in tex


def test_families_cover_every_estimand_of_the_committed_truth() -> None:
    truth = read_truth(REPO_ROOT / "data" / "raw" / "bundled" / "truth.json")
    assert not [k for k, t in truth.items() if t["in_coverage"] and family_of(k) == "other"]


def _line(seed: int, **change) -> str:
    doc = {
        "seed": seed,
        "n_boot": 2000,
        "truth": {"a.b": 0.5},
        "intervals": {"design": {"a.b": [0.5, 0.4, 0.6]}, "user_only": {"a.b": [0.5, 0.45, 0.55]}},
    }
    doc.update(change)
    return json.dumps(doc) + "\n"


def test_coverage_worlds_reader_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "worlds.jsonl"
    short = {"design": {"a.b": [0.5, 0.4]}, "user_only": {"a.b": [0.5, 0.4, 0.6]}}
    path.write_text(_line(1) + _line(2, intervals=short))
    with pytest.raises(RecordError, match=r"worlds\.jsonl: line 2.*intervals\['design'\]"):
        read_coverage_worlds(path)
    path.write_text(_line(1) + _line(2, n_boot=300))
    with pytest.raises(RecordError, match="several B"):
        read_coverage_worlds(path)
    path.write_text(_line(1, truth={}))
    with pytest.raises(RecordError, match="has no truth"):
        read_coverage_worlds(path)
    path.write_text("{\n")
    with pytest.raises(RecordError, match="line 1 is not valid JSON"):
        read_coverage_worlds(path)
    path.write_text(_line(1) + _line(2))
    worlds = read_coverage_worlds(path)
    assert worlds.rows["design"]["a.b"].shape == (2, 4) and worlds.seeds == (1, 2)


def test_committed_coverage_worlds_read_and_match_the_truth_keys() -> None:
    worlds = read_coverage_worlds(REPO_ROOT / "benchmarks" / "coverage_worlds.jsonl")
    truth = read_truth(REPO_ROOT / "data" / "raw" / "bundled" / "truth.json")
    in_study = {k for k, t in truth.items() if t.get("in_coverage", True)}
    assert set(worlds.rows["design"]) == set(worlds.rows["user_only"])
    assert set(worlds.rows["design"]) <= in_study
    # the differences, ceilings, gaps and stage-1 kappa the claims use are in the study
    for key in (
        "stage2.final.kappa_diff.model_model_minus_human_model",
        "stage2.final.ceiling.kappa_human_vs_rest",
        "stage2.final.vs_rest.gap_f1.sim-llm-a",
        "stage3.judge_better_share_minus_human.sim-llm-a",
        "stage1.kappa.human_human",
    ):
        assert key in worlds.rows["design"], key


def test_recovery_across_worlds_by_hand() -> None:
    """Per family, the bias over (world, estimand) pairs with the t interval of the worlds'
    mean errors (five worlds: the delete-one jackknife over worlds, 4 degrees of freedom),
    the RMSE and the mean interval width, made by the record maker under its design."""
    from scipy import stats

    errors = {
        "stage2.final.kappa.human_human": [0.01, -0.02, 0.03, 0.00, 0.02],
        "stage2.final.kappa.model_model": [0.03, 0.00, -0.01, 0.02, 0.01],
    }
    half = {"stage2.final.kappa.human_human": 0.05, "stage2.final.kappa.model_model": 0.03}
    rows = {
        k: np.array([[0.4 + e, 0.4 + e - half[k], 0.4 + e + half[k], 0.4] for e in errs])
        for k, errs in errors.items()
    }
    rows["stage1.kappa.human_human"] = np.array([[0.3, 0.2, 0.4, 0.31]] * 4 + [[np.nan] * 4])
    index = {k: np.arange(5) for k in rows}
    worlds = CoverageWorlds(
        n_worlds=5,
        seeds=(1, 5),
        n_boot=2000,
        rows={"design": rows, "user_only": rows},
        world={"design": index, "user_only": index},
    )
    recs = {r.key: r for r in recovery_records(worlds, stats_settings())}
    stem = "validation.recovery.family.stage2_kappa."
    per_world = np.mean(list(errors.values()), axis=0)  # [0.02, -0.01, 0.01, 0.01, 0.015]
    bias = recs[stem + "bias"]
    assert bias.value == pytest.approx(0.009) and bias.n == 10
    t_half = stats.t.ppf(0.975, 4) * per_world.std(ddof=1) / np.sqrt(5)
    assert (bias.ci_low, bias.ci_high) == pytest.approx((0.009 - t_half, 0.009 + t_half))
    assert "design simulated_worlds: simulated worlds (5) random" in bias.method
    assert "t interval (4.0 degrees of freedom" in bias.method
    assert "delete-one jackknife over 5 simulated worlds" in bias.method
    all_errors = np.concatenate(list(errors.values()))
    assert recs[stem + "rmse"].value == pytest.approx(np.sqrt(np.mean(all_errors**2)))
    assert recs[stem + "mean_ci_width"].value == pytest.approx(0.08)
    assert recs[stem + "rmse"].ci_low >= 0
    # a world without the estimand is left out, not counted as an error of 0
    one = recs["validation.recovery.family.stage1_agreement.bias"]
    assert one.n == 4 and one.value == pytest.approx(-0.01)
    numbers = _numbers(list(recs.values()) + coverage_records(worlds))
    tex = render_recovery_table(numbers)
    assert rf"\rcint{{{stem}bias}}" in tex and rf"\rc{{{stem}rmse}}" in tex
    assert "too few worlds to bootstrap" in tex and r"\emph{Simulated data}" in tex
    assert "tabular" not in render_recovery_table(ESTIMATES)  # real data: no worlds
