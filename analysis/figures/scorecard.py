"""The scorecard figure: each reproduced interval as a bar, the published figure marked.

One row per ``repro.<name>.verdict`` record that carries an interval (counts have none and
stay in the table only). The bar is this build's CI (dot: the estimate); the published
figure is a vertical tick, or a shaded span for a published range ("40-60%"), and a lighter
span marks its equivalence region (published value or range +/- the entry's margin, which the
verdict holds the interval against). Quantities on
a bounded scale (shares, kappas, F1, correlations, rating gaps) share the left panel; ratios
(over-selection) have their own, so neither squashes the other. Rows are in the published
file's order (``extra.order``); the verdict label ends each row's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from analysis.figures.estimates import FigureDataError, Records
from analysis.figures.style import (
    CI_COLOUR,
    KIND_COLOURS,
    REFERENCE_COLOUR,
    TEXT_WIDTH,
    StudyFigure,
    new_figure,
    placeholder_figure,
    style_context,
)

NAME = "scorecard"
CODE = "analysis.figures.scorecard:scorecard_figure"
TITLE = "Published figures against this build"
#: a quantity whose interval and published value lie in [-BOUNDED, BOUNDED] goes left
BOUNDED = 1.0


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


def _rows(records: Records) -> list[_Row]:
    out: list[tuple[int, str, _Row]] = []
    for key, rec in records.items():
        if not (key.startswith("repro.") and key.endswith(".verdict")):
            continue
        extra: Mapping[str, Any] = rec.get("extra") or {}
        low, high, value = extra.get("ci_low"), extra.get("ci_high"), extra.get("estimate")
        if low is None or high is None or value is None:
            continue
        name = key[len("repro.") : -len(".verdict")]
        pub = records.get(f"repro.{name}.published")
        if pub is None:
            raise FigureDataError(f"record {key} has no repro.{name}.published beside it")
        pextra = pub.get("extra") or {}
        span = pextra.get("range") or [pub["value"], pub["value"]]
        eq_low, eq_high = extra.get("equivalence_low"), extra.get("equivalence_high")
        region = None if eq_low is None or eq_high is None else (float(eq_low), float(eq_high))
        row = _Row(
            label=f"{extra.get('quantity', name)}: {rec.get('display')}",
            value=float(value),
            low=float(low),
            high=float(high),
            published=(float(span[0]), float(span[1])),
            region=region,
            verdict=str(rec.get("display")),
            key=key,
        )
        out.append((int(extra.get("order", 0)), name, row))
    return [r for _, _, r in sorted(out, key=lambda t: (t[0], t[1]))]


def _bounded(row: _Row) -> bool:
    return max(abs(row.low), abs(row.high), *map(abs, row.published)) <= BOUNDED


def scorecard_figure(records: Records) -> StudyFigure:
    """Horizontal CI bars with the published value marked, in two panels by scale."""
    caption = (
        "Each published figure of the study against this build: the bar is this build's "
        "confidence interval (dot: the estimate), the tick the published value, the shaded "
        "span a published range, the light span the equivalence region."
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
    panels = [
        p for p in ([r for r in rows if _bounded(r)], [r for r in rows if not _bounded(r)]) if p
    ]
    n_rows = sum(len(p) for p in panels)
    fig = new_figure(NAME, CODE, width=TEXT_WIDTH, height=0.9 + 0.22 * n_rows, caption=caption)
    with style_context():
        axes = fig.subplots(
            len(panels), 1, squeeze=False, gridspec_kw={"height_ratios": [len(p) for p in panels]}
        )[:, 0]
        for ax, panel in zip(axes, panels, strict=True):
            for y, row in enumerate(panel):
                if row.region is not None and row.region[1] > row.region[0]:
                    ax.fill_betweenx(
                        [y - 0.35, y + 0.35],
                        *row.region,
                        color="#F0F0F0",
                        zorder=0.5,
                        gid="margin",
                    )
                low, high = row.published
                if high > low:
                    ax.fill_betweenx(
                        [y - 0.35, y + 0.35], low, high, color="#DDDDDD", zorder=1, gid="range"
                    )
                else:
                    ax.plot(
                        [low, low],
                        [y - 0.35, y + 0.35],
                        color="black",
                        lw=1.6,
                        zorder=3,
                        gid="published",
                    )
                colour = (
                    KIND_COLOURS["model"] if row.verdict == "reproduced" else KIND_COLOURS["human"]
                )
                ax.plot([row.low, row.high], [y, y], color=CI_COLOUR, lw=1.2, zorder=4, gid="ci")
                ax.plot([row.value], [y], "o", ms=3.5, color=colour, zorder=5, gid="estimate")
            ax.set_yticks(range(len(panel)), [r.label for r in panel])
            ax.set_ylim(len(panel) - 0.5, -0.5)
            ax.tick_params(axis="y", length=0, labelsize=6.5)
            ax.axvline(0.0, color=REFERENCE_COLOUR, lw=0.5, ls=":", zorder=0)
        axes[-1].set_xlabel("value (shares as fractions)")
    fig.study.records = sorted(r.key for r in rows)
    return fig
