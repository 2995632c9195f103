"""The scorecard figure: each published figure of the study against this build, by scale.

One row per ``repro.<name>.verdict`` record that carries an interval (counts have none and
stay in the table only). The bar is this build's CI (dot: the estimate, coloured by the row's
verdict); the published figure is a black tick, or a grey span for a published range; where
the row is judged by an equivalence margin, the shaded band is the region its interval must
lie in to be "reproduced" (``extra.equivalence_low``/``equivalence_high``), so the verdict can
be read off the picture. Rows go into panels by what they measure (shares, Cohen's kappa, F1,
ratios, rating points, correlations), each panel with its own axis title in words, so no axis
mixes units. Rows are in the published file's order (``extra.order``) within a panel.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import PercentFormatter

from analysis.figures.estimates import FigureDataError, Records
from analysis.figures.style import (
    CI_COLOUR,
    MIN_FONT_PT,
    OKABE_ITO,
    TEXT_WIDTH,
    StudyFigure,
    new_figure,
    placeholder_figure,
    style_context,
)
from analysis.settings import DataNouns

NAME = "scorecard"
CODE = "analysis.figures.scorecard:scorecard_figure"
TITLE = "Published figures against this build"
#: the estimate's colour by verdict (every verdict a row can carry has one, in the legend)
VERDICT_COLOURS: dict[str, str] = {
    "reproduced": OKABE_ITO["bluish_green"],
    "inconclusive": OKABE_ITO["orange"],
    "differs": OKABE_ITO["vermillion"],
    "partial": OKABE_ITO["sky_blue"],
    "different method": OKABE_ITO["grey"],
}
OTHER_VERDICT = OKABE_ITO["black"]
#: the published value's span and the equivalence region
PUBLISHED_SPAN = "#BBBBBB"
EQUIVALENCE = "#E3F1EC"
#: (panel, axis title, pattern over the compared record's key): the first match wins
SCALES: tuple[tuple[str, str, str], ...] = (
    ("ratio", "ratio of relevance rates (model / majority)", r"over_selection"),
    ("kappa", "Cohen's kappa", r"kappa"),
    ("f1", "F1 against the majority", r"(^|\.)f1"),
    ("correlation", "Spearman correlation", r"spearman|rho"),
    ("rating", "rating points (1-5 scale)", r"mention_delta|rating|gap"),
)
SHARE = ("share", "share (percent)")
OTHER = ("value", "value")
#: characters per line of a row's label (7-pt text in about half the text width)
LABEL_WRAP = 64


@dataclass(frozen=True)
class _Row:
    label: str
    value: float
    low: float
    high: float
    published: tuple[float, float]
    region: tuple[float, float] | None
    verdict: str
    key: str
    scale: tuple[str, str]


def scale_of(compared_key: str, fmt: str) -> tuple[str, str]:
    """The panel a row goes in: by what its record measures (key), shares by their format."""
    for name, title, pattern in SCALES:
        if re.search(pattern, compared_key):
            return name, title
    return SHARE if fmt.endswith("%") else OTHER


def _number(extra: Mapping[str, Any], name: str) -> float | None:
    x = extra.get(name)
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


def _rows(records: Records) -> list[_Row]:
    out: list[tuple[int, str, _Row]] = []
    for key, rec in records.items():
        if not (key.startswith("repro.") and key.endswith(".verdict")):
            continue
        extra: Mapping[str, Any] = rec.get("extra") or {}
        low, high, value = (_number(extra, n) for n in ("ci_low", "ci_high", "estimate"))
        if low is None or high is None or value is None:
            continue
        name = key[len("repro.") : -len(".verdict")]
        pub = records.get(f"repro.{name}.published")
        if pub is None:
            raise FigureDataError(f"record {key} has no repro.{name}.published beside it")
        pextra = pub.get("extra") or {}
        span = pextra.get("range") or [pub["value"], pub["value"]]
        eq_low, eq_high = _number(extra, "equivalence_low"), _number(extra, "equivalence_high")
        # a simulated build prints its verdict with a caveat; the colour is the bare verdict's
        verdict = str(extra.get("verdict") or rec.get("text") or rec.get("display"))
        row = _Row(
            label=str(extra.get("quantity", name)),
            value=value,
            low=low,
            high=high,
            published=(float(span[0]), float(span[1])),
            region=(eq_low, eq_high) if eq_low is not None and eq_high is not None else None,
            verdict=verdict,
            key=key,
            scale=scale_of(str(extra.get("key") or name), str(pub.get("fmt") or "")),
        )
        out.append((int(extra.get("order", 0)), name, row))
    return [r for _, _, r in sorted(out, key=lambda t: (t[0], t[1]))]


def scorecard_figure(records: Records, *, nouns: DataNouns | None = None) -> StudyFigure:
    """Horizontal CI bars with the published value and the equivalence region, one panel per
    scale. ``nouns`` is accepted like every figure's; the rows are the study's own words."""
    del nouns
    caption = (
        "Each published figure of the study against this build, one panel per scale: the bar "
        "is this build's confidence interval and the dot its estimate, coloured by the verdict; "
        "the black tick is the published value (a grey span a published range) and the shaded "
        "band, where a row is judged by its equivalence margin, the region the interval must "
        "lie in for the row to be reproduced."
    )
    rows = _rows(records)
    if not rows:
        return placeholder_figure(
            NAME,
            CODE,
            title=TITLE,
            reason="no published figure has a record with an interval in this dataset",
            caption=caption,
            width=TEXT_WIDTH,
        )
    scales = list(dict.fromkeys(r.scale for r in rows))
    panels = [(scale, [r for r in rows if r.scale == scale]) for scale in scales]
    labels = {r.key: textwrap.wrap(r.label, LABEL_WRAP) for r in rows}
    heights = [sum(0.05 + 0.12 * len(labels[r.key]) for r in p) + 0.36 for _, p in panels]
    fig = new_figure(NAME, CODE, width=TEXT_WIDTH, height=0.45 + sum(heights), caption=caption)
    order = list(VERDICT_COLOURS)
    verdicts = sorted(
        {r.verdict for r in rows}, key=lambda v: order.index(v) if v in order else len(order)
    )
    with style_context():
        axes = fig.subplots(len(panels), 1, squeeze=False, gridspec_kw={"height_ratios": heights})
        for ax, ((name, title), panel) in zip(axes[:, 0], panels, strict=True):
            for y, row in enumerate(panel):
                if row.region is not None:
                    ax.fill_betweenx(
                        [y - 0.42, y + 0.42],
                        *row.region,
                        color=EQUIVALENCE,
                        zorder=0,
                        gid="margin",
                    )
                low, high = row.published
                if high > low:
                    ax.fill_betweenx(
                        [y - 0.3, y + 0.3], low, high, color=PUBLISHED_SPAN, zorder=1, gid="range"
                    )
                else:
                    ax.plot(
                        [low, low],
                        [y - 0.32, y + 0.32],
                        color="black",
                        lw=1.6,
                        zorder=3,
                        gid="published",
                    )
                ax.plot([row.low, row.high], [y, y], color=CI_COLOUR, lw=1.2, zorder=4, gid="ci")
                ax.plot(
                    [row.value],
                    [y],
                    "o",
                    ms=4,
                    color=VERDICT_COLOURS.get(row.verdict, OTHER_VERDICT),
                    markeredgecolor="white",
                    markeredgewidth=0.4,
                    zorder=5,
                    gid="estimate",
                )
            ax.set_yticks(range(len(panel)), ["\n".join(labels[r.key]) for r in panel])
            ax.set_ylim(len(panel) - 0.5, -0.5)
            ax.tick_params(axis="y", length=0, labelsize=MIN_FONT_PT)
            ax.set_xlabel(title)
            if name == "share":
                ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
            ax.grid(axis="x", color="#EEEEEE", linewidth=0.5, zorder=-1)
        handles: list[Any] = [
            Line2D(
                [],
                [],
                marker="o",
                linestyle="none",
                ms=4,
                color=VERDICT_COLOURS.get(v, OTHER_VERDICT),
                label=v,
            )
            for v in verdicts
        ]
        handles += [
            Line2D([], [], color=CI_COLOUR, lw=1.2, label="this build's interval"),
            Line2D([], [], color="black", lw=1.6, label="published value"),
        ]
        if any(r.published[1] > r.published[0] for r in rows):
            handles.append(Patch(color=PUBLISHED_SPAN, label="published range"))
        if any(r.region is not None for r in rows):
            handles.append(Patch(color=EQUIVALENCE, label="equivalence region"))
        fig.legend(handles=handles, loc="outside upper center", ncols=4, handlelength=1.4)
    fig.study.records = sorted(r.key for r in rows)
    return fig
