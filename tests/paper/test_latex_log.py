"""The built PDF has no layout defects: the LaTeX log of each dataset's build is read (issue 15).

A float too large for its page hides its last rows; an overfull box runs text into the margin.
Both are silent in a build that succeeds, so this test reads the log the build left
(``paper/build/<dataset>/latex/paper.log``, written by ``analysis.paper.compile``) and fails on any
"Float too large" and any overfull box wider or higher than 1 pt, naming the file it follows.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.paper.compile import layout_defects


def log_defects(repo: Path, dataset: str) -> list[str]:
    """The layout defects of a build's LaTeX log (also used by the real-data build's test)."""
    log = repo / "paper" / "build" / dataset / "latex" / "paper.log"
    return layout_defects(log.read_text(encoding="utf-8", errors="replace"))


@pytest.mark.slow
def test_the_bundled_paper_has_no_float_too_large_and_no_overfull_box(
    bundled_build: Path,
) -> None:
    """On the session's fresh bundled build; the real-data build's log is read by
    tests/test_workflow_realdata.py."""
    defects = log_defects(bundled_build, "bundled")
    assert not defects, "layout defects in the bundled paper.log:\n  " + "\n  ".join(defects)


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
