"""Rule mention_habit_vs_bias_figure: mention rate as generator vs mention bias as judge."""

from analysis.figures.mention_habit_vs_bias import mention_habit_vs_bias_figure
from analysis.figures.rule_io import read_records, save_rule_figure
from analysis.workflow_io import rule_logging

smk = snakemake  # noqa: F821
with rule_logging(smk) as log:
    fig = mention_habit_vs_bias_figure(read_records(smk.input.records))
    save_rule_figure(fig, smk, log)
