"""Render the paper's tables from the records (each cell a linked record macro)."""

import json
from pathlib import Path

from analysis.paper.tables import render_tables
from analysis.provenance import load_numbers
from analysis.settings import DataNouns, from_params
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:
    numbers = load_numbers(snakemake.input.numbers)
    status = json.loads(Path(snakemake.input.usage).read_text(encoding="utf-8"))
    simulated = bool(snakemake.params.cfg["data.simulated"])
    nouns = from_params(DataNouns, snakemake.params.cfg["data.nouns"], "data.nouns")
    tables = render_tables(
        numbers, usage_note=status.get("note", ""), simulated=simulated, nouns=nouns
    )
    for path in snakemake.output.tables:
        Path(path).write_text(tables[Path(path).stem], encoding="utf-8")
    log.info("%d tables", len(tables))
