"""Rule validation_records: estimates against the world's ground truth; coverage across worlds."""

import json
from pathlib import Path

from analysis.paper.validation import (
    coverage_records,
    read_coverage_worlds,
    read_truth,
    validation_records,
)
from analysis.provenance import write_records
from analysis.workflow_io import rule_logging, rule_name

with rule_logging(snakemake) as log:
    estimates = {}
    for path in snakemake.input.records:
        estimates.update(json.loads(Path(path).read_text(encoding="utf-8")))
    truth = read_truth(snakemake.input.truth)
    records = validation_records(estimates, truth)
    for path in snakemake.input.worlds:
        records += coverage_records(read_coverage_worlds(path))
    write_records(
        records, snakemake.output.records, rule=rule_name(snakemake), inputs=list(snakemake.input)
    )
    log.info("%d validation records", len(records))
