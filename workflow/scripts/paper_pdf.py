"""Compile the paper with latexmk; the LaTeX output goes to the rule's log.

The dataset's generated sources are the folder of its ``numbers.tex`` (paper/generated/<dataset>).
"""

from pathlib import Path

from analysis.paper.compile import compile_paper
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:  # noqa: F821
    pdf = compile_paper(
        snakemake.input.main,  # noqa: F821
        snakemake.output.pdf,  # noqa: F821
        generated=Path(snakemake.input.numbers).parent,  # noqa: F821
        source_date_epoch=snakemake.params.cfg["paper.source_date_epoch"],  # noqa: F821
        log=log,
    )
    log.info("wrote %s", pdf)
