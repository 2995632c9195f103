"""Rule stage2_statistics: per-round stage-2 records and the pairwise kappa matrix table."""

import pandas as pd

from analysis.provenance import write_records
from analysis.stats.settings import StatsSettings
from analysis.stats.study_stage2 import kappa_matrix_table, stage2_statistics
from analysis.workflow_io import rule_logging, rule_name

with rule_logging(snakemake) as log:
    votes = pd.read_parquet(snakemake.input.votes)
    result = stage2_statistics(votes, StatsSettings.from_rule_params(snakemake.params.cfg))
    write_records(
        result.records,
        snakemake.output.records,
        rule=rule_name(snakemake),
        inputs=list(snakemake.input),
        config=snakemake.params.cfg,
    )
    kappa_matrix_table(result).to_parquet(snakemake.output.kappa_matrix, index=False)
    log.info(
        "%d stage-2 records; kappa matrices of rounds %s",
        len(result.records),
        sorted(result.kappa_matrices),
    )
