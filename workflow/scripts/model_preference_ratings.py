"""Rule model_preference_ratings: one judge's mapped 1-5 rating per sampled slot."""

from analysis.stages import judging, steps
from analysis.stages.rule_support import read, run_model_step
from analysis.workflow_io import rule_logging

smk = snakemake  # noqa: F821
with rule_logging(smk) as log:
    names = ("responses", "votes", "ratings", "prompts", "attributes")
    tables = {name: read(smk.input[name]) for name in names}
    table = run_model_step(smk, steps.judging_step, judging.STAGE, tables)
    log.info(
        "%s: %d slots, %s",
        smk.wildcards.model,
        len(table),
        table["parse_status"].value_counts().to_dict(),
    )
