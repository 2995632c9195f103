"""The dataset macros come from the typed ``data`` settings, never the raw config tree."""

from __future__ import annotations

import dataclasses

from analysis.paper.dataset_info import render_dataset_tex
from tests.settings_defaults import default_settings


def test_dataset_macros_follow_the_typed_data_settings() -> None:
    data = default_settings().data
    tex = render_dataset_tex(data, title="A title")
    assert f"\\newcommand\\DatasetName{{{data.name}}}" in tex
    assert "\\PaperTitle{A title}" in tex
    assert ("\\DatasetSimulatedtrue" in tex) == data.simulated
    real = render_dataset_tex(dataclasses.replace(data, simulated=False))
    assert "\\DatasetSimulatedfalse" in real and "\\RealUsers{real}" in real
