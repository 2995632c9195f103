"""Figure 5: mean rating of personalized vs generic responses by the dataset's raters
(``data.nouns``: people, or simulated raters), per generator.

The raters rate each relevant attribute of a personalized response against the generic one on a
5-point scale (1 = personalized much worse, 3 = no difference, 5 = much better). Each point is
the record ``stage3.mean_rating.<generator>`` with its CI; the pooled
``stage3.mean_rating.human`` (all generators) is drawn last, apart. The dashed line at 3 is
"no difference": a generator whose interval crosses it is not reliably better than generic.
"""

from __future__ import annotations

import numpy as np
from matplotlib.lines import Line2D

from analysis.figures.estimates import (
    CI_NOTE,
    Records,
    caveat_of_record,
    draw_intervals,
    estimate,
    estimates_under,
)
from analysis.figures.style import (
    CI_COLOUR,
    COLUMN_WIDTH,
    KIND_COLOURS,
    MIN_FONT_PT,
    OKABE_ITO,
    REFERENCE_COLOUR,
    StudyFigure,
    new_figure,
    placeholder_figure,
    style_context,
)
from analysis.settings import NEUTRAL_NOUNS, DataNouns

NAME = "ratings_by_generator"
CODE = "analysis.figures.ratings_by_generator:ratings_by_generator_figure"
#: the placeholder's title; ``{people}`` in the dataset's words
TITLE = "Mean rating by the {people} per generator"
PREFIX = "stage3.mean_rating"
POOLED = "human"  # the key suffix of the all-generators mean
NEUTRAL = 3.0
SCALE = (1.0, 5.0)


def ratings_by_generator_figure(records: Records, *, nouns: DataNouns | None = None) -> StudyFigure:
    """Dot-and-interval plot of each generator's mean rating by the dataset's raters around
    the neutral 3."""
    nouns = nouns or NEUTRAL_NOUNS
    caption = (
        f"Mean rating by the {nouns.people} of the personalized response against the generic "
        "one, per generator (1 = personalized much worse, 3 = no difference, 5 = much better; "
        "unit: one rated slot); the dashed line marks no difference."
    )
    by_gen = {
        g: e
        for g, e in estimates_under(records, PREFIX).items()
        if g != POOLED and caveat_of_record(e.record) is None
    }
    if not by_gen:
        return placeholder_figure(
            NAME,
            CODE,
            title=nouns.fill(TITLE),
            reason=f"the dataset has no stage-3 preference ratings by the {nouns.people} "
            f"(no records {PREFIX}.<generator>)",
            caption=caption,
        )
    gens = sorted(by_gen, key=lambda g: (-by_gen[g].value, g))
    ests = [by_gen[g] for g in gens]
    labels = list(gens)
    pooled = estimate(records, f"{PREFIX}.{POOLED}")
    y = list(np.arange(len(gens), dtype=float))
    if pooled is not None:
        y.append(len(gens) + 0.5)
        ests.append(pooled)
        labels.append("all generators")
    fig = new_figure(
        NAME,
        CODE,
        width=COLUMN_WIDTH,
        height=1.25 + 0.24 * len(ests),
        caption=f"{caption} {CI_NOTE}",
    )
    colours = [KIND_COLOURS["model"]] * len(gens) + [OKABE_ITO["black"]] * (pooled is not None)
    with style_context():
        ax = fig.add_subplot()
        ax.axvline(NEUTRAL, color=REFERENCE_COLOUR, linestyle="--", linewidth=0.8, gid="neutral")
        draw_intervals(ax, y, ests, horizontal=True, cap=0.18)
        points = ax.scatter(
            [e.value for e in ests],
            y,
            s=22,
            c=colours,
            zorder=5,
            edgecolors="white",
            linewidths=0.5,
        )
        points.set_gid("means")
        ax.set_yticks(y, labels)
        ax.invert_yaxis()
        lows = [e.low if e.low is not None else e.value for e in ests]
        highs = [e.high if e.high is not None else e.value for e in ests]
        lo = max(SCALE[0], min(NEUTRAL - 0.25, min(lows) - 0.15))
        hi = min(SCALE[1], max(NEUTRAL + 0.25, max(highs) + 0.15))
        ax.set_xlim(lo, hi)
        ax.set_xlabel(f"mean rating by the {nouns.people}\n(1-5; 3 = no difference)")
        ax.tick_params(axis="y", length=0)
        ax.spines["left"].set_visible(False)
        ax.text(
            NEUTRAL,
            1.01,
            "no difference",
            transform=ax.get_xaxis_transform(),
            ha="center",
            va="bottom",
            fontsize=MIN_FONT_PT,
            color=REFERENCE_COLOUR,
        )
        handles = [
            Line2D([], [], marker="o", linestyle="none", color=KIND_COLOURS["model"], ms=4),
            Line2D([], [], marker="o", linestyle="none", color=OKABE_ITO["black"], ms=4),
            Line2D([], [], color=CI_COLOUR, linewidth=1.0),
        ]
        names = ["one generator", "all generators", "confidence interval"]
        if pooled is None:
            handles, names = handles[::2], names[::2]
        fig.legend(handles, names, loc="outside upper center", ncols=2, handlelength=1.2)
    fig.study.records = sorted(e.key for e in ests)
    return fig
