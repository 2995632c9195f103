"""The same workflow on the authors' real annotation-tool exports, end to end to the PDF."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.paper.scorecard import (
    DIFFERENT_METHOD,
    DIFFERS,
    NOT_IN_DATASET,
    PARTIAL,
    REPRODUCED,
    scorecard_rows,
)
from analysis.settings import load_study
from tests.conftest import make_workflow_copy, run_snakemake
from tests.paper.test_latex_log import log_defects
from tests.paper.test_pdf_layout import layout_problems
from tests.paper.test_scorecard import unit_problems
from tests.stats.test_p_values import (
    design_problems,
    floors_printed_as_values,
    numbers_disagreements,
    zero_width_intervals,
)
from tests.test_docs_numbers import docs_texts, typed_results

#: every test here shares one build of the real exports (a module fixture, so one xdist group)
pytestmark = pytest.mark.full_build


@pytest.fixture(scope="module")
def real_build(tmp_path_factory: pytest.TempPathFactory, real_data_root: Path) -> Path:
    """One full build on the real exports, shared by this module's tests.

    On one core: under ``make test`` the other core runs the other xdist worker anyway, and
    MiniLM, most of this build, then runs torch on the job's one thread instead of competing
    with that worker for both cores.
    """
    workflow_copy = make_workflow_copy(tmp_path_factory.mktemp("real") / "repo")
    run_snakemake(
        workflow_copy,
        "--cores",
        "1",
        "--config",
        f"overrides=data=annotation_tool data.root={real_data_root}",
    )
    return workflow_copy


@pytest.mark.slow
@pytest.mark.realdata
def test_real_data_builds_the_paper_with_real_stage2_numbers(
    real_build: Path, real_data_root: Path
) -> None:
    workflow_copy = real_build
    assert (
        (workflow_copy / "paper/build/annotation_tool/paper.pdf").read_bytes().startswith(b"%PDF")
    )
    numbers = json.loads((workflow_copy / "results/annotation_tool/numbers.json").read_text())
    majority = numbers["stage2.final.relevance_rate.human_majority"]
    assert 0.05 < majority["value"] < 0.5
    assert majority["ci_low"] < majority["value"] < majority["ci_high"]
    for model in ("gemma-4-31b-it", "gpt-5.4"):
        assert numbers[f"stage2.final.over_selection.{model}"]["value"] > 1
        assert 0 < numbers[f"stage2.final.f1_vs_majority.{model}"]["value"] < 1
    assert "stage2.pilot.kappa.human_human" in numbers
    assert "stage2.pilot.kappa.human_model" in numbers
    # One reference for people and models (issue 15): the leave-one-human-out ceiling and the
    # models against the same references, in both rounds with individual human votes.
    # (the graded pilot has no model votes: its ceiling only)
    for round_ in ("pilot", "pilot_graded"):
        for stat in ("kappa_human_vs_rest", "f1_human_vs_rest"):
            rec = numbers[f"stage2.{round_}.ceiling.{stat}"]
            assert rec["ci_low"] <= rec["value"] <= rec["ci_high"]
            assert rec["extra"]["design"] == "relevance_people"
    gaps = [k for k in numbers if k.startswith("stage2.pilot.vs_rest.gap_kappa.")]
    assert len(gaps) >= 2
    assert all("p_value" in numbers[k]["extra"] for k in gaps)
    assert "stage2.pilot.kappa_diff.model_model_minus_human_model" in numbers
    # Every p-value agrees with its interval, the docs type none of these numbers, and the
    # PDF has no float too large and no overfull box.
    assert numbers_disagreements(numbers) == []
    # every interval from its declared design: the pilot's people statements resample users
    # and prompts crossed and the annotators; no zero-width interval unless exact; no p-value
    # at the resampling floor printed as a value
    assert design_problems(numbers) == []
    assert zero_width_intervals(numbers) == []
    assert floors_printed_as_values(numbers) == []
    pilot_people = numbers["stage2.pilot.kappa.human_human"]
    assert pilot_people["extra"]["design"] == "relevance_people"
    assert "crossed and annotators (" in pilot_people["method"]
    assert typed_results(docs_texts(), numbers) == []
    assert log_defects(workflow_copy, "annotation_tool") == []
    # The same paper as the bundled build's: short, readable in print, within the text block.
    assert layout_problems(workflow_copy / "paper/build/annotation_tool/paper.pdf") == []
    # The snapshot has no stage-3 human ratings: those keys are absent, never zero.
    assert not any(key.startswith("stage3.mean_rating.") for key in numbers)
    assert all(Path(i["path"]).parts[0] != "/" for r in numbers.values() for i in r["inputs"])

    # The self-contained HTML report: figures with their captions, the rules, the config.
    run_snakemake(
        workflow_copy,
        "--report",
        "report.html",
        "--config",
        f"overrides=data=annotation_tool data.root={real_data_root}",
    )
    report = (workflow_copy / "report.html").read_text(encoding="utf-8", errors="replace")
    assert report.lstrip().lower().startswith("<!doctype html")
    assert "kappa_matrix" in report and "stage2_statistics" in report


@pytest.mark.slow
@pytest.mark.realdata
def test_real_build_scorecard_verdicts_of_the_stage2_headlines(real_build: Path) -> None:
    """The stage-2 headlines the exports support, judged at the published precision.

    The exports hold the published majority label and the votes of two of the study's five
    models, so: the majority's relevance rate and each surviving model's over-selection are
    comparable (and lie within "about 20%" and "2-3x"); model-model kappa and the best
    model's F1 pool over fewer models than the study's five, hence *partial*, and neither
    matches its published figure at three (two) decimals.
    """
    numbers = json.loads((real_build / "results/annotation_tool/numbers.json").read_text())
    verdict = {
        k[len("repro.") : -len(".verdict")]: r
        for k, r in numbers.items()
        if k.startswith("repro.") and k.endswith(".verdict")
    }
    assert verdict["human_relevance_rate"]["display"] == REPRODUCED
    models = ("gemma-4-31b-it", "gpt-5.4")
    for model in models:
        assert verdict[f"over_selection.{model}"]["display"] == REPRODUCED
        assert verdict[f"model_relevance_rate.{model}"]["display"] == REPRODUCED
    for name in ("kappa_model_model", "f1_best_model"):
        assert verdict[name]["display"] == PARTIAL
        assert verdict[name]["extra"]["reason"].startswith("2 of 5 models")
        assert verdict[name]["extra"]["agrees"] is False
    assert verdict["f1_best_model"]["extra"]["key"] == "stage2.final.f1_vs_majority.gemma-4-31b-it"
    assert verdict["kappa_human_human"]["display"] == "not in this dataset"
    assert verdict["f1_trained"]["display"] == "different method"
    csv_text = (real_build / "results/annotation_tool/scorecard.csv").read_text()
    assert csv_text.startswith("name,quantity,published,where,key")

    # The verdicts are computed from the values: move the majority rate out of "about 20%"
    # and the same rule says so.
    study = load_study(real_build / "config/study/published.yaml")
    moved = copy.deepcopy(numbers)
    moved["stage2.final.relevance_rate.human_majority"]["value"] = 0.31
    rows = {r.name: r.verdict for r in scorecard_rows(study, moved, simulated=False)}
    assert rows["human_relevance_rate"] == DIFFERS

    # What the release supports is data beside the published figures, and this build agrees
    # with it: a figure the release cannot support has no record here; one it supports has.
    # Every computed record the scorecard reads counts the unit of its published figure.
    for name, entry in study.published.items():
        got = {v["display"] for k, v in verdict.items() if k.split(".", 1)[0] == name}
        if entry.release == "no":
            assert got <= {NOT_IN_DATASET, DIFFERENT_METHOD}, (name, got)
        elif entry.release == "yes":
            assert got and NOT_IN_DATASET not in got, (name, got)
    assert unit_problems(study, numbers) == []
    support = (real_build / "paper/generated/annotation_tool/tables/data_support.tex").read_text()
    assert support.count(r"\rc{repro.") == len(study.published)
    # and the limitations say what the table says (one stage-3 figure partly supported)
    words = (real_build / "paper/generated/annotation_tool/tables/release_support.tex").read_text()
    stage3 = [e.release for e in study.published.values() if e.stage == "stage3"]
    assert ("stage~3 not at all" in words) is (set(stage3) == {"no"})
    assert "stage~1 not at all" in words and "stage~2 in part" in words
    # a real build judges by the rules: the study's own data by rounding, the rest by margins
    assert verdict["human_relevance_rate"]["extra"]["rule"] == "rounding"
    assert verdict["f1_bm25"]["extra"]["rule"] == "margin"
    assert "equivalence margin" in verdict["f1_bm25"]["extra"]["reason"]

    printed = subprocess.run(
        [sys.executable, "-m", "analysis.cli", "scorecard", "--dataset", "annotation_tool"],
        cwd=real_build,
        env=dict(os.environ, PYTHONPATH=str(real_build)),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "| quantity | study | this build [95% CI] | n | verdict |" in printed
    assert "partial" in printed and "reproduced" in printed
