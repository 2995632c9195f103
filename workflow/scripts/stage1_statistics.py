"""Rule stage1_statistics: acceptance rates, agreement and verifier records of stage 1."""

import pandas as pd

from analysis.provenance import write_records
from analysis.stats.study_stage1 import stage1_records
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:  # noqa: F821
    judgments = pd.read_parquet(snakemake.input.judgments)  # noqa: F821
    users = pd.read_parquet(snakemake.input.users)  # noqa: F821
    records = stage1_records(judgments, users, snakemake.params.cfg)  # noqa: F821
    write_records(
        records,
        snakemake.output.records,  # noqa: F821
        rule=snakemake.rule,  # noqa: F821
        inputs=list(snakemake.input),  # noqa: F821
        config=snakemake.params.cfg,  # noqa: F821
    )
    log.info("%d stage-1 records", len(records))
