"""Rule relevance_classifier: train, score against held-out people, write model and records."""

from analysis.learn.pipeline import run_relevance_classifier
from analysis.workflow_io import rule_logging, rule_name

with rule_logging(snakemake) as log:
    records = run_relevance_classifier(
        dict(snakemake.input.items()),
        dict(snakemake.output.items()),
        snakemake.params.cfg,
        rule=rule_name(snakemake),
        threads=snakemake.threads,
    )
    log.info("wrote %d records to %s", len(records), snakemake.output.records)
