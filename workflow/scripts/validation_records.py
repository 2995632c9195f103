"""Rule validation_records: the stage statistics' estimates against the world's ground truth."""

import json
from pathlib import Path

from analysis.paper.validation import read_truth, validation_records
from analysis.provenance import write_records
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:
    estimates = {}
    for path in snakemake.input.records:
        estimates.update(json.loads(Path(path).read_text(encoding="utf-8")))
    records = validation_records(estimates, read_truth(snakemake.input.truth))
    write_records(
        records, snakemake.output.records, rule=snakemake.rule, inputs=list(snakemake.input)
    )
    log.info("%d validation records", len(records))
