"""Compile the paper with latexmk; the LaTeX output goes to the rule's log."""

from analysis.paper.compile import compile_paper
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:
    pdf = compile_paper(
        snakemake.input.main,
        snakemake.output.pdf,
        source_date_epoch=snakemake.params.cfg["paper.source_date_epoch"],
        log=log,
    )
    log.info("wrote %s", pdf)
