"""The scorecard figure draws every verdict with an interval, and says so when there is none."""

from __future__ import annotations

from analysis.figures.scorecard import scorecard_figure


def _pair(name: str, value: float, low: float, high: float, published: float, **extra) -> dict:
    return {
        f"repro.{name}.verdict": {
            "value": 1,
            "display": "reproduced",
            "extra": {"estimate": value, "ci_low": low, "ci_high": high, "order": 0, **extra},
        },
        f"repro.{name}.published": {"value": published, "extra": {}},
    }


def test_bars_in_two_panels_by_scale_and_counts_left_out() -> None:
    records = {
        **_pair("kappa", 0.6, 0.58, 0.62, 0.6),
        **_pair("ratio", 2.5, 2.2, 2.8, 2.5),
        "repro.count.verdict": {"value": 1, "display": "reproduced", "extra": {"estimate": 5}},
        "repro.count.published": {"value": 5, "extra": {}},
    }
    fig = scorecard_figure(records)
    assert fig.study.available and len(fig.axes) == 2
    assert fig.study.records == ["repro.kappa.verdict", "repro.ratio.verdict"]


def test_no_interval_is_a_labelled_placeholder() -> None:
    fig = scorecard_figure({})
    assert not fig.study.available and "interval" in (fig.study.reason or "")


def test_the_equivalence_region_is_drawn_behind_the_interval() -> None:
    records = _pair("share", 0.5, 0.47, 0.53, 0.5, equivalence_low=0.45, equivalence_high=0.55)
    fig = scorecard_figure(records)
    spans = [a for ax in fig.axes for a in ax.collections if a.get_gid() == "margin"]
    assert len(spans) == 1
    assert spans[0].get_paths()[0].get_extents().x0 == 0.45
