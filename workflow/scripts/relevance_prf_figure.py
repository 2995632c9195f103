"""Rule relevance_prf_figure: P/R/F1 of baselines, LLMs and the classifier vs the majority."""

from analysis.figures.relevance_prf import relevance_prf_figure
from analysis.figures.rule_io import read_records, save_rule_figure
from analysis.workflow_io import rule_logging

smk = snakemake  # noqa: F821
with rule_logging(smk) as log:
    fig = relevance_prf_figure(read_records(smk.input.records))
    save_rule_figure(fig, smk, log)
