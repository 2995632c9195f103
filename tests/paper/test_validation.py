"""Validation records and table: each estimate's interval against the simulated truth."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from analysis import REPO_ROOT
from analysis.paper.validation import (
    DIAGNOSED_CAUSES,
    coverage_records,
    read_coverage_worlds,
    read_truth,
    render_validation_table,
    validation_records,
)
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
        out[r.key] = {
            "value": r.value,
            "fmt": r.fmt,
            "ci_low": r.ci_low,
            "ci_high": r.ci_high,
            "extra": r.extra,
        }
    return out


def _worlds(n: int, truth: float, half_width: float, spread: float, seed: int) -> np.ndarray:
    """``n`` worlds' [value, low, high] of a normal estimator with a fixed interval width."""
    values = truth + np.random.default_rng(seed).normal(0.0, spread, n)
    return np.column_stack([values, values - half_width, values + half_width])


def _coverage_worlds() -> dict[str, np.ndarray]:
    return {
        # nominal: half width 1.96 sd
        "stage2.final.kappa.human_human": _worlds(400, 0.429, 0.0196, 0.01, 1),
        # far too narrow: half width 0.5 sd -> covers about 38%
        "stage3.mention_delta.human": _worlds(400, 0.026, 0.005, 0.01, 2),
        # far too wide: half width 4 sd -> covers all
        "stage1.acceptance_rate.overall": _worlds(400, 0.58, 0.04, 0.01, 3),
        # outside the coverage study: no coverage record even with worlds
        "stage3.mention_habit_vs_bias.spearman": _worlds(400, 0.9, 0.1, 0.01, 4),
    }


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


def test_coverage_records_find_narrow_and_wide_intervals() -> None:
    truth = {**TRUTH, "stage1.acceptance_rate.overall": {"value": 0.58, "how": "x"}}
    recs = {r.key: r for r in coverage_records(_coverage_worlds(), truth)}
    ok = recs["validation.stage2.final.kappa.human_human.coverage"]
    assert ok.extra["verdict"] == "ok" and ok.n == 400
    assert ok.ci_low < 0.95 < ok.ci_high and ok.ci_low <= ok.value <= ok.ci_high
    assert ok.extra["width_to_spread"] == pytest.approx(1.0, abs=0.1)
    narrow = recs["validation.stage3.mention_delta.human.coverage"]
    assert narrow.extra["verdict"] == "under-covers" and narrow.value < 0.5
    wide = recs["validation.stage1.acceptance_rate.overall.coverage"]
    assert wide.extra["verdict"] == "over-covers"
    assert wide.extra["width_to_spread"] == pytest.approx(4 / 1.96, rel=0.1)
    assert "validation.stage3.mention_habit_vs_bias.spearman.coverage" not in recs
    assert recs["validation.coverage.n_worlds"].value == 400
    found = recs["validation.coverage.n_findings"]
    assert found.value == 2
    assert found.extra["findings"] == [
        "stage1.acceptance_rate.overall",
        "stage3.mention_delta.human",
    ]


def test_table_shows_coverage_and_names_each_finding_with_its_cause(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cause = "the interval counts a spread the design does not have"
    monkeypatch.setitem(DIAGNOSED_CAUSES, "stage1.acceptance_rate.overall", cause)
    truth = {**TRUTH, "stage1.acceptance_rate.overall": {"value": 0.58, "how": "x"}}
    records = validation_records(ESTIMATES, truth) + coverage_records(_coverage_worlds(), truth)
    tex = render_validation_table(_numbers(records))
    assert "Across worlds" in tex
    assert r"\rcint{validation.stage2.final.kappa.human_human.coverage}" in tex
    assert r"\rc{validation.coverage.n_worlds}" in tex
    assert r"\textbf{under-covers}" in tex
    # a diagnosed finding prints its cause; an undiagnosed one says so
    assert rf"\code{{stage1.acceptance\_rate.overall}} over-covers ({cause})" in tex
    assert r"\code{stage3.mention\_delta.human} under-covers (cause not diagnosed)" in tex
    # without coverage worlds (a scaled or other simulated world) the column is absent
    assert "Across worlds" not in render_validation_table(
        _numbers(validation_records(ESTIMATES, truth))
    )


def test_coverage_worlds_reader_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "worlds.jsonl"
    path.write_text(
        json.dumps({"seed": 1, "estimates": {"a.b": [0.5, 0.4, 0.6]}})
        + "\n"
        + json.dumps({"seed": 2, "estimates": {"a.b": [0.5, 0.4]}})
        + "\n"
    )
    with pytest.raises(RecordError, match=r"worlds\.jsonl: line 2, estimates\['a\.b'\]"):
        read_coverage_worlds(path)
    path.write_text("{\n")
    with pytest.raises(RecordError, match="line 1 is not valid JSON"):
        read_coverage_worlds(path)
    path.write_text(json.dumps({"seed": 1, "estimates": {"a.b": [0.5, 0.4, 0.6]}}) + "\n")
    assert read_coverage_worlds(path)["a.b"].shape == (1, 3)


def test_committed_coverage_worlds_read_and_match_the_truth_keys() -> None:
    worlds = read_coverage_worlds(REPO_ROOT / "benchmarks" / "coverage_worlds.jsonl")
    truth = read_truth(REPO_ROOT / "data" / "raw" / "bundled" / "truth.json")
    in_study = {k for k, t in truth.items() if t.get("in_coverage", True)}
    assert set(worlds) <= set(truth) and in_study & set(worlds)
