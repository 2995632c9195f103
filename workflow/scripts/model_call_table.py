"""Rule model_call_table: one model's table of one model-call step, its shards joined in order."""

from analysis.stages.rule_support import read, write
from analysis.stages.shards import join_shards
from analysis.workflow_io import rule_logging

smk = snakemake
with rule_logging(smk) as log:
    table = join_shards([read(path) for path in smk.input.shards])
    write(table, smk.output.table)
    log.info("%s: %d rows from %d shards", smk.output.table, len(table), len(smk.input.shards))
