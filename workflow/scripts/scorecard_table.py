"""Rule scorecard_table: scorecard.csv as the HTML report's table."""

from pathlib import Path

from analysis.paper.report_tables import scorecard_html
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:
    page = scorecard_html(snakemake.input.csv, snakemake.params.cfg["data.name"])
    Path(snakemake.output.html).write_text(page, encoding="utf-8")
    log.info("wrote %s", snakemake.output.html)
