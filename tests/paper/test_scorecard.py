"""The scorecard: published figures as data, verdicts computed, one source with the simulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from analysis import REPO_ROOT
from analysis.paper.scorecard import (
    DIFFERENT_METHOD,
    DIFFERS,
    NOT_IN_DATASET,
    PARTIAL,
    REPRODUCED,
    accept_interval,
    render_scorecard,
    scorecard_csv,
    scorecard_records,
    scorecard_rows,
)
from analysis.provenance import Record, attach_provenance
from analysis.settings import ConfigError, StudyConfig, from_params, load_study
from tests.settings_defaults import default_settings

STUDY_FILE = REPO_ROOT / "config" / "study" / "published.yaml"


def rec(value: float, low: float | None = None, high: float | None = None, n: int = 100) -> dict:
    return {"value": value, "ci_low": low, "ci_high": high, "n": n, "fmt": ".3f"}


def study(**entries: dict[str, Any]) -> StudyConfig:
    base = {"where": ["blog"], "fmt": ".3f", "aggregate": "one", "method": "same"}
    return from_params(
        StudyConfig,
        {
            "name": "t",
            "citation": "T",
            "published": {
                k: {"quantity": k, "published": k, **base, **v} for k, v in entries.items()
            },
        },
        "study",
    )


def verdicts(s: StudyConfig, numbers: dict, simulated: bool) -> dict[str, str]:
    return {r.name: r.verdict for r in scorecard_rows(s, numbers, simulated)}


def test_the_published_file_is_the_study_group_of_the_composed_config() -> None:
    composed = default_settings().study
    assert composed.published.keys() == load_study(STUDY_FILE).published.keys()
    assert composed.published["f1_best_model"].value == 0.515
    assert composed.published["f1_trained"].method == "different"


def test_tolerance_comes_from_the_published_precision() -> None:
    s = load_study(STUDY_FILE).published
    assert accept_interval(s["f1_best_model"]) == pytest.approx((0.5145, 0.5155))
    assert accept_interval(s["human_relevance_rate"]) == (0.15, 0.25)  # "about 20%"
    assert accept_interval(s["conversations"]) == (549.5, 550.5)  # counts are exact
    assert accept_interval(s["model_relevance_rate"]) == pytest.approx((0.395, 0.605))


def test_real_data_verdicts_use_the_published_precision_not_the_interval() -> None:
    s = study(x={"key": "a", "value": 0.515, "precision": 0.001})
    # a wide interval holding the published value does not make a real-data match
    assert verdicts(s, {"a": rec(0.514, 0.4, 0.6)}, simulated=False) == {"x": DIFFERS}
    assert verdicts(s, {"a": rec(0.5151, 0.4, 0.6)}, simulated=False) == {"x": REPRODUCED}
    # on a simulated build the question is the interval
    assert verdicts(s, {"a": rec(0.514, 0.4, 0.6)}, simulated=True) == {"x": REPRODUCED}
    assert verdicts(s, {"a": rec(0.53, 0.52, 0.54)}, simulated=True) == {"x": DIFFERS}


def test_partial_different_method_and_absent_are_computed() -> None:
    s = study(
        kappa={
            "key": "k.model_model",
            "value": 0.6,
            "precision": 0.01,
            "coverage": {"key": "rate.*", "expected": 5, "unit": "models"},
        },
        trained={"key": "clf.f1", "value": 0.641, "precision": 0.001, "method": "different"},
        gone={"key": "nowhere", "value": 1, "precision": 1},
    )
    numbers = {
        "k.model_model": rec(0.6),
        "rate.a": rec(0.4),
        "rate.b": rec(0.5),
        "clf.f1": rec(0.5),
    }
    assert verdicts(s, numbers, simulated=False) == {
        "kappa": PARTIAL,
        "trained": DIFFERENT_METHOD,
        "gone": NOT_IN_DATASET,
    }
    for m in "cde":
        numbers[f"rate.{m}"] = rec(0.5)
    assert verdicts(s, numbers, simulated=False)["kappa"] == REPRODUCED


def test_each_min_and_same_as_select_records_like_the_claims_language() -> None:
    s = study(
        rates={"key": "rate.*", "range": [0.4, 0.6], "precision": 0.01, "aggregate": "each"},
        worst={"key": "delta.*", "value": -0.39, "precision": 0.01, "aggregate": "min"},
        its_rate={"key": "rate.*", "value": 0.05, "precision": 0.01, "same_as": "worst"},
    )
    numbers = {
        "rate.a": rec(0.45),
        "rate.b": rec(0.70),
        "delta.a": rec(0.2),
        "delta.b": rec(-0.39),
    }
    rows = {r.name: r for r in scorecard_rows(s, numbers, simulated=False)}
    assert rows["rates.a"].verdict == REPRODUCED and rows["rates.b"].verdict == DIFFERS
    assert rows["worst"].key == "delta.b" and rows["worst"].verdict == REPRODUCED
    assert rows["its_rate"].key == "rate.b" and rows["its_rate"].verdict == DIFFERS


def test_verdict_records_print_their_label_and_leave_other_records_unchanged() -> None:
    s = study(x={"key": "a", "value": 0.5, "precision": 0.1})
    rows = scorecard_rows(s, {"a": rec(0.5, 0.4, 0.6)}, simulated=True)
    out = attach_provenance(scorecard_records(rows, s, True), rule="scorecard", inputs=[])
    assert out["repro.x.verdict"]["display"] == REPRODUCED
    assert out["repro.x.verdict"]["text"] == REPRODUCED and out["repro.x.verdict"]["value"] == 1
    assert out["repro.x.published"]["display"] == "x"  # as the study worded it
    plain = attach_provenance([Record("k", 0.5, ".2f", "m", "a:b")], rule="r", inputs=[])
    assert "text" not in plain["k"]  # records without text keep their bytes
    numbers = {"a": {**rec(0.5, 0.4, 0.6), "display": "0.500"}, **out}
    assert "| x | x | 0.500 [0.400, 0.600] | 100 | reproduced |" in render_scorecard(numbers, "md")
    assert json.loads(render_scorecard(numbers, "json"))[0]["verdict"] == REPRODUCED
    assert scorecard_csv(rows).splitlines()[0].startswith("name,quantity,published")


def test_an_entry_needs_one_value_and_one_precision(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="study.published.x.value/range"):
        study(x={"key": "a", "value": 1, "range": [0, 2], "precision": 1})
    with pytest.raises(ConfigError, match="same_as"):
        study(x={"key": "a", "value": 1, "precision": 1, "same_as": "nope"})


def test_the_simulator_reads_its_targets_from_the_published_file(tmp_path: Path) -> None:
    from analysis.simulation.parameters import STUDY_TARGETS, study_targets

    data = yaml.safe_load(STUDY_FILE.read_text(encoding="utf-8"))
    calibrated = {e["calibrates"]: e for e in data["published"].values() if "calibrates" in e}
    assert list(STUDY_TARGETS) == list(calibrated)
    assert STUDY_TARGETS["stage2.llm_yes_rate"] == 0.5  # the midpoint of "40-60%"
    data["published"]["acceptance"]["value"] = 0.61
    changed = tmp_path / "study.yaml"
    changed.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert study_targets(changed)["stage1.acceptance_rate"] == 0.61
