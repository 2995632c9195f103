"""numbers.tex from handmade records: one macro per key, escaped, aliased; collisions fail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.paper.latex import escape_latex, escape_number
from analysis.paper.macros import alias_for, alias_map, render_numbers_tex
from analysis.provenance import Record, RecordError, merge_record_files, write_records

HANDMADE = {
    "stage2.final.kappa.human_human": {
        "value": 0.4312,
        "fmt": ".2f",
        "display": "0.43",
        "ci_low": 0.391,
        "ci_high": 0.468,
        "n": 3973,
        "method": "mean pairwise Cohen's κ; 95% bootstrap CI over users",
        "ci_level": 0.95,
    },
    "stage1.acceptance_rate.synthetic:cupid": {
        "value": 0.58,
        "fmt": ".1%",
        "display": "58.0%",
        "method": "share accepted",
    },
    "stage3.mention_delta.sim-judge_b": {
        "value": -0.39,
        "fmt": "+.2f",
        "display": "-0.39",
        "ci_low": -0.5,
        "ci_high": -0.21,
        "ci_level": 0.95,
        "method": "difference of means (mentioned - not) & more",
    },
}


@pytest.fixture
def numbers_file(tmp_path: Path) -> Path:
    path = tmp_path / "numbers.json"
    path.write_text(json.dumps(HANDMADE), encoding="utf-8")
    return path


def test_every_key_gets_a_value_macro_with_escaped_display(numbers_file: Path) -> None:
    tex = render_numbers_tex(json.loads(numbers_file.read_text()))
    assert r"\expandafter\def\csname rc@stage2.final.kappa.human_human\endcsname{0.43}" in tex
    # a bare % would comment out the rest of the line in LaTeX
    assert r"\csname rc@stage1.acceptance_rate.synthetic:cupid\endcsname{58.0\%}" in tex
    # a minus is a real minus sign, not a hyphen
    assert r"\csname rc@stage3.mention_delta.sim-judge_b\endcsname{\ensuremath{-}0.39}" in tex


def test_ci_method_and_n_macros(numbers_file: Path) -> None:
    tex = render_numbers_tex(json.loads(numbers_file.read_text()))
    assert r"\csname rc@ci@stage2.final.kappa.human_human\endcsname{0.39, 0.47}" in tex
    assert r"\csname rc@cilevel@stage2.final.kappa.human_human\endcsname{95\%}" in tex
    assert r"\csname rc@n@stage2.final.kappa.human_human\endcsname{3,973}" in tex
    method = r"\csname rc@method@stage3.mention_delta.sim-judge_b\endcsname"
    assert method + r"{difference of means (mentioned - not) \& more}" in tex
    assert r"\ensuremath{\kappa}; 95\% bootstrap" in tex
    # no CI, no CI macro
    assert "rc@ci@stage1.acceptance_rate" not in tex
    # an exact (Clopper-Pearson) interval says so where the text prints its level
    exact = {
        "key": "stage3.mentions.detector_sensitivity",
        "value": 0.9,
        "fmt": ".0%",
        "ci_low": 0.6,
        "ci_high": 0.99,
        "ci_level": 0.95,
        "extra": {"exact": True},
    }
    tex = render_numbers_tex({exact["key"]: exact})
    assert r"\csname rc@cilevel@stage3.mentions.detector_sensitivity\endcsname{95\% exact}" in tex


def test_aliases_are_named_for_meaning_with_digits_spelled_out() -> None:
    assert alias_for("stage2.final.kappa.human_human") == "StageTwoFinalKappaHumanHuman"
    assert (
        alias_for("stage2.final.f1_vs_majority.gpt-5.4") == "StageTwoFinalFOneVsMajorityGptFiveFour"
    )
    assert (
        alias_for("stage1.acceptance_rate.synthetic:cupid")
        == "StageOneAcceptanceRateSyntheticCupid"
    )
    tex = render_numbers_tex(HANDMADE)
    assert r"\newcommand\StageTwoFinalKappaHumanHuman{\rc{stage2.final.kappa.human_human}}" in tex


def test_alias_collision_is_an_error_naming_both_keys() -> None:
    keys = ["stage2.final.kappa.human_human", "stage2.final.kappa.human.human"]
    with pytest.raises(RecordError, match=r"human_human.*human\.human|human\.human.*human_human"):
        alias_map(keys)
    with pytest.raises(RecordError, match="StageTwoFinalKappaHumanHuman"):
        render_numbers_tex({k: {"value": 1, "fmt": "d"} for k in keys})


def test_a_key_latex_cannot_take_is_an_error() -> None:
    with pytest.raises(RecordError, match="stage2.final.kappa#1"):
        render_numbers_tex({"stage2.final.kappa#1": {"value": 1, "fmt": "d"}})


def test_reserved_macro_names_are_refused() -> None:
    with pytest.raises(RecordError, match="reserved"):
        alias_map(["claim"])


def test_escape_latex_handles_every_special_character() -> None:
    assert escape_latex("50% of A&B_c #1 {x} ~ ^ $") == (
        r"50\% of A\&B\_c \#1 \{x\} \textasciitilde{} \textasciicircum{} \$"
    )
    assert escape_latex("ρ ≥ 0.3") == r"\ensuremath{\rho} \ensuremath{\ge} 0.3"
    assert escape_latex("\u4e2d") == "[U+4E2D]"  # unknown characters stay visible
    assert escape_number("-1,234") == r"\ensuremath{-}1,234"
    assert escape_number("+0.12") == "+0.12"


def test_write_and_merge_records_roundtrip(tmp_path: Path) -> None:
    inp = tmp_path / "in.parquet"
    inp.write_bytes(b"x")
    a = write_records(
        [Record("k.a", 0.5, ".1%", "share", "m:f", ci_low=0.4, ci_high=0.6)],
        tmp_path / "a.json",
        rule="ra",
        inputs=[inp],
    )
    assert a["k.a"]["display"] == "50.0%"
    write_records(
        [Record("k.b", 3, ",d", "count", "m:g")], tmp_path / "b.json", rule="rb", inputs=[]
    )
    merged = merge_record_files([tmp_path / "b.json", tmp_path / "a.json", tmp_path / "a.json"])
    assert list(merged) == ["k.a", "k.b"]
    write_records([Record("k.a", 1, "d", "dup", "m:h")], tmp_path / "c.json", rule="rc", inputs=[])
    with pytest.raises(RecordError, match="rule ra and rule rc"):
        merge_record_files([tmp_path / "a.json", tmp_path / "c.json"])
