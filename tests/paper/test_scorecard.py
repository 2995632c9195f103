"""The scorecard: published figures as data, verdicts computed, one source with the simulator."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from analysis import REPO_ROOT
from analysis.paper.scorecard import (
    DIFFERENT_METHOD,
    DIFFERS,
    INCONCLUSIVE,
    NOT_IN_DATASET,
    PARTIAL,
    REPRODUCED,
    VERDICT_CODES,
    accept_interval,
    published_span,
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


BASE = {
    "where": ["blog"],
    "fmt": ".3f",
    "aggregate": "one",
    "method": "same",
    "stage": "stage2",
    "unit": "items",
    "release": "yes",
    "release_note": "released",
    "margin": 0.05,
    "margin_reason": "a test margin",
}


def study(**entries: dict[str, Any]) -> StudyConfig:
    published = {}
    for k, v in entries.items():
        entry = {"quantity": k, "published": k, **BASE, **v}
        if entry["method"] == "different":
            entry.pop("margin", None)
            entry.pop("margin_reason", None)
        published[k] = entry
    return from_params(
        StudyConfig,
        {"name": "t", "citation": "T", "release_source": "the test", "published": published},
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
    s = study(x={"key": "a", "value": 0.515, "precision": 0.001, "real_data_rule": "rounding"})
    # the study's own data by the study's method: a wide interval holding the published value
    # does not make a match, the estimate must round to the figure
    assert verdicts(s, {"a": rec(0.514, 0.4, 0.6)}, simulated=False) == {"x": DIFFERS}
    assert verdicts(s, {"a": rec(0.5151, 0.4, 0.6)}, simulated=False) == {"x": REPRODUCED}
    # a simulated build is never the study's data: the margin decides, and a wide interval
    # holding the published value is inconclusive, not reproduced
    assert verdicts(s, {"a": rec(0.5151, 0.4, 0.6)}, simulated=True) == {"x": INCONCLUSIVE}
    assert verdicts(s, {"a": rec(0.514, 0.50, 0.53)}, simulated=True) == {"x": REPRODUCED}


def test_every_verdict_is_produced_by_its_rule() -> None:
    """Each verdict of the scorecard, from one table of inputs (margin 0.05 around 0.5)."""
    s = study(
        inside={"key": "a", "value": 0.5, "precision": 0.1},
        outside={"key": "b", "value": 0.5, "precision": 0.1},
        straddles={"key": "c", "value": 0.5, "precision": 0.1},
        wide={"key": "d", "value": 0.5, "precision": 0.1},
        rounds={"key": "e", "value": 0.5, "precision": 0.1, "real_data_rule": "rounding"},
        off={"key": "f", "value": 0.5, "precision": 0.1, "real_data_rule": "rounding"},
        part={
            "key": "g",
            "value": 0.5,
            "precision": 0.1,
            "coverage": {"key": "m.*", "expected": 5, "unit": "models"},
        },
        other={"key": "h", "value": 0.5, "precision": 0.1, "method": "different"},
        gone={"key": "nowhere", "value": 0.5, "precision": 0.1},
        count={"key": "k", "value": 10, "precision": 1, "margin": 0, "fmt": ",d"},
        no_ci={"key": "l", "value": 0.5, "precision": 0.1},
    )
    numbers = {
        "a": rec(0.51, 0.47, 0.54),  # (build - published) in [-0.03, 0.04]: within +/-0.05
        "b": rec(0.60, 0.57, 0.63),  # [0.07, 0.13]: wholly outside
        "c": rec(0.53, 0.50, 0.56),  # [0.00, 0.06]: straddles +0.05
        "d": rec(0.50, 0.10, 0.90),  # holds the value, far wider than the margin
        "e": rec(0.54, 0.0, 1.0),  # rounds to 0.5 on the study's own data
        "f": rec(0.56, 0.55, 0.57),  # does not
        "g": rec(0.50, 0.49, 0.51),
        "m.x": rec(0.5),
        "h": rec(0.9, 0.8, 1.0),
        "k": {"value": 10, "n": None, "fmt": ",d"},
        "l": {"value": 0.5, "n": 5, "fmt": ".3f"},
    }
    got = {r.name: r for r in scorecard_rows(s, numbers, simulated=False)}
    assert {k: r.verdict for k, r in got.items()} == {
        "inside": REPRODUCED,
        "outside": DIFFERS,
        "straddles": INCONCLUSIVE,
        "wide": INCONCLUSIVE,
        "rounds": REPRODUCED,
        "off": DIFFERS,
        "part": PARTIAL,
        "other": DIFFERENT_METHOD,
        "gone": NOT_IN_DATASET,
        "count": REPRODUCED,
        "no_ci": INCONCLUSIVE,
    }
    assert set(VERDICT_CODES) == {r.verdict for r in got.values()}
    assert got["part"].part_verdict == REPRODUCED and got["part"].agrees is True
    assert got["rounds"].rule == "rounding" and got["inside"].rule == "margin"
    assert "[-0.03, +0.04] lies within +/-0.05" in got["inside"].reason
    assert "straddles" in got["straddles"].reason
    numbers["k"]["value"] = 11  # a count is exact: one off with margin 0 differs
    assert verdicts(s, numbers, simulated=False)["count"] == DIFFERS


def test_a_published_range_is_widened_by_the_margin() -> None:
    s = study(x={"key": "r", "range": [0.4, 0.6], "precision": 0.01})
    assert verdicts(s, {"r": rec(0.62, 0.59, 0.64)}, simulated=True) == {"x": REPRODUCED}
    assert verdicts(s, {"r": rec(0.64, 0.62, 0.66)}, simulated=True) == {"x": INCONCLUSIVE}
    assert verdicts(s, {"r": rec(0.70, 0.67, 0.73)}, simulated=True) == {"x": DIFFERS}


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
        "k.model_model": rec(0.6, 0.58, 0.62),
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
    rounding = {"precision": 0.01, "real_data_rule": "rounding"}
    s = study(
        rates={"key": "rate.*", "range": [0.4, 0.6], "aggregate": "each", **rounding},
        worst={"key": "delta.*", "value": -0.39, "aggregate": "min", **rounding},
        its_rate={"key": "rate.*", "value": 0.05, "same_as": "worst", **rounding},
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
    s = study(x={"key": "a", "value": 0.5, "precision": 0.1, "margin": 0.2})
    rows = scorecard_rows(s, {"a": rec(0.5, 0.4, 0.6)}, simulated=False)
    out = attach_provenance(scorecard_records(rows, s, False), rule="scorecard", inputs=[])
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


def test_a_computed_figure_needs_a_margin_with_its_reason() -> None:
    with pytest.raises(ConfigError, match="study.published.x.margin=None"):
        study(x={"key": "a", "value": 1, "precision": 1, "margin": None, "margin_reason": None})
    with pytest.raises(ConfigError, match="study.published.x.margin_reason"):
        study(x={"key": "a", "value": 1, "precision": 1, "margin_reason": " "})
    with pytest.raises(ConfigError, match="study.published.x.real_data_rule"):
        study(x={"key": "a", "value": 1, "precision": 1, "method": "different", **ROUND})
    with pytest.raises(ConfigError, match="study.published.x.stage"):
        study(x={"key": "a", "value": 1, "precision": 1, "stage": "stage4"})


ROUND = {"real_data_rule": "rounding"}


def test_the_study_file_s_margins_are_substantive() -> None:
    """Every figure this build computes has a margin with a reason, and no margin is the
    rounding step (which would make every row inconclusive); only counts are exact."""
    for name, entry in load_study(STUDY_FILE).published.items():
        if entry.method != "same":
            assert entry.margin is None, name
            continue
        assert entry.margin is not None and len(entry.margin_reason or "") > 40, name
        if entry.margin == 0:
            assert entry.fmt.endswith("d"), f"{name}: only a count may need an exact match"
            continue
        half_step = float(entry.precision or 0.0) / 2
        assert entry.margin != pytest.approx(half_step), f"{name}: margin is the rounding step"
        assert entry.margin >= 0.01 * max(map(abs, published_span(entry))), name


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


def entry_problems(study: StudyConfig, numbers: dict) -> list[str]:
    """Entries whose key or glob matches no record, or whose computed records count another
    unit than the entry says (a figure of attributes against a record of judgments)."""
    from analysis.paper.claims import match_keys

    problems = []
    for name, entry in study.published.items():
        matches = match_keys(entry.key, sorted(numbers), entry.exclude or [])
        if not matches:
            problems.append(f"{name}: no record matches {entry.key}")
        if entry.method != "same":
            continue  # the row shows an analogue; it is not judged against the figure
        for key, _ in matches:
            unit = numbers[key].get("unit") or ""
            if unit != entry.unit:
                problems.append(
                    f"{name}: {key} counts {unit or 'nothing stated'}, not {entry.unit}"
                )
    return problems


def unit_problems(study: StudyConfig, numbers: dict) -> list[str]:
    """Only the unit half of :func:`entry_problems` (for a build that lacks some keys)."""
    return [p for p in entry_problems(study, numbers) if "no record matches" not in p]


def test_the_unit_check_catches_a_figure_of_attributes_held_against_judgments() -> None:
    s = study(x={"key": "a", "value": 0.5, "precision": 0.01, "unit": "attributes"})
    assert entry_problems(s, {"a": {**rec(0.5), "unit": "judgments"}}) == [
        "x: a counts judgments, not attributes"
    ]
    assert entry_problems(s, {"b": rec(0.5)}) == ["x: no record matches a"]
    assert entry_problems(s, {"a": {**rec(0.5), "unit": "attributes"}}) == []


@pytest.mark.slow
def test_every_published_entry_matches_a_bundled_record_in_its_unit(bundled_build: Path) -> None:
    """The bundled world has every kind of data the study had, so every entry's key or glob
    matches one of its records, in the entry's unit; the real exports' build checks the
    entries their release supports (tests/test_workflow_realdata.py)."""
    numbers = json.loads((bundled_build / "results/bundled/numbers.json").read_text())
    assert entry_problems(load_study(STUDY_FILE), numbers) == []
    verdicts = {
        k: r["extra"]["verdict"]
        for k, r in numbers.items()
        if k.startswith("repro.") and k.endswith(".verdict")
    }
    assert "not in this dataset" not in verdicts.values(), verdicts
    assert REPRODUCED in verdicts.values()
    # the flags are counted by attribute, the study's unit, and task-context confusion is found
    assert numbers["repro.flagged_task_context.verdict"]["extra"]["key"] == (
        "stage1.flags.attribute_share.task_context_confusion"
    )
    assert (
        numbers["repro.flagged_attributes.verdict"]["extra"]["key"] == "stage1.flags.n_attributes"
    )
    # a simulated build's paper shows the data-support table, not the verdict table
    generated = bundled_build / "paper/generated/bundled/tables"
    assert r"\label{tab:data-support}" in (generated / "data_support.tex").read_text()


def test_the_data_support_table_lists_every_figure_once_by_stage() -> None:
    from analysis.paper.tables import render_tables

    s = study(
        rates={"key": "rate.*", "range": [0.4, 0.6], "precision": 0.01, "aggregate": "each"},
        flags={
            "key": "nowhere",
            "value": 0.5,
            "precision": 0.01,
            "stage": "stage1",
            "release": "no",
            "release_note": "no final stage-1 judgments",
        },
    )
    rows = scorecard_rows(s, {"rate.a": rec(0.45), "rate.b": rec(0.5)}, simulated=False)
    numbers = attach_provenance(scorecard_records(rows, s, False), rule="scorecard", inputs=[])
    tex = render_tables(numbers)["data_support"]
    assert tex.index("Stage 1: attribute extraction") < tex.index("Stage 2: relevance matching")
    assert tex.count(r"\rc{repro.rates.") == 1  # an `each` entry is one figure
    assert r"flags & \rc{repro.flags.published} & no & no final stage-1 judgments" in tex
    assert "Source: the test." in tex


def test_the_limitations_say_what_the_release_supports_as_the_table_does() -> None:
    """The limitations' sentence is read from the data-support table's rows: a stage with one
    partly supported figure among unsupported ones is not "not at all" (issue 35)."""
    from analysis.paper.tables import release_support_words, render_tables

    def words(**releases: list[str]) -> str:
        entries = {
            f"{stage}_{i}": {"key": "nowhere", "value": 0.5, "precision": 0.01, "stage": stage}
            | {"release": r, "release_note": "what it holds"}
            for stage, rs in releases.items()
            for i, r in enumerate(rs)
        }
        s = study(**entries)
        rows = scorecard_rows(s, {}, simulated=False)
        return release_support_words(
            attach_provenance(scorecard_records(rows, s, False), rule="scorecard", inputs=[])
        )

    assert words(
        stage1=["no", "no"], stage2=["yes", "partial"], stage3=["no", "partial", "no"]
    ) == ("stage~2 in part, stage~3 partly, for 1 of its 3 figures and stage~1 not at all")
    assert words(stage1=["yes"], stage3=["no", "no", "yes"]) == (
        "stage~1 in full and stage~3 for 1 of its 3 figures"
    )
    assert words(stage2=["partial", "no"]) == "stage~2 in part"
    # the study file: stage 3 has one partly supported figure, so the sentence says so
    published = load_study(STUDY_FILE)
    rows = scorecard_rows(published, {}, simulated=False)
    numbers = attach_provenance(
        scorecard_records(rows, published, False), rule="scorecard", inputs=[]
    )
    stage3 = [e.release for e in published.published.values() if e.stage == "stage3"]
    sentence = release_support_words(numbers)
    assert "stage~3 not at all" not in sentence and "partial" in stage3
    assert f"stage~3 partly, for {len(stage3) - stage3.count('no')} of its {len(stage3)}" in (
        sentence
    )
    assert render_tables(numbers)["release_support"].endswith(
        f"\\newcommand\\ReleaseSupport{{{sentence}}}\n"
    )


def test_a_simulated_build_s_verdicts_say_they_are_by_construction(tmp_path: Path) -> None:
    """On simulated data the simulator was solved to hit the published figures, so every
    output of a simulated build's scorecard says so: the verdict records' display and
    method, the CSV (a caveat column, the verdict labelled) and the printed table. The codes
    and the bare verdict stay comparable with a real build's (issue 35)."""
    from analysis.paper.report_tables import scorecard_html
    from analysis.paper.scorecard import CAVEAT_COLUMN, SIMULATED_CAVEAT, SIMULATED_SUFFIX
    from analysis.paper.tables import caveat

    s = study(
        x={"key": "a", "value": 0.5, "precision": 0.1, "margin": 0.2},
        y={"key": "b", "value": 0.5, "precision": 0.1, "margin": 0.01},
    )
    numbers = {"a": rec(0.5, 0.4, 0.6), "b": rec(0.9, 0.85, 0.95)}
    sim_rows = scorecard_rows(s, numbers, simulated=True)
    assert [r.verdict for r in sim_rows] == [REPRODUCED, DIFFERS]  # judged as on real data
    out = attach_provenance(scorecard_records(sim_rows, s, True), rule="scorecard", inputs=[])
    x, y = out["repro.x.verdict"], out["repro.y.verdict"]
    assert x["display"] == REPRODUCED + SIMULATED_SUFFIX == "reproduced (simulated data)"
    assert y["display"] == "differs (simulated data)"
    assert x["value"] == VERDICT_CODES[REPRODUCED] and x["extra"]["verdict"] == REPRODUCED
    assert x["extra"]["simulated_caveat"] == SIMULATED_CAVEAT and x["method"].startswith(
        SIMULATED_CAVEAT
    )
    assert "by construction" in SIMULATED_CAVEAT and "not the study" in SIMULATED_CAVEAT
    assert caveat(x) is None  # not the exercise-only models' caveat (tables leave those out)
    real = attach_provenance(
        scorecard_records(scorecard_rows(s, numbers, False), s, False), rule="r", inputs=[]
    )
    assert real["repro.x.verdict"]["display"] == REPRODUCED
    assert "simulated_caveat" not in real["repro.x.verdict"]["extra"]
    assert "simulated" not in real["repro.x.verdict"]["method"]

    sim_csv = list(csv.DictReader(io.StringIO(scorecard_csv(sim_rows, simulated=True))))
    assert [r["verdict"] for r in sim_csv] == [
        "reproduced (simulated data)",
        "differs (simulated data)",
    ]
    assert {r[CAVEAT_COLUMN] for r in sim_csv} == {SIMULATED_CAVEAT}
    real_csv = scorecard_csv(scorecard_rows(s, numbers, False))
    assert CAVEAT_COLUMN not in real_csv.splitlines()[0] and "simulated" not in real_csv

    printed = render_scorecard({**numbers, **out}, "md")
    assert printed.startswith("> Simulated data: the simulator was calibrated")
    assert "| reproduced (simulated data) |" in printed
    assert not render_scorecard({**numbers, **real}, "md").startswith(">")
    path = tmp_path / "scorecard.csv"
    path.write_text(scorecard_csv(sim_rows, simulated=True), encoding="utf-8")
    page = scorecard_html(path, "bundled")
    assert "<p>Simulated data: the simulator was calibrated" in page
    assert "reproduced (simulated data)" in page
