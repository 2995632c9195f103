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


def test_one_panel_per_scale_titled_in_words_with_a_legend_for_every_colour() -> None:
    records = {
        **_pair("share", 0.18, 0.15, 0.21, 0.2, key="stage2.final.relevance_rate.human_majority"),
        **_pair("over", 2.3, 2.0, 2.6, 2.5, key="stage2.final.over_selection.m"),
        **_pair(
            "kappa",
            0.5,
            0.45,
            0.55,
            0.43,
            key="stage2.final.kappa.human_human",
            equivalence_low=0.38,
            equivalence_high=0.48,
        ),
    }
    for order, name in enumerate(("share", "over", "kappa")):  # the published file's order
        records[f"repro.{name}.verdict"]["extra"]["order"] = order
    records["repro.share.published"]["fmt"] = ".0%"
    records["repro.kappa.verdict"]["text"] = "inconclusive"
    fig = scorecard_figure(records)
    titles = [ax.get_xlabel() for ax in fig.axes]
    assert titles == [
        "share (percent)",
        "ratio of relevance rates (model / majority)",
        "Cohen's kappa",
    ]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[:2] == ["reproduced", "inconclusive"]
    assert "equivalence region" in legend and "published value" in legend
    kappa = fig.axes[2]
    (region,) = [c for c in kappa.collections if c.get_gid() == "margin"]
    xs = region.get_paths()[0].vertices[:, 0]
    assert min(xs) == 0.38 and max(xs) == 0.48


def test_a_simulated_build_s_labelled_verdict_keeps_its_colour() -> None:
    """A simulated build prints "reproduced (simulated data)"; the figure colours (and its
    legend names) the bare verdict kept in the record's extra."""
    records = _pair("share", 0.5, 0.47, 0.53, 0.5, verdict="reproduced")
    records["repro.share.verdict"]["text"] = "reproduced (simulated data)"
    fig = scorecard_figure(records)
    assert [t.get_text() for t in fig.legends[0].get_texts()][0] == "reproduced"
