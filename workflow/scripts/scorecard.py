"""Rule scorecard: the study's published figures against this build's records."""

from pathlib import Path

from analysis.paper.scorecard import scorecard_csv, scorecard_records, scorecard_rows
from analysis.provenance import merge_record_files, write_records
from analysis.settings import StudyConfig, from_params
from analysis.workflow_io import rule_logging, rule_name

with rule_logging(snakemake) as log:
    cfg = snakemake.params.cfg
    study = from_params(StudyConfig, cfg["study"], "study")
    simulated = bool(cfg["data.simulated"])
    rows = scorecard_rows(study, merge_record_files(snakemake.input.records), simulated)
    records = scorecard_records(rows, study, simulated)
    write_records(
        records,
        snakemake.output.records,
        rule=rule_name(snakemake),
        inputs=list(snakemake.input.records),
        config=cfg,
    )
    Path(snakemake.output.csv).write_text(scorecard_csv(rows, simulated), encoding="utf-8")
    for row in rows:
        log.info("%s: %s (%s)", row.name, row.verdict, row.reason)
