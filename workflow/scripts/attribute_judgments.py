"""Rule attribute_judgments: imported stage-1 judgments plus each verifier's labels."""

from analysis.stages.combine import combine_attribute_judgments
from analysis.workflow_io import read, rule_logging, write

with rule_logging(snakemake) as log:
    table = combine_attribute_judgments(
        read(snakemake.input.judgments),
        [read(p) for p in snakemake.input.verifiers],
        snakemake.params.cfg["prompts.version"],
    )
    write(table, snakemake.output.table)
    log.info("%d judgments by %d raters", len(table), table["rater"].nunique())
