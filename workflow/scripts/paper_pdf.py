"""Compile the paper with latexmk; the LaTeX output goes to the rule's log.

The dataset's generated sources are the folder of its ``numbers.tex`` (paper/generated/<dataset>).
"""

from pathlib import Path

from analysis.paper.compile import compile_paper
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:
    pdf = compile_paper(
        snakemake.input.main,
        snakemake.output.pdf,
        generated=Path(snakemake.input.numbers).parent,
        source_date_epoch=snakemake.params.cfg["paper.source_date_epoch"],
        log=log,
        workdir=snakemake.output.latex,
    )
    log.info("wrote %s", pdf)
