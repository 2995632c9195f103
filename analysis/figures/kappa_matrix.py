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

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib import colormaps
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
    MISSING_COLOUR,
    SEQUENTIAL_CMAP,
    TEXT_WIDTH,
    StudyFigure,
    new_figure,
    placeholder_figure,
    style_context,
)

#: the largest side of one matrix cell (inches): a few raters do not make giant cells
MAX_CELL_INCHES = 0.36
NAME = "kappa_matrix"
CODE = "analysis.figures.kappa_matrix:kappa_matrix_figure"
TITLE = "Pairwise Cohen's kappa over human and model raters"
MATRIX_COLUMNS = ("round", "rater_a", "rater_b", "kind_a", "kind_b", "order_a", "order_b", "kappa")
GROUPS = (
    ("human_human", "human-human"),
    ("model_model", "model-model"),
    ("human_model", "human-model"),
)
#: cells are annotated with their value up to this many raters per panel
MAX_ANNOTATED = 12


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


def kappa_matrix_figure(matrix: pd.DataFrame, records: Records) -> StudyFigure:
    """One heatmap per round with human/model blocks marked and group means from the records."""
    missing = [c for c in MATRIX_COLUMNS if c not in matrix.columns]
    if missing:
        raise FigureDataError(f"kappa matrix table: missing column(s) {missing}")
    caption = (
        "Pairwise Cohen's kappa between every human and model rater of stage 2, each cell on "
        "the items the pair shares; lines mark the human and model blocks."
    )
    rounds = round_order(matrix["round"].astype(str).unique())
    if not rounds:
        return placeholder_figure(
            NAME,
            CODE,
            title=TITLE,
            reason="no stage-2 round has two raters with shared relevance votes",
            caption=caption,
            width=TEXT_WIDTH,
        )
    panels = [(r, *matrix_of_round(matrix, r)) for r in rounds]
    finite = np.concatenate([p[1][np.isfinite(p[1])] for p in panels])
    vmin = min(0.0, math.floor(float(finite.min()) * 10) / 10) if finite.size else 0.0
    norm = Normalize(vmin=vmin, vmax=1.0)
    sizes = [len(p[2]) for p in panels]
    # Cells as large as the text width allows after each panel's rater names (~1 in) and the
    # colour bar (~1.1 in), so that one round's matrix fills the width instead of leaving it
    # empty beside a figure height chosen for several rounds.
    cell = min(MAX_CELL_INCHES, (TEXT_WIDTH - 1.1 - 1.0 * len(panels)) / sum(sizes))
    height = 1.9 + cell * max(sizes)
    fig = new_figure(
        NAME,
        CODE,
        width=TEXT_WIDTH,
        height=height,
        caption=(
            f"{caption} Rounds: {', '.join(rounds)}. Group means below each panel with their "
            f"intervals. {CI_NOTE}"
        ),
    )
    used: list[str] = []
    with style_context():
        cmap = colormaps[SEQUENTIAL_CMAP].with_extremes(bad=MISSING_COLOUR)
        grid = GridSpec(1, len(panels), figure=fig, width_ratios=sizes)
        image = None
        axes = []
        for i, (rnd, values, raters, kinds) in enumerate(panels):
            ax = fig.add_subplot(grid[0, i])
            axes.append(ax)
            n = len(raters)
            # seaborn's heatmap: undefined cells (the diagonal, pairs without shared items)
            # masked, each cell annotated with its kappa in a colour that contrasts with it
            sns.heatmap(
                pd.DataFrame(values, index=raters, columns=raters),
                ax=ax,
                cmap=cmap,
                norm=norm,
                mask=~np.isfinite(values),
                annot=n <= MAX_ANNOTATED,
                fmt=".2f",
                annot_kws={"fontsize": 5.5 if n > 8 else 6.5},
                square=True,
                cbar=False,
                xticklabels=True,
                yticklabels=True,
            )
            image = ax.collections[0]
            image.set_gid(f"kappa-{rnd}")
            ax.tick_params(axis="x", labelrotation=90, labelsize=6 if n > 8 else 7, length=0)
            ax.tick_params(axis="y", labelrotation=0, labelsize=6 if n > 8 else 7, length=0)
            for tick, kind in zip(ax.get_yticklabels(), kinds, strict=True):
                tick.set_color(KIND_COLOURS.get(kind, "black"))
            for tick, kind in zip(ax.get_xticklabels(), kinds, strict=True):
                tick.set_color(KIND_COLOURS.get(kind, "black"))
            for spine in ax.spines.values():
                spine.set_visible(True)
                spine.set_linewidth(0.5)
            n_h = sum(k == "human" for k in kinds)
            if 0 < n_h < n:  # cell edges are at whole numbers in a seaborn heatmap
                for pos in (ax.axhline, ax.axvline):
                    pos(n_h, color="white", linewidth=2.2, gid="block")
            for lo, hi, kind, word in ((0, n_h, "human", "humans"), (n_h, n, "model", "models")):
                if hi > lo:
                    ax.text(
                        (lo + hi) / 2,
                        -0.15,
                        word,
                        ha="center",
                        va="bottom",
                        fontsize=6.5,
                        fontstyle="italic",
                        color=KIND_COLOURS[kind],
                        gid="block-label",
                    )
            ax.set_title(f"{rnd} round", fontsize=7.5, pad=11)
            means = []
            for group, label in GROUPS:
                est = estimate(records, f"stage2.{rnd}.kappa.{group}")
                if est is not None:
                    used.append(est.key)
                    means.append(f"mean {label}: {interval_text(est)}")
            if means:
                ax.set_xlabel("\n".join(means), fontsize=6.5, labelpad=4)
        assert image is not None
        cbar = fig.colorbar(image, ax=axes, shrink=0.7, aspect=25, pad=0.02)
        cbar.set_label("Cohen's kappa")
        cbar.outline.set_linewidth(0.5)
    fig.study.records = sorted(used)
    return fig
