"""The one registry of the study's figures: what each draws from and how the paper describes it.

``workflow/rules/figures.smk`` generates one rule ``<name>_figure`` per entry (inputs, outputs,
report caption ``workflow/report/figure_<name>.rst``, log), and the rule script calls the
entry's function, so adding a figure is one entry here plus its drawing function (and caption).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from analysis.figures.style import StudyFigure


class FigureSpec:
    """One figure: its drawing function and the files its rule reads, in argument order.

    The function may be named as ``"analysis.figures.<module>:<function>"`` and is then imported
    on first use of :attr:`draw`. Why: the Snakefile reads this registry at every parse (each
    ``snakemake`` start, dry runs included), and importing the eight figure modules there pulls
    in matplotlib, about half a CPU-second per start that only the figure jobs need.
    """

    __slots__ = ("_draw", "doc", "records", "tables")

    def __init__(
        self,
        draw: Callable[..., StudyFigure] | str,
        tables: Mapping[str, str],
        records: tuple[str, ...],
        doc: str,
    ) -> None:
        self._draw = draw
        #: rule input name -> parquet file under ``results/<dataset>/``
        self.tables = tables
        #: record files (``results/<dataset>/records/<rule>.json``) whose records it draws
        self.records = records
        #: the rule's description (``snakemake --list-rules``, the audit site's rule pages),
        #: with ``{people}`` ... in the dataset's words (``DataNouns.fill``)
        self.doc = doc

    @property
    def draw(self) -> Callable[..., StudyFigure]:
        """Called with the ``tables`` (DataFrames, in order), then the merged records."""
        if isinstance(self._draw, str):
            module, name = self._draw.split(":")
            self._draw = getattr(importlib.import_module(module), name)
        return self._draw


#: figure name (= file stem under ``figures/<dataset>/``) -> figure, in paper order
STUDY_FIGURES: dict[str, FigureSpec] = {
    "pipeline": FigureSpec(
        draw="analysis.figures.pipeline:pipeline_figure",
        tables={},
        records=("canonical_tables",),
        doc="The three-stage pipeline diagram: what models and {people} do in each stage, "
        "with the dataset's counts of their judgments.",
    ),
    "attribute_quality": FigureSpec(
        draw="analysis.figures.attribute_quality:attribute_quality_figure",
        tables={
            "judgments": "tables/attribute_judgments.parquet",
            "users": "tables/users.parquet",
        },
        records=("stage1_statistics",),
        doc="Stage-1 shares of accepted, uncertain and rejected judgments of the {people} by "
        "user source, chat vs synthetic users, with the acceptance CIs of the records.",
    ),
    "kappa_matrix": FigureSpec(
        draw="analysis.figures.kappa_matrix:kappa_matrix_figure",
        tables={"matrix": "stage2/kappa_matrix.parquet"},
        records=("stage2_statistics",),
        doc="The full pairwise Cohen's kappa matrix over the {people} and the model raters "
        "per stage-2 round, group blocks marked, group means from the records.",
    ),
    "scorecard": FigureSpec(
        draw="analysis.figures.scorecard:scorecard_figure",
        tables={},
        records=("scorecard",),
        doc="Does it reproduce? Each published figure of the study with a reproduced interval: "
        "this build's CI as a bar, the published value or range marked.",
    ),
    "relevance_prf": FigureSpec(
        draw="analysis.figures.relevance_prf:relevance_prf_figure",
        tables={},
        records=("stage2_statistics", "baseline_votes", "relevance_classifier"),
        doc="Precision, recall and F1 against the majority of the {people} of retrieval "
        "baselines, each LLM and the trained classifier, with record CIs.",
    ),
    "ratings_by_generator": FigureSpec(
        draw="analysis.figures.ratings_by_generator:ratings_by_generator_figure",
        tables={},
        records=("stage3_statistics",),
        doc="Mean rating by the {people} of personalized vs generic responses per generator "
        "with record CIs, neutral line at 3.",
    ),
    "mention_effect": FigureSpec(
        draw="analysis.figures.mention_effect:mention_effect_figure",
        tables={},
        records=("stage3_statistics",),
        doc="Rating gap with vs without explicit attribute mentions, for the {people} and each "
        "LLM judge, with record CIs.",
    ),
    "mention_habit_vs_bias": FigureSpec(
        draw="analysis.figures.mention_habit_vs_bias:mention_habit_vs_bias_figure",
        tables={},
        records=("stage3_statistics",),
        doc="Each model's explicit-mention rate as generator vs its mention bias as judge, with "
        "the Spearman record.",
    ),
}
