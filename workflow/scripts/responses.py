"""Rule responses: imported stage-3 responses plus each workflow generator's."""

from analysis.stages.combine import combine_responses
from analysis.stages.rule_support import read, write
from analysis.workflow_io import rule_logging

smk = snakemake
with rule_logging(smk) as log:
    table = combine_responses(
        read(smk.input.responses),
        [read(p) for p in smk.input.models],
        smk.params.cfg["prompts.version"],
    )
    write(table, smk.output.table)
    log.info("%d responses by %d generators", len(table), table["generator"].nunique())
