"""Rule model_control_ratings: one judge under the no-context, mismatched and swapped controls."""

from analysis.stages import controls, steps
from analysis.stages.rule_support import read, run_model_step
from analysis.workflow_io import rule_logging

smk = snakemake  # noqa: F821
with rule_logging(smk) as log:
    names = ("responses", "votes", "ratings", "prompts", "attributes")
    tables = {name: read(smk.input[name]) for name in names}
    table = run_model_step(smk, steps.controls_step, controls.STAGE, tables)
    log.info(
        "%s: %d control ratings, %s",
        smk.wildcards.model,
        len(table),
        table.groupby(["control", "parse_status"]).size().to_dict(),
    )
