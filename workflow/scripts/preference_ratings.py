"""Rule preference_ratings: imported stage-3 ratings plus each workflow judge's."""

from analysis.stages.combine import combine_preference_ratings
from analysis.stages.rule_support import read, write
from analysis.workflow_io import rule_logging

smk = snakemake
with rule_logging(smk) as log:
    table = combine_preference_ratings(
        read(smk.input.ratings),
        [read(p) for p in smk.input.models],
        smk.params.cfg["prompts.version"],
    )
    write(table, smk.output.table)
    log.info("%d ratings by %d raters", len(table), table["rater"].nunique())
