"""The built PDF has no layout defects: the LaTeX log of each dataset's build is read (issue 15).

A float too large for its page hides its last rows; an overfull box runs text into the margin.
Both are silent in a build that succeeds, so this test reads the log the build left
(``paper/build/<dataset>/paper.log``, written by ``analysis.paper.compile``) and fails on any
"Float too large" and any overfull box wider or higher than 1 pt, naming the file it follows.
"""

from __future__ import annotations

import pytest

from analysis import REPO_ROOT
from analysis.paper.compile import layout_defects

DATASETS = ("bundled", "annotation_tool")


@pytest.mark.parametrize("dataset", DATASETS)
def test_the_built_paper_has_no_float_too_large_and_no_overfull_box(dataset: str) -> None:
    log = REPO_ROOT / "paper" / "build" / dataset / "paper.log"
    if not log.is_file():
        pytest.skip(f"{log} is absent: build the {dataset} paper first (snakemake)")
    defects = layout_defects(log.read_text(encoding="utf-8", errors="replace"))
    assert not defects, f"layout defects in {log}:\n  " + "\n  ".join(defects)


def test_layout_defects_reads_floats_and_boxes_above_one_point() -> None:
    log = "\n".join(
        [
            "(./main.tex (./sections/stage2.tex",
            r"Overfull \hbox (0.8pt too wide) in paragraph at lines 3--4",
            r"Overfull \hbox (12.5pt too wide) in paragraph at lines 7--9",
            ") (./sections/interventions.tex (generated/bundled/tables/interventions.tex)",
            "LaTeX Warning: Float too large for page by 227.1pt on input line 12.",
            r"Overfull \vbox (3.0pt too high) has occurred while \output is active",
            r"Underfull \hbox (badness 10000) in paragraph at lines 1--2",
        ]
    )
    assert layout_defects(log) == [
        "[after ./sections/stage2.tex] "
        r"Overfull \hbox (12.5pt too wide) in paragraph at lines 7--9",
        "[after generated/bundled/tables/interventions.tex] LaTeX Warning: Float too large for "
        "page by 227.1pt on input line 12.",
        "[after generated/bundled/tables/interventions.tex] "
        r"Overfull \vbox (3.0pt too high) has occurred while \output is active",
    ]
    assert layout_defects(log, tolerance_pt=20) == layout_defects(log)[1:2]
