"""Rule stage1_statistics: acceptance rates, agreement and verifier records of stage 1."""

import pandas as pd

from analysis.provenance import write_records
from analysis.stats.settings import StatsSettings
from analysis.stats.study_stage1 import stage1_records
from analysis.workflow_io import rule_logging, rule_name

with rule_logging(snakemake) as log:
    judgments = pd.read_parquet(snakemake.input.judgments)
    users = pd.read_parquet(snakemake.input.users)
    records = stage1_records(judgments, users, StatsSettings.from_rule_params(snakemake.params.cfg))
    write_records(
        records,
        snakemake.output.records,
        rule=rule_name(snakemake),
        inputs=list(snakemake.input),
        config=snakemake.params.cfg,
    )
    log.info("%d stage-1 records", len(records))
