"""Every figure rule: draw its figure of the registry and write the PDF, PNG and sidecar."""

from analysis.workflow_io import draw_rule_figure, rule_logging

with rule_logging(snakemake):
    draw_rule_figure(snakemake)
