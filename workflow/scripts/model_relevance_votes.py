"""Rule model_relevance_votes: one model's YES/NO vote per sampled relevance item."""

from analysis.stages import relevance, steps
from analysis.stages.rule_support import read, run_model_step
from analysis.workflow_io import rule_logging

smk = snakemake  # noqa: F821
with rule_logging(smk) as log:
    tables = {
        "items": read(smk.input.relevance_items),
        "prompts": read(smk.input.prompts),
        "attributes": read(smk.input.attributes),
    }
    table = run_model_step(smk, steps.relevance_step, relevance.STAGE, tables)
    log.info(
        "%s: %d items, %s",
        smk.wildcards.model,
        len(table),
        table["parse_status"].value_counts().to_dict(),
    )
