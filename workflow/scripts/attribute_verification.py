"""Rule attribute_verification: one verifier's label per sampled stage-1 attribute."""

from analysis.stages import steps, verification
from analysis.stages.rule_support import read, run_model_step
from analysis.workflow_io import rule_logging

smk = snakemake  # noqa: F821
with rule_logging(smk) as log:
    tables = {
        "attributes": read(smk.input.attributes),
        "judgments": read(smk.input.judgments),
        "conversations": read(smk.input.conversations),
    }
    table = run_model_step(smk, steps.verification_step, verification.STAGE, tables)
    log.info(
        "%s: %d attributes, %s",
        smk.wildcards.model,
        len(table),
        table["parse_status"].value_counts().to_dict(),
    )
