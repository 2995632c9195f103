"""Figure 1: the three-stage personalization pipeline and where the dataset's raters and
the LLMs judge it.

Drawn with matplotlib patches (no TikZ toolchain needed, same style and fonts as the other
figures). Each stage is a column: its input (grey), what language models do (blue) and what
the dataset's raters do (vermillion), named in the dataset's words (``data.nouns``: people in
the authors' exports, simulated raters in the bundled world). Where the dataset's size records
exist (``data.n_judgments.stage<k>`` for the final round, ``data.n_judgments.stage<k>.<round>``
for pilots), each raters' box says how many of their judgments the dataset holds for that
stage, so the diagram is also a summary of the data that built this PDF.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from matplotlib.axes import Axes
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch

from analysis.figures.estimates import Records, estimate
from analysis.figures.style import (
    KIND_COLOURS,
    MIN_FONT_PT,
    TEXT_WIDTH,
    StudyFigure,
    new_figure,
    style_context,
)
from analysis.settings import NEUTRAL_NOUNS, DataNouns

NAME = "pipeline"
CODE = "analysis.figures.pipeline:pipeline_figure"
#: box fills: light tints of the kind colours, so black text stays readable
FILL = {"data": "#EFEFEF", "model": "#D7E6F2", "human": "#F8DCCB"}
EDGE = {"data": "#8C8C8C", "model": KIND_COLOURS["model"], "human": KIND_COLOURS["human"]}


@dataclass(frozen=True)
class Stage:
    """One column of the diagram: its title and the text of its three boxes.

    ``{People}``, ``{people}`` and ``{chat_users}`` are the dataset's nouns (``data.nouns``),
    filled in when the figure is drawn: the bundled world's raters are simulated raters.
    """

    number: int
    title: str
    data: str
    model: str
    human: str
    handoff: str  # what flows to the next stage (empty for the last; its data box names it)
    handoff_from: str = "model"  # the box it flows from: "model" or "human"


STAGES: tuple[Stage, ...] = (
    Stage(
        1,
        "Attribute extraction",
        "A user's chat history ({chat_users} and benchmark personas)",
        "An extractor writes attributes, each with a reason and a confidence; verifiers say "
        "whether each is supported",
        "{People} judge each attribute: accepted, uncertain or rejected",
        "attributes",
    ),
    Stage(
        2,
        "Relevance matching",
        "The user's attributes and a new prompt",
        "Models and retrieval baselines: should this attribute change the response? (yes / no)",
        "{People} vote yes / no; their majority is the reference",
        "relevant attributes",
        "human",
    ),
    Stage(
        3,
        "Response generation",
        "The prompt and the attributes the majority found relevant",
        "Models write a generic and a personalized response; model judges rate them (1-5)",
        "{People} rate personalized against generic, side by side (1-5)",
        "",
    ),
)
#: characters per line in a box (7-pt text in a third of the text width)
WRAP = 31

#: layout in data units: columns of width 10, boxes at these heights
_COL_W, _PAD = 10.0, 0.35
_ROWS = {"data": (6.95, 8.5), "model": (4.0, 6.15), "human": (0.95, 3.1)}


def judgment_counts(records: Records, stage: int) -> tuple[str, list[str]]:
    """``("<count> judgments", [keys])`` for a stage from the size records, or ``("", [])``.

    The final round's count (``data.n_judgments.stage<k>``) when present, else every pilot
    round's count (``data.n_judgments.stage<k>.<round>``) with its round named. The box it
    goes in already says who judged (the dataset's noun), so the count says only how many.
    """
    final = estimate(records, f"data.n_judgments.stage{stage}")
    if final is not None:
        return f"{int(final.value):,} judgments", [final.key]
    prefix = f"data.n_judgments.stage{stage}."
    keys = sorted(k for k in records if k.startswith(prefix))
    if not keys:
        return "", []
    parts = []
    for key in keys:
        est = estimate(records, key)
        assert est is not None
        parts.append(f"{int(est.value):,} ({key[len(prefix) :]})")
    return "judgments:\n" + ", ".join(parts), keys


def stage_texts(stage: Stage, nouns: DataNouns) -> dict[str, str]:
    """The three boxes' texts of a stage in the dataset's words."""
    return {
        kind: "\n".join(textwrap.wrap(nouns.fill(text), WRAP))
        for kind, text in (("data", stage.data), ("model", stage.model), ("human", stage.human))
    }


def _box(ax: Axes, x0: float, y0: float, x1: float, y1: float, kind: str, text: str) -> None:
    ax.add_patch(
        FancyBboxPatch(
            (x0, y0),
            x1 - x0,
            y1 - y0,
            boxstyle="round,pad=0,rounding_size=0.35",
            facecolor=FILL[kind],
            edgecolor=EDGE[kind],
            linewidth=0.9,
            gid=f"box-{kind}",
        )
    )
    ax.text(
        (x0 + x1) / 2,
        (y0 + y1) / 2,
        text,
        ha="center",
        va="center",
        fontsize=MIN_FONT_PT,
        linespacing=1.2,
    )


def _arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float], gid: str) -> None:
    ax.add_patch(
        FancyArrowPatch(
            start,
            end,
            arrowstyle="-|>",
            mutation_scale=8,
            linewidth=0.9,
            color="#444444",
            shrinkA=0,
            shrinkB=0,
            zorder=3,
            gid=gid,
        )
    )


def pipeline_figure(
    records: Records | None = None, *, nouns: DataNouns | None = None
) -> StudyFigure:
    """The pipeline diagram; ``records`` (the dataset size records) add per-stage counts and
    ``nouns`` (``data.nouns``) name the raters and users as the dataset does."""
    records = records or {}
    nouns = nouns or NEUTRAL_NOUNS
    fig = new_figure(
        NAME,
        CODE,
        width=TEXT_WIDTH,
        height=2.9,
        caption=(
            "The three-stage personalization pipeline: in each stage models act (blue) and "
            f"{nouns.people} judge the same items (vermillion)."
        ),
    )
    used: list[str] = []
    with style_context():
        ax = fig.add_subplot()
        ax.set_xlim(0, _COL_W * len(STAGES))
        ax.set_ylim(0, 10)
        ax.set_axis_off()
        for i, stage in enumerate(STAGES):
            x0, x1 = i * _COL_W + _PAD, (i + 1) * _COL_W - _PAD
            ax.add_patch(
                FancyBboxPatch(
                    (x0, 0.3),
                    x1 - x0,
                    9.4,
                    boxstyle="round,pad=0,rounding_size=0.5",
                    facecolor="white",
                    edgecolor="#BBBBBB",
                    linewidth=0.7,
                    zorder=0,
                    gid="stage",
                )
            )
            ax.text(
                (x0 + x1) / 2,
                9.05,
                f"Stage {stage.number}: {stage.title}",
                ha="center",
                va="center",
                fontsize=8,
                fontweight="bold",
            )
            bx0, bx1 = x0 + 0.45, x1 - 0.45
            count, keys = judgment_counts(records, stage.number)
            used += keys
            texts = stage_texts(stage, nouns)
            texts["human"] += f"\n{count}" if count else ""
            for kind, text in texts.items():
                y0, y1 = _ROWS[kind]
                _box(ax, bx0, y0, bx1, y1, kind, text)
            mid = (x0 + x1) / 2
            _arrow(ax, (mid, _ROWS["data"][0]), (mid, _ROWS["model"][1]), "flow")
            _arrow(ax, (mid, _ROWS["model"][0]), (mid, _ROWS["human"][1]), "flow")
            if stage.handoff:
                start = (bx1, sum(_ROWS[stage.handoff_from]) / 2)
                end = ((i + 1) * _COL_W + _PAD + 0.45, sum(_ROWS["data"]) / 2)
                _arrow(ax, start, end, "handoff")
        handles = [
            Patch(facecolor=FILL[k], edgecolor=EDGE[k], linewidth=0.9, label=label)
            for k, label in (
                ("data", "input"),
                ("model", "models and baselines"),
                ("human", nouns.people),
            )
        ]
        fig.legend(handles=handles, loc="outside lower center", ncols=3, handlelength=1.4)
    fig.study.records = sorted(used)
    return fig
