"""Every model-call rule: one shard of one model's step (analysis.stages.steps.CALL_STEPS)."""

from analysis.stages.rule_support import run_model_step
from analysis.stages.steps import CALL_STEPS
from analysis.workflow_io import rule_logging

smk = snakemake  # noqa: F821
with rule_logging(smk) as log:
    step = CALL_STEPS[smk.rule]
    table = run_model_step(smk, step)
    log.info(
        "%s, shard %s of %s: %d %s, %s",
        smk.wildcards.model,
        smk.wildcards.shard,
        smk.params.cfg["llm"]["shards"],
        len(table),
        step.unit,
        table.groupby(["parse_status"]).size().to_dict(),
    )
