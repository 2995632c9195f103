"""Figure 6: the mention effect, per rater: do raters reward attributes mentioned outright?

For people (``human``: the mean rating of a slot's human raters) and each LLM judge, the
record ``stage3.mention_delta.<rater>`` is the mean rating of rating slots whose attribute the
personalized response mentions explicitly ("Given your interest in X...") minus that of slots
where it does not. Bars start at zero (no effect) and carry the record's CI; people come
first, then the judges from the largest effect down. A judge whose record carries a caveat
(``stages.caveats``: the exercise-only local model) is left out and named under the bars.
"""

from __future__ import annotations

import textwrap

import numpy as np
from matplotlib.patches import Patch

from analysis.figures.estimates import (
    CI_NOTE,
    Records,
    caveat_of_record,
    draw_intervals,
    estimates_under,
)
from analysis.figures.style import (
    COLUMN_WIDTH,
    KIND_COLOURS,
    MIN_FONT_PT,
    REFERENCE_COLOUR,
    StudyFigure,
    capitalized,
    new_figure,
    placeholder_figure,
    style_context,
)
from analysis.settings import NEUTRAL_NOUNS, DataNouns

NAME = "mention_effect"
CODE = "analysis.figures.mention_effect:mention_effect_figure"
TITLE = "Rating gap with vs without explicit mentions"
PREFIX = "stage3.mention_delta"
HUMAN = "human"
#: characters per line of the note on judges left out (7-pt text in a column)
NOTE_WRAP = 58


def mention_effect_figure(records: Records, *, nouns: DataNouns | None = None) -> StudyFigure:
    """Horizontal bars of each rater's mention delta (people first), CIs from the records."""
    nouns = nouns or NEUTRAL_NOUNS
    caption = (
        "Mention effect per rater: mean rating of personalized responses that mention an "
        f"attribute outright minus those that do not, for the {nouns.people} and each of the "
        f"{nouns.models} as a judge (unit: one rated slot)."
    )
    deltas = estimates_under(records, PREFIX)
    left_out = {r: why for r, e in deltas.items() if (why := caveat_of_record(e.record))}
    deltas = {r: e for r, e in deltas.items() if r not in left_out}
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
    labels = [capitalized(nouns.people) if r == HUMAN else r for r in raters]
    notes = [f"Not drawn: {r} ({why})" for r, why in sorted(left_out.items())]
    note_lines = [line for n in notes for line in textwrap.wrap(n, NOTE_WRAP)]
    y = np.arange(len(raters), dtype=float)
    fig = new_figure(
        NAME,
        CODE,
        width=COLUMN_WIDTH,
        height=1.15 + 0.22 * len(raters) + 0.12 * len(note_lines),
        caption=f"{caption} {' '.join(notes)} {CI_NOTE}"
        + (
            ""
            if HUMAN in deltas
            else f" No ratings by {nouns.people} in this dataset: judges only."
        ),
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
        ax.set_xlabel("rating points: with an explicit mention\nminus without")
        lo = min([0.0] + [e.low if e.low is not None else e.value for e in ests])
        hi = max([0.0] + [e.high if e.high is not None else e.value for e in ests])
        pad = 0.08 * max(hi - lo, 0.2)
        ax.set_xlim(lo - pad, hi + pad)
        handles = [
            Patch(color=KIND_COLOURS["human"], label=nouns.people),
            Patch(color=KIND_COLOURS["model"], label=f"{nouns.models} as judges"),
        ]
        if HUMAN not in deltas:
            handles = handles[1:]
        fig.legend(handles=handles, loc="outside upper center", ncols=2, handlelength=1.2)
        if note_lines:
            note = fig.supxlabel(
                "\n".join(note_lines), x=0.01, ha="left", fontsize=MIN_FONT_PT, color="#333333"
            )
            note.set_gid("left-out")
    fig.study.records = sorted(e.key for e in ests)
    return fig
