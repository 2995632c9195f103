"""Rule validation_records: estimates against the world's ground truth; coverage and recovery
across worlds."""

import json
from pathlib import Path

from analysis.paper.validation import (
    coverage_records,
    read_coverage_worlds,
    read_truth,
    recovery_records,
    validation_records,
)
from analysis.provenance import write_records
from analysis.stats.settings import StatsSettings
from analysis.workflow_io import rule_logging, rule_name

with rule_logging(snakemake) as log:
    estimates = {}
    for path in snakemake.input.records:
        estimates.update(json.loads(Path(path).read_text(encoding="utf-8")))
    truth = read_truth(snakemake.input.truth)
    records = validation_records(estimates, truth)
    settings = StatsSettings.from_rule_params(snakemake.params.cfg)
    for path in snakemake.input.worlds:
        worlds = read_coverage_worlds(path)
        records += coverage_records(worlds) + recovery_records(worlds, settings)
    write_records(
        records,
        snakemake.output.records,
        rule=rule_name(snakemake),
        inputs=list(snakemake.input),
        config=snakemake.params.cfg,
    )
    log.info("%d validation records", len(records))
