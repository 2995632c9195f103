"""Rule relevance_votes: imported stage-2 votes plus each workflow model's votes."""

from analysis.stages.combine import combine_relevance_votes
from analysis.stages.rule_support import read, write
from analysis.workflow_io import rule_logging

smk = snakemake
with rule_logging(smk) as log:
    table = combine_relevance_votes(
        read(smk.input.votes),
        [read(p) for p in smk.input.models],
        smk.params.cfg["prompts.version"],
    )
    write(table, smk.output.table)
    log.info("%d votes by %d raters", len(table), table["rater"].nunique())
