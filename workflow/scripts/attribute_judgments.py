"""Rule attribute_judgments: imported stage-1 judgments plus each verifier's labels."""

from analysis.stages.combine import combine_attribute_judgments
from analysis.stages.rule_support import read, write
from analysis.workflow_io import rule_logging

smk = snakemake
with rule_logging(smk) as log:
    table = combine_attribute_judgments(
        read(smk.input.judgments),
        [read(p) for p in smk.input.verifiers],
        smk.params.cfg["prompts.version"],
    )
    write(table, smk.output.table)
    log.info("%d judgments by %d raters", len(table), table["rater"].nunique())
