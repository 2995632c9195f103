"""Figure 6: the mention effect, per rater: do raters reward attributes mentioned outright?

For people (``human``: the mean rating of a slot's human raters) and each LLM judge, the
record ``stage3.mention_delta.<rater>`` is the mean rating of rating slots whose attribute the
personalized response mentions explicitly ("Given your interest in X...") minus that of slots
where it does not. Bars start at zero (no effect) and carry the record's CI; people come
first, then the judges from the largest effect down.
"""

from __future__ import annotations

import numpy as np

from analysis.figures.estimates import CI_NOTE, Records, draw_intervals, estimates_under
from analysis.figures.style import (
    COLUMN_WIDTH,
    KIND_COLOURS,
    REFERENCE_COLOUR,
    StudyFigure,
    new_figure,
    placeholder_figure,
    style_context,
)

NAME = "mention_effect"
CODE = "analysis.figures.mention_effect:mention_effect_figure"
TITLE = "Rating gap with vs without explicit mentions"
PREFIX = "stage3.mention_delta"
HUMAN = "human"


def mention_effect_figure(records: Records) -> StudyFigure:
    """Horizontal bars of each rater's mention delta (people first), CIs from the records."""
    caption = (
        "Mention effect per rater: mean rating of personalized responses that mention an "
        "attribute outright minus those that do not, for people and each LLM judge."
    )
    deltas = estimates_under(records, PREFIX)
    if not deltas:
        return placeholder_figure(
            NAME,
            CODE,
            title=TITLE,
            reason="no mention-effect records: the dataset lacks stage-3 human ratings or "
            "explicit-mention flags",
            caption=caption,
        )
    judges = sorted((r for r in deltas if r != HUMAN), key=lambda r: (-deltas[r].value, r))
    raters = ([HUMAN] if HUMAN in deltas else []) + judges
    ests = [deltas[r] for r in raters]
    labels = ["people" if r == HUMAN else r for r in raters]
    y = np.arange(len(raters), dtype=float)
    fig = new_figure(
        NAME,
        CODE,
        width=COLUMN_WIDTH,
        height=0.8 + 0.24 * len(raters),
        caption=f"{caption} {CI_NOTE}"
        + ("" if HUMAN in deltas else " No human ratings in this dataset: judges only."),
    )
    with style_context():
        ax = fig.add_subplot()
        colours = [KIND_COLOURS["human" if r == HUMAN else "model"] for r in raters]
        bars = ax.barh(y, [e.value for e in ests], height=0.65, color=colours)
        for bar, r in zip(bars, raters, strict=True):
            bar.set_gid("delta-human" if r == HUMAN else "delta-judge")
        draw_intervals(ax, list(y), ests, horizontal=True, cap=0.15)
        ax.axvline(0.0, color=REFERENCE_COLOUR, linewidth=0.8, gid="zero")
        ax.set_yticks(y, labels)
        for tick, colour in zip(ax.get_yticklabels(), colours, strict=True):
            tick.set_color(colour)
        ax.invert_yaxis()
        ax.tick_params(axis="y", length=0)
        ax.spines["left"].set_visible(False)
        ax.set_xlabel("rating with explicit mention minus without")
        lo = min([0.0] + [e.low if e.low is not None else e.value for e in ests])
        hi = max([0.0] + [e.high if e.high is not None else e.value for e in ests])
        pad = 0.08 * max(hi - lo, 0.2)
        ax.set_xlim(lo - pad, hi + pad)
    fig.study.records = sorted(e.key for e in ests)
    return fig
