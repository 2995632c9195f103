"""Validation records and table: each estimate's interval against the simulated truth."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis import REPO_ROOT
from analysis.paper.validation import read_truth, render_validation_table, validation_records
from analysis.provenance import RecordError

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
    "stage3.mention_habit_vs_bias.spearman": {
        "value": 0.9,
        "ci_low": -0.17,
        "ci_high": 0.99,
        "fmt": ".2f",
    },
    "data.n_users": {"value": 90, "ci_low": None, "ci_high": None, "fmt": ",d"},
}
TRUTH = {
    "stage2.final.kappa.human_human": {"value": 0.429, "how": "closed form", "in_coverage": True},
    "stage3.mention_delta.human": {"value": 0.026, "how": "large draw", "in_coverage": True},
    "stage2.final.relevance_rate.sim-llm-e": {"value": 0.5753, "how": "x", "in_coverage": True},
    "stage3.mention_habit_vs_bias.spearman": {"value": 0.9, "how": "x", "in_coverage": False},
    "stage1.acceptance_rate.real": {"value": 0.51, "how": "x", "in_coverage": True},
    "data.n_users": {"value": 90, "how": "x", "in_coverage": True},
}


def _numbers(records) -> dict:
    out = {k: dict(v) for k, v in ESTIMATES.items()}
    for r in records:
        out[r.key] = {"value": r.value, "fmt": r.fmt, "ci_low": r.ci_low, "ci_high": r.ci_high}
    return out


def test_records_say_whether_each_interval_holds_the_truth() -> None:
    recs = {r.key: r for r in validation_records(ESTIMATES, TRUTH)}
    assert recs["validation.stage2.final.kappa.human_human.covered"].value == 1
    assert recs["validation.stage2.final.relevance_rate.sim-llm-e.covered"].value == 1
    assert recs["validation.stage2.final.kappa.human_human.truth"].value == pytest.approx(0.429)
    # the truth is printed like its estimate
    assert recs["validation.stage2.final.relevance_rate.sim-llm-e.truth"].fmt == ".1%"
    # outside the coverage study: a truth, no verdict; no estimate or no interval: nothing
    assert "validation.stage3.mention_habit_vs_bias.spearman.truth" in recs
    assert "validation.stage3.mention_habit_vs_bias.spearman.covered" not in recs
    assert not any("acceptance_rate" in k or "n_users." in k for k in recs)
    assert recs["validation.n_estimands"].value == 3
    assert recs["validation.n_covered"].value == 3


def test_a_missed_truth_is_not_covered() -> None:
    truth = {**TRUTH, "stage2.final.kappa.human_human": {"value": 0.5, "how": "x"}}
    recs = {r.key: r for r in validation_records(ESTIMATES, truth)}
    assert recs["validation.stage2.final.kappa.human_human.covered"].value == 0
    assert recs["validation.n_covered"].value == 2


def test_table_lists_truth_estimate_and_verdict() -> None:
    tex = render_validation_table(_numbers(validation_records(ESTIMATES, TRUTH)))
    assert r"\rc{validation.stage2.final.kappa.human_human.truth}" in tex
    assert r"\rcint{stage2.final.kappa.human_human}" in tex
    assert "outside the study" in tex and "yes" in tex
    assert r"\rc{validation.n_covered}" in tex
    assert "simulated" in tex.lower()


def test_real_data_has_no_truth_and_no_table() -> None:
    tex = render_validation_table(ESTIMATES)
    assert "no ground truth" in tex and "tabular" not in tex


def test_read_truth_names_file_and_estimand(tmp_path: Path) -> None:
    bad = tmp_path / "truth.json"
    bad.write_text(json.dumps({"estimands": {"a.b": {"how": "x"}}}))
    with pytest.raises(RecordError, match=r"truth\.json.*'a\.b'.*value"):
        read_truth(bad)
    bad.write_text("{")
    with pytest.raises(RecordError, match="not valid JSON"):
        read_truth(bad)


def test_committed_truth_reads() -> None:
    truth = read_truth(REPO_ROOT / "data" / "raw" / "bundled" / "truth.json")
    assert "stage2.final.kappa.human_human" in truth
