"""Rule control_ratings: all judges' control ratings, position consistency and mean ratings."""

from analysis.provenance import write_records
from analysis.stages.controls import combine_controls
from analysis.stats.settings import StatsSettings
from analysis.workflow_io import read, rule_logging, rule_name, write

with rule_logging(snakemake) as log:
    cfg = snakemake.params.cfg
    table, records = combine_controls(
        snakemake.params.models,
        [read(p) for p in snakemake.input.controls],
        [read(p) for p in snakemake.input.judged],
        stats=StatsSettings.from_rule_params(cfg),
    )
    write(table, snakemake.output.table)
    write_records(
        records,
        snakemake.output.records,
        rule=rule_name(snakemake),
        inputs=snakemake.input,
        config=snakemake.params.cfg,
    )
    log.info("%d control ratings, %d records", len(table), len(records))
