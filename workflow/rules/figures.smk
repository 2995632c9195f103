# Rules of figures (docs/architecture.md), generated from the one figure registry
# (analysis/figures/registry.py:STUDY_FIGURES): a rule <name>_figure per figure, in paper order.
# Each writes a vector PDF (the paper includes it), a PNG preview and a JSON sidecar with the
# figure's source (rule, inputs with sha256, record keys drawn); the PDF and PNG carry the same
# source in their metadata. Figures a dataset cannot support are written as labelled "not
# available in this dataset" panels so the paper always builds. Adding a figure is one registry
# entry plus its function and its caption workflow/report/figure_<name>.rst.

from analysis.figures.registry import STUDY_FIGURES
from analysis.settings import DataNouns

FIGURE_CODE = code_hash("analysis.figures", "analysis.provenance")
#: the dataset's words for who is in it, for the rules' descriptions (the audit site shows them)
FIGURE_NOUNS = DataNouns(**CFG["data"]["nouns"])


def figure_output(name, kind):
    """One of the figure's two report files: the paper's PDF or the PNG preview."""
    suffix, label = {"pdf": ("pdf", "PDF (paper)"), "png": ("png", "PNG preview")}[kind]
    return report(
        f"{FIGURES}/{name}.{suffix}",
        caption=f"../report/figure_{name}.rst",
        category="Figures",
        labels={"figure": name, "file": label},
    )


for _figure_name, _figure in STUDY_FIGURES.items():

    rule:
        f"""{FIGURE_NOUNS.fill(_figure.doc)}"""
        name:
            f"{_figure_name}_figure"
        input:
            **{name: results(path) for name, path in _figure.tables.items()},
            records=[record_file(rule) for rule in _figure.records],
        output:
            pdf=figure_output(_figure_name, "pdf"),
            png=figure_output(_figure_name, "png"),
            sidecar=f"{FIGURES}/{_figure_name}.json",
        log:
            f"{LOGS}/{_figure_name}_figure.log",
        benchmark:
            f"{LOGS}/benchmarks/{_figure_name}_figure.tsv"
        resources:
            mem_mb=1000,
        params:
            figure=_figure_name,
            cfg=subtree(CFG, "data.name", "data.nouns"),
            code=FIGURE_CODE,
        script:
            "../scripts/figure.py"

    FIGURE_FILES.append(f"{FIGURES}/{_figure_name}.pdf")
