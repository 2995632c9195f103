"""Rule responses: imported stage-3 responses plus each workflow generator's."""

from analysis.stages.combine import combine_responses
from analysis.workflow_io import read, rule_logging, write

with rule_logging(snakemake) as log:
    table = combine_responses(
        read(snakemake.input.responses),
        [read(p) for p in snakemake.input.models],
        snakemake.params.cfg["prompts.version"],
    )
    write(table, snakemake.output.table)
    log.info("%d responses by %d generators", len(table), table["generator"].nunique())
