"""Rule stage3_statistics: preference, judge-human gap, mention and rank-agreement records."""

import pandas as pd

from analysis.provenance import write_records
from analysis.stats.settings import StatsSettings
from analysis.stats.study_stage3 import stage3_records
from analysis.workflow_io import rule_logging, rule_name

with rule_logging(snakemake) as log:
    ratings = pd.read_parquet(snakemake.input.ratings)
    responses = pd.read_parquet(snakemake.input.responses)
    mentions = pd.read_parquet(snakemake.input.mentions)
    records = stage3_records(
        ratings,
        StatsSettings.from_rule_params(snakemake.params.cfg),
        mentions=mentions,
        responses=responses,
    )
    write_records(
        records,
        snakemake.output.records,
        rule=rule_name(snakemake),
        inputs=list(snakemake.input),
        config=snakemake.params.cfg,
    )
    log.info("%d stage-3 records", len(records))
