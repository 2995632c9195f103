"""Figure 3: the full pairwise Cohen's kappa matrix over every human and model rater.

One panel per stage-2 round in the matrix table that rule ``stage2_statistics`` writes
(``results/<dataset>/stage2/kappa_matrix.parquet``, long format: both orders of each pair,
no diagonal; display order humans then models): the final round on the bundled world, the
pilot rounds where a dataset has individual human votes only there. Lines and labels mark the
human and model blocks; each cell prints its kappa (when the matrix is small enough to read).
Under each panel, the group means with their CIs come from the records
``stage2.<round>.kappa.{human_human,model_model,human_model}``.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib import colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.gridspec import GridSpec

from analysis.figures.estimates import (
    CI_NOTE,
    FigureDataError,
    Records,
    estimate,
    interval_text,
    round_order,
)
from analysis.figures.style import (
    KIND_COLOURS,
    MIN_FONT_PT,
    MISSING_COLOUR,
    SEQUENTIAL_CMAP,
    TEXT_WIDTH,
    StudyFigure,
    new_figure,
    placeholder_figure,
    style_context,
)
from analysis.settings import NEUTRAL_NOUNS, DataNouns

#: the largest width of one matrix cell (inches): a few raters do not make giant cells
MAX_CELL_INCHES = 0.6
#: a cell at least this wide (inches) prints its interval under its kappa, at 7 pt
CI_CELL_INCHES = 0.5
#: the height of a cell that prints two lines (inches)
CI_CELL_HEIGHT = 0.3
#: a cell at least this wide prints its kappa
VALUE_CELL_INCHES = 0.3
#: inches per character of a 7-pt rater name (DejaVu Sans), to leave room for the names
CHAR_INCHES = 0.056
#: characters per line of the note on raters left out
NOTE_WRAP = 115
NAME = "kappa_matrix"
CODE = "analysis.figures.kappa_matrix:kappa_matrix_figure"
#: the placeholder's title; ``{people}`` in the dataset's words
TITLE = "Pairwise Cohen's kappa over the {people} and the models"
MATRIX_COLUMNS = ("round", "rater_a", "rater_b", "kind_a", "kind_b", "order_a", "order_b", "kappa")
#: the group means under a panel: record suffix and its words (``{people}``: the dataset's noun)
GROUPS = (
    ("human_human", "{people} with {people}"),
    ("model_model", "models with models"),
    ("human_model", "{people} with models"),
)


def matrix_of_round(
    matrix: pd.DataFrame, round_name: str
) -> tuple[np.ndarray, list[str], list[str]]:
    """The square kappa matrix of one round (NaN diagonal / undefined cells), raters, kinds.

    Raters are ordered by the table's display order (``order_a``); a pair present in one order
    only is mirrored (kappa is symmetric). Conflicting orders or kinds are errors.
    """
    df = matrix.loc[matrix["round"].astype(str) == round_name]
    order: dict[str, int] = {}
    kinds: dict[str, str] = {}
    for side in ("a", "b"):
        for rater, pos, kind in zip(
            df[f"rater_{side}"].astype(str),
            df[f"order_{side}"],
            df[f"kind_{side}"].astype(str),
            strict=True,
        ):
            if (
                order.setdefault(rater, int(pos)) != int(pos)
                or kinds.setdefault(rater, kind) != kind
            ):
                raise FigureDataError(
                    f"kappa matrix, round {round_name}: rater {rater!r} has conflicting fields "
                    "'order_*' or 'kind_*'"
                )
    raters = sorted(order, key=lambda r: (order[r], r))
    index = {r: i for i, r in enumerate(raters)}
    n = len(raters)
    values = np.full((n, n), np.nan)
    a = df["rater_a"].astype(str).map(index).to_numpy()
    b = df["rater_b"].astype(str).map(index).to_numpy()
    k = df["kappa"].to_numpy(dtype=float)
    values[a, b] = k
    mirror = np.isnan(values.T) & np.isfinite(values)
    values.T[mirror] = values[mirror]
    off = ~np.eye(n, dtype=bool)
    sym = np.isfinite(values) & np.isfinite(values.T) & off
    if not np.allclose(values[sym], values.T[sym]):
        raise FigureDataError(f"kappa matrix, round {round_name}: field 'kappa' is not symmetric")
    np.fill_diagonal(values, np.nan)
    return values, raters, [kinds[r] for r in raters]


def cell_intervals(matrix: pd.DataFrame, round_name: str, raters: list[str]) -> np.ndarray:
    """``(n, n, 2)``: each cell's interval from the table's ``ci_low``/``ci_high`` (NaN where the
    table has none), in the order of ``raters``; symmetric as the kappas are."""
    n = len(raters)
    out = np.full((n, n, 2), np.nan)
    if not {"ci_low", "ci_high"} <= set(matrix.columns):
        return out
    index = {r: i for i, r in enumerate(raters)}
    df = matrix.loc[matrix["round"].astype(str) == round_name]
    a = df["rater_a"].astype(str).map(index)
    b = df["rater_b"].astype(str).map(index)
    keep = a.notna() & b.notna()
    ai, bi = a[keep].astype(int).to_numpy(), b[keep].astype(int).to_numpy()
    for j, col in enumerate(("ci_low", "ci_high")):
        vals = df.loc[keep, col].to_numpy(dtype=float)
        out[ai, bi, j] = vals
        out[bi, ai, j] = vals
    return out


def left_out_raters(matrix: pd.DataFrame, round_name: str) -> list[str]:
    """Raters of a round that the group means leave out (``in_group_means`` false on every
    pair they are in): the exercise-only model of ``stages.caveats``."""
    if "in_group_means" not in matrix.columns:
        return []
    df = matrix.loc[matrix["round"].astype(str) == round_name]
    raters = sorted(set(df["rater_a"].astype(str)) | set(df["rater_b"].astype(str)))
    inside = df.loc[df["in_group_means"].astype(bool)]
    kept = set(inside["rater_a"].astype(str)) | set(inside["rater_b"].astype(str))
    return [r for r in raters if r not in kept]


def caveat_of(records: Records, rater: str) -> str | None:
    """The caveat the records carry for ``rater`` (``extra.caveat`` of any record about it)."""
    for key in sorted(records):
        if key.endswith(f".{rater}"):
            extra = records[key].get("extra") or {}
            if isinstance(extra, dict) and extra.get("caveat"):
                return str(extra["caveat"])
    return None


def colour_range(values: list[np.ndarray]) -> tuple[float, float]:
    """The colour scale's ends: the data's smallest and largest kappa rounded outward to a
    tenth (0 included), so the colours span the values drawn, not the whole -1..1 range."""
    finite = np.concatenate([v[np.isfinite(v)] for v in values]) if values else np.empty(0)
    if not finite.size:
        return 0.0, 1.0
    low = min(0.0, math.floor(float(finite.min()) * 10) / 10)
    high = max(low + 0.1, math.ceil(float(finite.max()) * 10) / 10)
    return low, min(high, 1.0)


def kappa_matrix_figure(
    matrix: pd.DataFrame, records: Records, *, nouns: DataNouns | None = None
) -> StudyFigure:
    """One heatmap per round with human/model blocks marked, each cell's kappa with its
    interval where there is room, group means from the records, and the raters the group means
    leave out named under the panels instead of drawn."""
    missing = [c for c in MATRIX_COLUMNS if c not in matrix.columns]
    if missing:
        raise FigureDataError(f"kappa matrix table: missing column(s) {missing}")
    nouns = nouns or NEUTRAL_NOUNS
    caption = (
        f"Pairwise Cohen's kappa between every two raters of stage 2 ({nouns.people} and "
        "models), each cell on the items the pair shares; lines mark the blocks."
    )
    rounds = round_order(matrix["round"].astype(str).unique())
    if not rounds:
        return placeholder_figure(
            NAME,
            CODE,
            title=nouns.fill(TITLE),
            reason="no stage-2 round has two raters with shared relevance votes",
            caption=caption,
            width=TEXT_WIDTH,
        )
    panels = []
    left_out: dict[str, list[str]] = {}
    for rnd in rounds:
        values, raters, kinds = matrix_of_round(matrix, rnd)
        out = left_out_raters(matrix, rnd)
        keep = [i for i, r in enumerate(raters) if r not in out]
        if out:
            left_out[rnd] = out
        cis = cell_intervals(matrix, rnd, raters)[np.ix_(keep, keep)]
        values = values[np.ix_(keep, keep)]
        panels.append((rnd, values, [raters[i] for i in keep], [kinds[i] for i in keep], cis))
    panels = [p for p in panels if len(p[2]) >= 2]
    # the rounds where people and models meet carry the comparison; a round of one kind only
    # (a pilot of people, a final round of model votes) leaves its group means to the table
    mixed = [p for p in panels if len(set(p[3])) > 1]
    others = [p[0] for p in panels if p not in mixed] if mixed else []
    panels = mixed or panels
    if not panels:
        return placeholder_figure(
            NAME,
            CODE,
            title=nouns.fill(TITLE),
            reason="no stage-2 round has two raters in the group means",
            caption=caption,
            width=TEXT_WIDTH,
        )
    low, high = colour_range([p[1] for p in panels])
    norm = Normalize(vmin=low, vmax=high)
    sizes = [len(p[2]) for p in panels]
    label_inches = max(len(r) for p in panels for r in p[2]) * CHAR_INCHES + 0.15
    cell = min(MAX_CELL_INCHES, (TEXT_WIDTH - label_inches * len(panels)) / sum(sizes))
    with_ci = cell >= CI_CELL_INCHES
    annotated = cell >= VALUE_CELL_INCHES
    cell_h = CI_CELL_HEIGHT if with_ci else cell
    notes = [
        f"Not drawn: {', '.join(raters)} ({rnd} round), left out of the matrix and of the "
        f"group means" + (f": {caveat}" if (caveat := caveat_of(records, raters[0])) else ".")
        for rnd, raters in left_out.items()
    ]
    note_lines = sum(len(textwrap.wrap(n, NOTE_WRAP)) for n in notes)
    height = 1.35 + label_inches + cell_h * max(sizes) + 0.13 * note_lines
    what = (
        "each cell: kappa and its interval"
        if with_ci
        else ("each cell: kappa (intervals in the audit site)" if annotated else "")
    )
    fig = new_figure(
        NAME,
        CODE,
        width=TEXT_WIDTH,
        height=height,
        caption=(
            f"{caption} Rounds: {', '.join(r for r, *_ in panels)}; {what or 'cells by colour'}. "
            + (
                f"Rounds with raters of one kind only ({', '.join(others)}) are in the "
                "agreement table. "
                if others
                else ""
            )
            + f"The colour scale runs from {low:g} to {high:g}, the range of the values drawn. "
            + f"Group means below each panel with their intervals. {' '.join(notes)} {CI_NOTE}"
        ),
    )
    used: list[str] = []
    with style_context():
        cmap = colormaps[SEQUENTIAL_CMAP].with_extremes(bad=MISSING_COLOUR)
        grid = GridSpec(1, len(panels), figure=fig, width_ratios=sizes)
        axes = []
        for i, (rnd, values, raters, kinds, cis) in enumerate(panels):
            ax = fig.add_subplot(grid[0, i])
            axes.append(ax)
            n = len(raters)
            # seaborn's heatmap: undefined cells (the diagonal, pairs without shared items)
            # masked; the annotations are written below, two lines when the interval fits
            sns.heatmap(
                pd.DataFrame(values, index=raters, columns=raters),
                ax=ax,
                cmap=cmap,
                norm=norm,
                mask=~np.isfinite(values),
                annot=False,
                square=False,
                cbar=False,
                xticklabels=True,
                yticklabels=True,
            )
            ax.set_aspect(cell_h / cell)
            image = ax.collections[0]
            image.set_gid(f"kappa-{rnd}")
            ax.tick_params(axis="x", labelrotation=90, labelsize=MIN_FONT_PT, length=0)
            ax.tick_params(axis="y", labelrotation=0, labelsize=MIN_FONT_PT, length=0)
            for tick, kind in zip(ax.get_yticklabels(), kinds, strict=True):
                tick.set_color(KIND_COLOURS.get(kind, "black"))
            for tick, kind in zip(ax.get_xticklabels(), kinds, strict=True):
                tick.set_color(KIND_COLOURS.get(kind, "black"))
            for spine in ax.spines.values():
                spine.set_visible(True)
                spine.set_linewidth(0.5)
            if annotated:
                for (r, c), v in np.ndenumerate(values):
                    if not np.isfinite(v):
                        continue
                    text = f"{v:.2f}"
                    lo, hi = cis[r, c]
                    if with_ci and np.isfinite(lo) and np.isfinite(hi):
                        text += f"\n{lo:.2f}\u2013{hi:.2f}"
                    ax.text(
                        c + 0.5,
                        r + 0.5,
                        text,
                        ha="center",
                        va="center",
                        fontsize=MIN_FONT_PT,
                        linespacing=1.1,
                        color="white" if norm(v) < 0.5 else "black",
                        gid="cell",
                    )
            n_h = sum(k == "human" for k in kinds)
            if 0 < n_h < n:  # cell edges are at whole numbers in a seaborn heatmap
                for pos in (ax.axhline, ax.axvline):
                    pos(n_h, color="white", linewidth=2.2, gid="block")
            blocks = ((0, n_h, "human", nouns.people), (n_h, n, "model", "models"))
            for lo_i, hi_i, kind, word in blocks:
                if hi_i > lo_i:
                    ax.text(
                        (lo_i + hi_i) / 2,
                        -0.15,
                        word,
                        ha="center",
                        va="bottom",
                        fontsize=MIN_FONT_PT,
                        fontstyle="italic",
                        color=KIND_COLOURS[kind],
                        gid="block-label",
                    )
            ax.set_title(f"{rnd} round", fontsize=8, pad=12)
            means = []
            for group, label in GROUPS:
                est = estimate(records, f"stage2.{rnd}.kappa.{group}")
                if est is not None:
                    used.append(est.key)
                    words = label.format(people=nouns.people)
                    means.append(f"mean, {words}: {interval_text(est)}")
            if means:
                ax.set_xlabel("\n".join(means), fontsize=MIN_FONT_PT, labelpad=4)
        cbar = fig.colorbar(
            ScalarMappable(norm=norm, cmap=cmap),
            ax=axes,
            orientation="horizontal",
            shrink=0.45,
            aspect=30,
            pad=0.02,
        )
        cbar.set_label(f"Cohen's kappa (colour scale {low:g} to {high:g}: the values' range)")
        cbar.ax.tick_params(labelsize=MIN_FONT_PT)
        cbar.outline.set_linewidth(0.5)
        if notes:  # a figure-level label: the layout keeps it clear of the colour bar
            note = fig.supxlabel(
                "\n".join(line for n in notes for line in textwrap.wrap(n, NOTE_WRAP)),
                x=0.01,
                ha="left",
                fontsize=MIN_FONT_PT,
                color="#333333",
            )
            note.set_gid("left-out")
    fig.study.records = sorted(used)
    return fig
