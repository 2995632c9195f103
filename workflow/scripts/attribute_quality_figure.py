"""Rule attribute_quality_figure: stage-1 label shares by user source with record CIs."""

import pandas as pd

from analysis.figures.attribute_quality import attribute_quality_figure
from analysis.figures.rule_io import read_records, save_rule_figure
from analysis.workflow_io import rule_logging

smk = snakemake  # noqa: F821
with rule_logging(smk) as log:
    fig = attribute_quality_figure(
        pd.read_parquet(smk.input.judgments),
        pd.read_parquet(smk.input.users),
        read_records(smk.input.records),
    )
    save_rule_figure(fig, smk, log)
