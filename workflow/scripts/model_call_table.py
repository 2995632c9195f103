"""Rule model_call_table: one model's table of one model-call step, its shards joined in order."""

from analysis.stages.shards import join_shards
from analysis.workflow_io import read, rule_logging, write

with rule_logging(snakemake) as log:
    table = join_shards([read(path) for path in snakemake.input.shards])
    write(table, snakemake.output.table)
    log.info(
        "%s: %d rows from %d shards",
        snakemake.output.table,
        len(table),
        len(snakemake.input.shards),
    )
