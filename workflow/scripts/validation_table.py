"""Rule validation_table: the paper's coverage and recovery tables (a sentence on real data)."""

from pathlib import Path

from analysis.paper.validation import render_recovery_table, render_validation_table
from analysis.provenance import load_numbers
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:
    numbers = load_numbers(snakemake.input.numbers)
    for path, tex in [
        (snakemake.output.tex, render_validation_table(numbers)),
        (snakemake.output.recovery, render_recovery_table(numbers)),
    ]:
        Path(path).write_text(tex, encoding="utf-8")
        log.info("%s: %d lines", path, tex.count("\n"))
