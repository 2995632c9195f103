"""Rule pipeline_figure: the three-stage pipeline diagram with the dataset's judgment counts."""

from analysis.figures.pipeline import pipeline_figure
from analysis.figures.rule_io import read_records, save_rule_figure
from analysis.workflow_io import rule_logging

smk = snakemake  # noqa: F821
with rule_logging(smk) as log:
    fig = pipeline_figure(read_records(smk.input.records))
    save_rule_figure(fig, smk, log)
