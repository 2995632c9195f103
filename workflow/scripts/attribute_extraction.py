"""Rule attribute_extraction: one extractor's attributes of each sampled conversation."""

from analysis.stages import extraction, steps
from analysis.stages.rule_support import read, run_model_step
from analysis.workflow_io import rule_logging

smk = snakemake  # noqa: F821
with rule_logging(smk) as log:
    tables = {"conversations": read(smk.input.conversations)}
    table = run_model_step(smk, steps.extraction_step, extraction.STAGE, tables)
    log.info(
        "%s: %d conversations, %s",
        smk.wildcards.model,
        len(table),
        table["parse_status"].value_counts().to_dict(),
    )
