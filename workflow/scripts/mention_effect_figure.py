"""Rule mention_effect_figure: rating gap with vs without explicit mentions per rater."""

from analysis.figures.mention_effect import mention_effect_figure
from analysis.figures.rule_io import read_records, save_rule_figure
from analysis.workflow_io import rule_logging

smk = snakemake  # noqa: F821
with rule_logging(smk) as log:
    fig = mention_effect_figure(read_records(smk.input.records))
    save_rule_figure(fig, smk, log)
