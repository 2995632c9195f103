"""The study's seven figures, drawn from the canonical tables and the number records.

Each module holds one figure as a pure function from DataFrames / record dicts to a
:class:`analysis.figures.style.StudyFigure` (a matplotlib ``Figure`` that also knows its name,
caption, the record keys it draws and whether the dataset supports it). The rules of
``workflow/rules/figures.smk`` call these functions and write the files with
:func:`analysis.figures.style.save_figure`: a vector PDF for the paper, a PNG preview and a
JSON sidecar naming the figure's source. Every error bar is a CI taken from a record.

Figures never use ``pyplot``: they are built object-oriented, so no global figure state is
shared between rules or tests and any matplotlib backend works.
"""

#: figure name (= file stem under ``figures/<dataset>/``) -> module drawing it, in paper order
FIGURE_MODULES: dict[str, str] = {
    "pipeline": "analysis.figures.pipeline",
    "attribute_quality": "analysis.figures.attribute_quality",
    "kappa_matrix": "analysis.figures.kappa_matrix",
    "relevance_prf": "analysis.figures.relevance_prf",
    "ratings_by_generator": "analysis.figures.ratings_by_generator",
    "mention_effect": "analysis.figures.mention_effect",
    "mention_habit_vs_bias": "analysis.figures.mention_habit_vs_bias",
}
