"""Values and confidence intervals read from number records, and how figures draw them.

A figure never recomputes an interval: it draws the ``ci_low``/``ci_high`` a statistics rule
wrote into the record, so the figure and the paper's text can never disagree. Intervals are
drawn as line segments from ``ci_low`` to ``ci_high`` (not as offsets from the point), which
stays correct when a bootstrap percentile interval does not contain the point estimate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection

from analysis.figures.style import CI_COLOUR

#: record dicts as ``numbers.json`` / ``merge_record_files`` hold them: key -> record
Records = Mapping[str, Mapping[str, Any]]


class FigureDataError(ValueError):
    """A record or table a figure reads is malformed; the message names the key or column."""


@dataclass(frozen=True)
class RecordPoint:
    """One record's value and interval as a figure draws it (``None`` bounds: no CI).

    A plotting row read back from ``numbers.json`` (it keeps the key and the record for
    labels), not an interval type: intervals are made only in :mod:`analysis.stats.records`.
    """

    key: str
    value: float
    low: float | None
    high: float | None
    record: Mapping[str, Any]

    @property
    def has_ci(self) -> bool:
        return self.low is not None and self.high is not None


def _number(key: str, field: str, raw: Any) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise FigureDataError(f"record {key}: field '{field}' = {raw!r} is not a number")
    value = float(raw)
    if not math.isfinite(value):
        raise FigureDataError(f"record {key}: field '{field}' = {raw!r} is not finite")
    return value


def estimate(records: Records, key: str) -> RecordPoint | None:
    """The record ``key`` as an :class:`RecordPoint`, or ``None`` when the dataset lacks it."""
    rec = records.get(key)
    if rec is None:
        return None
    if not isinstance(rec, Mapping) or "value" not in rec:
        raise FigureDataError(f"record {key}: has no field 'value'")
    value = _number(key, "value", rec["value"])
    assert value is not None
    low = _number(key, "ci_low", rec.get("ci_low"))
    high = _number(key, "ci_high", rec.get("ci_high"))
    if (low is None) != (high is None):
        raise FigureDataError(f"record {key}: has only one of 'ci_low' and 'ci_high'")
    if low is not None and high is not None and low > high:
        raise FigureDataError(f"record {key}: 'ci_low' {low} is above 'ci_high' {high}")
    return RecordPoint(key=key, value=value, low=low, high=high, record=rec)


def caveat_of_record(record: Mapping[str, Any]) -> str | None:
    """The caveat a record carries (``extra.caveat``, from ``stages.caveats``): a model whose
    numbers the paper must not read as an annotator's (the exercise-only local model). Main
    figures leave such a rater out and name it; the paper's appendix shows its numbers."""
    extra = record.get("extra") or {}
    return str(extra["caveat"]) if isinstance(extra, Mapping) and extra.get("caveat") else None


def estimates_under(records: Records, prefix: str) -> dict[str, RecordPoint]:
    """``name -> RecordPoint`` for every key ``<prefix>.<name>`` (names may contain dots,
    as model ids like ``gpt-5.4`` do), sorted by name."""
    head = prefix.rstrip(".") + "."
    out = {}
    for key in sorted(records):
        if key.startswith(head) and len(key) > len(head):
            est = estimate(records, key)
            assert est is not None
            out[key[len(head) :]] = est
    return out


def draw_intervals(
    ax: Axes,
    positions: Sequence[float],
    estimates: Sequence[RecordPoint],
    *,
    horizontal: bool = False,
    color: str = CI_COLOUR,
    linewidth: float = 1.0,
    cap: float = 0.0,
) -> LineCollection | None:
    """Draw each estimate's CI as a segment at its position; estimates without a CI are skipped.

    ``horizontal`` draws intervals along x (positions on y). ``cap`` > 0 adds end caps of that
    half-width in position units. Returns the collection (``gid="ci"``) or ``None`` when no
    estimate has an interval.
    """
    if len(positions) != len(estimates):
        raise ValueError("draw_intervals: one position per estimate")
    segs = []
    for pos, est in zip(positions, estimates, strict=True):
        if not est.has_ci:
            continue
        lo, hi = float(est.low), float(est.high)  # type: ignore[arg-type]
        pts = [((lo, pos), (hi, pos))] if horizontal else [((pos, lo), (pos, hi))]
        if cap > 0:
            for end in (lo, hi):
                pts.append(
                    ((end, pos - cap), (end, pos + cap))
                    if horizontal
                    else ((pos - cap, end), (pos + cap, end))
                )
        segs.extend(pts)
    if not segs:
        return None
    coll = LineCollection(
        np.asarray(segs, dtype=float), colors=color, linewidths=linewidth, zorder=4
    )
    coll.set_gid("ci")
    ax.add_collection(coll)
    ax.autoscale_view()
    return coll


def interval_text(est: RecordPoint, fmt: str = ".2f") -> str:
    """``0.43 [0.38, 0.48]`` (or the value alone without a CI), for labels on a figure."""
    text = format(est.value, fmt)
    if est.has_ci:
        text += f" [{format(est.low, fmt)}, {format(est.high, fmt)}]"
    return text


def round_order(rounds: Sequence[str]) -> list[str]:
    """Rounds in the order the paper reports them: ``final``, ``pilot``, then the rest sorted."""
    present = sorted(set(map(str, rounds)))
    head = [r for r in ("final", "pilot") if r in present]
    return head + [r for r in present if r not in head]


CI_NOTE = (
    "Intervals are the records' confidence intervals (method and resampling unit on each "
    "number's page of the audit site)."
)
