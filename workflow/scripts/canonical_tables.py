"""Rule canonical_tables: read the raw dataset, write the validated tables, the skipped-records
report, which raw files fed each table (with their sha256) and the dataset size records."""

from pathlib import Path

from analysis import repo_root
from analysis.data import read_dataset, resolve_root
from analysis.data.canonical import write_skipped_report, write_tables
from analysis.data.summary import dataset_size_records
from analysis.provenance import dump_json, input_hashes, write_records
from analysis.workflow_io import rule_logging, rule_name

with rule_logging(snakemake) as log:
    cfg = snakemake.params.cfg  # only the keys that decide the tables: a new word reruns nothing
    root = resolve_root(cfg["data.root"], repo_root(snakemake.scriptdir))
    log.info("reading %s with adapter %s", root, cfg["data.adapter"])
    result = read_dataset(
        cfg["data.adapter"],
        root,
        cfg["data.models"],
        distinct_annotators=cfg["data.distinct_annotators"],
        distinct_attributes=cfg["data.distinct_attributes"],
    )
    write_tables(result.tables, Path(snakemake.output.users).parent)
    write_skipped_report(result.report(), snakemake.output.skipped)
    # the lineage of a number (recenter trace --lineage) follows a table to these files only
    dump_json(
        {t: input_hashes(root / rel for rel in files) for t, files in result.sources.items()},
        snakemake.output.sources,
    )
    records = dataset_size_records(result.tables)
    write_records(
        records,
        snakemake.output.records,
        rule=rule_name(snakemake),
        inputs=snakemake.input.raw,
        config=snakemake.params.cfg,
    )
    for name, table in result.tables.items():
        log.info("%s: %d rows", name, len(table))
    log.info("skipped %d records: %s", len(result.skipped), result.report()["skipped_by_kind"])
