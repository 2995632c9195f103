"""Every figure of the registry can be read printed: no text below 7 pt at the size the paper
prints it (its natural size: ``\\StudyFigure`` shrinks only a figure wider than the text), and
none wider than the text (issue 36). Drawn on the handmade tables and records of the other
figure tests, with the nouns of a simulated dataset."""

from __future__ import annotations

import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text

from analysis.figures.registry import STUDY_FIGURES
from analysis.figures.style import MIN_FONT_PT, TEXT_WIDTH, StudyFigure
from tests.figures.handmade import (
    kappa_long,
    stage1_records,
    stage1_tables,
    stage2_records,
    stage3_records,
)
from tests.figures.test_scorecard_figure import _pair
from tests.settings_defaults import dataset_nouns

SIMULATED = dataset_nouns("bundled")


def draw(name: str) -> StudyFigure:
    """The registry's figure ``name`` on handmade data."""
    records = {**stage1_records(), **stage2_records(), **stage3_records()}
    records.update(_pair("kappa", 0.6, 0.58, 0.62, 0.6, quantity="a published kappa"))
    records["data.n_judgments.stage1"] = {"value": 5949}
    tables: dict[str, tuple[pd.DataFrame, ...]] = {
        "attribute_quality": stage1_tables(),
        "kappa_matrix": (
            pd.concat(
                [
                    kappa_long("final", ["sim-human-01", "sim-human-02"], ["sim-llm-a", "b"]),
                    kappa_long("pilot", ["Tal"], ["gpt-5.4"]),
                ]
            ),
        ),
    }
    return STUDY_FIGURES[name].draw(*tables.get(name, ()), records, nouns=SIMULATED)


@pytest.mark.parametrize("name", list(STUDY_FIGURES))
def test_no_text_below_seven_points_and_no_wider_than_the_text(name: str) -> None:
    fig = draw(name)
    FigureCanvasAgg(fig).draw()  # lay out: tick labels exist only once drawn
    assert fig.study.available, fig.study.reason
    width, _ = fig.get_size_inches()
    assert width <= TEXT_WIDTH + 1e-9
    small = [
        (t.get_text(), t.get_fontsize())
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip() and t.get_fontsize() < MIN_FONT_PT
    ]
    assert not small, small


@pytest.mark.parametrize("name", list(STUDY_FIGURES))
def test_a_simulated_figure_calls_nobody_people(name: str) -> None:
    fig = draw(name)
    FigureCanvasAgg(fig).draw()
    words = " ".join(t.get_text() for t in fig.findobj(Text)) + " " + fig.study.caption
    assert "people" not in words.lower().replace("simulated raters", ""), name
