"""Rule preference_ratings: imported stage-3 ratings plus each workflow judge's."""

from analysis.stages.combine import combine_preference_ratings
from analysis.workflow_io import read, rule_logging, write

with rule_logging(snakemake) as log:
    table = combine_preference_ratings(
        read(snakemake.input.ratings),
        [read(p) for p in snakemake.input.models],
        snakemake.params.cfg["prompts.version"],
    )
    write(table, snakemake.output.table)
    log.info("%d ratings by %d raters", len(table), table["rater"].nunique())
