"""A simulated build names nothing real: checked on the bundled build's generated sources and
PDF where this checkout has them (the full-build test in tests/test_workflow.py always does)."""

from __future__ import annotations

import pytest

from analysis import REPO_ROOT
from tests.paper.honest_labels import pdf_caption_problems, real_labels, table_problems

GENERATED = REPO_ROOT / "paper" / "generated" / "bundled"
PDF = REPO_ROOT / "paper" / "build" / "bundled" / "paper.pdf"


def test_the_check_tells_simulated_from_real_wording() -> None:
    assert real_labels("rates for real and synthetic users") == [
        "rates for real and synthetic users"
    ]
    assert not real_labels("real-like (simulated) users; no real people; a real but tiny model")


def test_the_bundled_builds_tables_and_captions_are_labelled_simulated() -> None:
    if not (GENERATED / "tables").is_dir() or not PDF.is_file():
        pytest.skip("no bundled build in this checkout (run snakemake first)")
    assert table_problems(GENERATED) == []
    assert pdf_caption_problems(PDF) == []
