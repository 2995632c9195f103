"""Rule reward_models: train, score against held-out people, write models and records."""

from analysis.learn.pipeline import run_reward_models
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:  # noqa: F821
    records = run_reward_models(
        dict(snakemake.input.items()),  # noqa: F821
        dict(snakemake.output.items()),  # noqa: F821
        snakemake.params.cfg,  # noqa: F821
        rule=snakemake.rule,  # noqa: F821
    )
    log.info("wrote %d records to %s", len(records), snakemake.output.records)  # noqa: F821
