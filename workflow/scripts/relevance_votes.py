"""Rule relevance_votes: imported stage-2 votes plus each workflow model's votes."""

from analysis.stages.combine import combine_relevance_votes
from analysis.workflow_io import read, rule_logging, write

with rule_logging(snakemake) as log:
    table = combine_relevance_votes(
        read(snakemake.input.votes),
        [read(p) for p in snakemake.input.models],
        snakemake.params.cfg["prompts.version"],
    )
    write(table, snakemake.output.table)
    log.info("%d votes by %d raters", len(table), table["rater"].nunique())
