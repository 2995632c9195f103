"""Rule reward_models: train, score against held-out people, write models and records."""

from analysis.learn.pipeline import run_reward_models
from analysis.workflow_io import rule_logging, rule_name

with rule_logging(snakemake) as log:
    records = run_reward_models(
        dict(snakemake.input.items()),
        dict(snakemake.output.items()),
        snakemake.params.cfg,
        rule=rule_name(snakemake),
        threads=snakemake.threads,
    )
    log.info("wrote %d records to %s", len(records), snakemake.output.records)
