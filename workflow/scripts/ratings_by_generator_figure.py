"""Rule ratings_by_generator_figure: mean human rating per generator around the neutral 3."""

from analysis.figures.ratings_by_generator import ratings_by_generator_figure
from analysis.figures.rule_io import read_records, save_rule_figure
from analysis.workflow_io import rule_logging

smk = snakemake  # noqa: F821
with rule_logging(smk) as log:
    fig = ratings_by_generator_figure(read_records(smk.input.records))
    save_rule_figure(fig, smk, log)
