"""Rule validation_table: the paper's truth-vs-estimate table (a sentence on real data)."""

from pathlib import Path

from analysis.paper.validation import render_validation_table
from analysis.provenance import load_numbers
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:
    tex = render_validation_table(load_numbers(snakemake.input.numbers))
    Path(snakemake.output.tex).write_text(tex, encoding="utf-8")
    log.info("validation table: %d lines", tex.count("\n"))
