"""Every model-call rule: one shard of one model's step (analysis.stages.steps.CALL_STEPS)."""

from analysis.workflow_io import rule_logging, run_model_step

with rule_logging(snakemake):
    run_model_step(snakemake)
