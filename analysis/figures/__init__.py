"""The study's figures, drawn from the canonical tables and the number records.

Each module holds one figure as a pure function from DataFrames / record dicts to a
:class:`analysis.figures.style.StudyFigure` (a matplotlib ``Figure`` that also knows its name,
caption, the record keys it draws and whether the dataset supports it). The registry
:data:`analysis.figures.registry.STUDY_FIGURES` lists them; ``workflow/rules/figures.smk``
generates a rule per entry, which calls the function and writes the files with
:func:`analysis.figures.style.save_figure`: a vector PDF for the paper, a PNG preview and a
JSON sidecar naming the figure's source. Every error bar is a CI taken from a record.

Figures never use ``pyplot``: they are built object-oriented, so no global figure state is
shared between rules or tests and any matplotlib backend works. seaborn draws where it makes a
figure simpler (the kappa matrix's annotated heat map), always on an axes of the figure and
inside the shared style; docs/architecture.md ("Figures") says where and why not elsewhere.
"""
