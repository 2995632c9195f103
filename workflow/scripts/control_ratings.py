"""Rule control_ratings: all judges' control ratings, position consistency and mean ratings."""

from analysis.provenance import write_records
from analysis.stages.controls import combine_controls
from analysis.stages.rule_support import nested, read, write
from analysis.workflow_io import rule_logging

smk = snakemake
with rule_logging(smk) as log:
    cfg = nested(smk.params.cfg)
    table, records = combine_controls(
        smk.params.models,
        [read(p) for p in smk.input.controls],
        [read(p) for p in smk.input.judged],
        stats_cfg=cfg["stats"],
        seed=int(cfg["run"]["seed"]),
        caveats=cfg["stages"]["caveats"],
    )
    write(table, smk.output.table)
    write_records(
        records, smk.output.records, rule=smk.rule, inputs=smk.input, config=smk.params.cfg
    )
    log.info("%d control ratings, %d records", len(table), len(records))
