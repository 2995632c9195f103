"""Rule kappa_matrix_figure: the pairwise Cohen's kappa matrix of every stage-2 round."""

import pandas as pd

from analysis.figures.kappa_matrix import kappa_matrix_figure
from analysis.figures.rule_io import read_records, save_rule_figure
from analysis.workflow_io import rule_logging

smk = snakemake  # noqa: F821
with rule_logging(smk) as log:
    fig = kappa_matrix_figure(pd.read_parquet(smk.input.matrix), read_records(smk.input.records))
    save_rule_figure(fig, smk, log)
