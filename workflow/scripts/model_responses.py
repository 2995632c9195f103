"""Rule model_responses: one generator's generic and personalized responses."""

from analysis.stages import generation, steps
from analysis.stages.rule_support import read, run_model_step
from analysis.workflow_io import rule_logging

smk = snakemake  # noqa: F821
with rule_logging(smk) as log:
    tables = {
        "votes": read(smk.input.votes),
        "prompts": read(smk.input.prompts),
        "attributes": read(smk.input.attributes),
    }
    table = run_model_step(smk, steps.generation_step, generation.STAGE, tables)
    log.info(
        "%s: %d responses, %s",
        smk.wildcards.model,
        len(table),
        table["parse_status"].value_counts().to_dict(),
    )
