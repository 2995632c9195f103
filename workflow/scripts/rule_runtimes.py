"""Rule rule_runtimes: the per-rule runtime table of the jobs' benchmark files, for the report."""

from pathlib import Path

from analysis.paper.report_tables import runtimes_html
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:
    page = runtimes_html(snakemake.params.benchmarks, snakemake.params.cfg["data.name"])
    Path(snakemake.output.html).write_text(page, encoding="utf-8")
    log.info("wrote %s", snakemake.output.html)
