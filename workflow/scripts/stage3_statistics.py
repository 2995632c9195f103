"""Rule stage3_statistics: preference, judge-human gap, mention and rank-agreement records."""

import pandas as pd

from analysis.provenance import write_records
from analysis.stats.study_stage3 import stage3_records
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:  # noqa: F821
    ratings = pd.read_parquet(snakemake.input.ratings)  # noqa: F821
    responses = pd.read_parquet(snakemake.input.responses)  # noqa: F821
    mentions = pd.read_parquet(snakemake.input.mentions)  # noqa: F821
    records = stage3_records(
        ratings,
        snakemake.params.cfg,  # noqa: F821
        mentions=mentions,
        responses=responses,
    )
    write_records(
        records,
        snakemake.output.records,  # noqa: F821
        rule=snakemake.rule,  # noqa: F821
        inputs=list(snakemake.input),  # noqa: F821
        config=snakemake.params.cfg,  # noqa: F821
    )
    log.info("%d stage-3 records", len(records))
