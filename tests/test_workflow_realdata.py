"""The same workflow on the authors' real annotation-tool exports, end to end to the PDF."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_snakemake


@pytest.mark.slow
@pytest.mark.realdata
def test_real_data_builds_the_paper_with_real_stage2_numbers(
    workflow_copy: Path, real_data_root: Path
) -> None:
    run_snakemake(
        workflow_copy,
        "--cores",
        "2",
        "--config",
        f"overrides=data=annotation_tool data.root={real_data_root}",
    )
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
