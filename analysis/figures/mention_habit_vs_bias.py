"""Figure 7: how often a model mentions attributes as a generator vs its mention bias as a judge.

Each point is one model that is both a generator and a judge: x is the record
``stage3.mention_rate.<model>`` (share of its personalized rating slots that mention the
attribute outright), y is ``stage3.mention_delta.<model>`` (how much more it rates explicit
mentions as a judge), both with their CIs. The annotation is the record
``stage3.mention_habit_vs_bias.spearman`` (rho with its CI, its p-value where the record has
one, and n). No line is drawn: a rank correlation describes a monotone relation, not a line,
and a fitted slope would show a statistic the paper does not report. Models the Spearman
record leaves out (its ``extra.excluded_models``, or a record carrying a caveat such as the
near-random local model) are drawn hollow and grey and named in the caption, so the reader
sees which points the statistic was computed on. The people's mention effect
``stage3.mention_delta.human`` is the dotted reference with its CI band.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import PercentFormatter

from analysis.figures.estimates import (
    CI_NOTE,
    RecordPoint,
    Records,
    draw_intervals,
    estimate,
    estimates_under,
    interval_text,
)
from analysis.figures.style import (
    COLUMN_WIDTH,
    KIND_COLOURS,
    MIN_FONT_PT,
    REFERENCE_COLOUR,
    StudyFigure,
    new_figure,
    placeholder_figure,
    style_context,
)
from analysis.settings import NEUTRAL_NOUNS, DataNouns

NAME = "mention_habit_vs_bias"
CODE = "analysis.figures.mention_habit_vs_bias:mention_habit_vs_bias_figure"
TITLE = "Mention rate as generator vs mention bias as judge"
RATE = "stage3.mention_rate"
DELTA = "stage3.mention_delta"
SPEARMAN = "stage3.mention_habit_vs_bias.spearman"
HUMAN = "human"


def mention_habit_vs_bias_figure(
    records: Records, *, nouns: DataNouns | None = None
) -> StudyFigure:
    """Scatter of mention rate (x) vs mention delta (y) per model, with the Spearman record."""
    nouns = nouns or NEUTRAL_NOUNS
    caption = (
        "How often each model mentions attributes outright as a generator against how much "
        "more it rates such mentions as a judge."
    )
    rates = estimates_under(records, RATE)
    deltas = {k: v for k, v in estimates_under(records, DELTA).items() if k != HUMAN}
    models = sorted(set(rates) & set(deltas))
    if len(models) < 2:
        have = f"{len(models)} model" + ("" if len(models) == 1 else "s")
        return placeholder_figure(
            NAME,
            CODE,
            title=TITLE,
            reason=f"{have} with both a mention rate as generator and a mention effect as "
            "judge; the comparison needs at least two",
            caption=caption,
        )
    xs, ys = [rates[m] for m in models], [deltas[m] for m in models]
    rho = estimate(records, SPEARMAN)
    human = estimate(records, f"{DELTA}.{HUMAN}")
    left_out = excluded_models(models, rates, deltas, rho)
    fig = new_figure(
        NAME,
        CODE,
        width=COLUMN_WIDTH,
        height=3.2,
        caption=(
            f"{caption} "
            + (
                "Annotation: Spearman's rank correlation across the filled points; no line is "
                "fitted."
                if rho is not None
                else "Spearman's rho is not reported for this dataset (too few models)."
            )
            + (
                f" Hollow grey points ({', '.join(left_out)}) are left out of the correlation "
                "(caveated models)."
                if left_out
                else ""
            )
            + f" {CI_NOTE}"
        ),
    )
    used = [e.key for e in xs + ys]
    with style_context():
        ax = fig.add_subplot()
        x = np.array([e.value for e in xs])
        y = np.array([e.value for e in ys])
        if human is not None:
            used.append(human.key)
            ax.axhline(
                human.value, color=KIND_COLOURS["human"], linestyle=":", linewidth=1.0, gid="human"
            )
            if human.has_ci:
                ax.axhspan(
                    human.low, human.high, color=KIND_COLOURS["human"], alpha=0.12, linewidth=0
                )
            ax.annotate(
                nouns.people,
                xy=(1.0, human.value),
                xycoords=("axes fraction", "data"),
                xytext=(-2, 2),
                textcoords="offset points",
                ha="right",
                va="bottom",
                fontsize=MIN_FONT_PT,
                color=KIND_COLOURS["human"],
            )
        ax.axhline(0.0, color=REFERENCE_COLOUR, linewidth=0.6, gid="zero")
        draw_intervals(ax, list(x), ys, linewidth=0.8)
        draw_intervals(ax, list(y), xs, horizontal=True, linewidth=0.8)
        kept = np.array([m not in left_out for m in models])
        points = ax.scatter(
            x[kept],
            y[kept],
            s=24,
            color=KIND_COLOURS["model"],
            zorder=5,
            edgecolors="white",
            linewidths=0.5,
        )
        points.set_gid("models")
        if left_out:
            hollow = ax.scatter(
                x[~kept],
                y[~kept],
                s=24,
                facecolors="none",
                edgecolors=REFERENCE_COLOUR,
                linewidths=0.8,
                zorder=5,
            )
            hollow.set_gid("excluded")
        for xi, yi, m in zip(x, y, models, strict=True):
            ax.annotate(
                m,
                (xi, yi),
                xytext=(3, 3),
                textcoords="offset points",
                fontsize=MIN_FONT_PT,
                zorder=6,
                color=REFERENCE_COLOUR if m in left_out else "black",
            )
        if rho is not None:
            used.append(rho.key)
            n = rho.record.get("n")
            p = (rho.record.get("extra") or {}).get("p_value")
            ax.text(
                0.03,
                0.97,
                f"Spearman ρ = {interval_text(rho)}"
                + (f", p = {p:.3f}" if isinstance(p, int | float) else "")
                + (f"\nn = {n} models" if n else ""),
                transform=ax.transAxes,
                ha="left",
                va="top",
                fontsize=MIN_FONT_PT,
                zorder=7,
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1.5},
                gid="spearman",
            )
        ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.set_xlabel("explicit mentions as a generator\n(share of slots)")
        ax.set_ylabel("mention effect as a judge\n(rating points)")
        handles = [
            Line2D([], [], marker="o", linestyle="none", color=KIND_COLOURS["model"], ms=4),
        ]
        names = ["model in the correlation"]
        if left_out:
            handles.append(
                Line2D(
                    [],
                    [],
                    marker="o",
                    linestyle="none",
                    markerfacecolor="none",
                    markeredgecolor=REFERENCE_COLOUR,
                    ms=4,
                )
            )
            names.append("left out (caveat)")
        if human is not None:
            handles.append(Patch(color=KIND_COLOURS["human"], alpha=0.3))
            names.append(f"{nouns.people}' mention effect")
        fig.legend(handles, names, loc="outside upper center", ncols=1, handlelength=1.2)
    fig.study.records = sorted(set(used))
    return fig


def excluded_models(
    models: list[str],
    rates: Mapping[str, RecordPoint],
    deltas: Mapping[str, RecordPoint],
    rho: RecordPoint | None,
) -> list[str]:
    """The plotted models the correlation leaves out: those the Spearman record names as
    excluded, and any whose rate or delta record carries a caveat (e.g. a near-random model)."""
    named = set((rho.record.get("extra") or {}).get("excluded_models") or []) if rho else set()
    caveated = {
        m
        for m in models
        if (rates[m].record.get("extra") or {}).get("caveat")
        or (deltas[m].record.get("extra") or {}).get("caveat")
    }
    return sorted((named | caveated) & set(models))
