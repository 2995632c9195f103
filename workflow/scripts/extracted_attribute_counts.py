"""Rule extracted_attribute_counts: attributes per extractor before and after merging."""

from analysis.provenance import write_records
from analysis.stages.merging import count_records
from analysis.workflow_io import read, rule_logging, rule_name

with rule_logging(snakemake) as log:
    merged = [read(p) for p in snakemake.input.merged]
    originals = [read(p) for p in snakemake.input.originals]
    records = count_records(
        snakemake.params.models, merged, originals, caveats=snakemake.params.cfg["stages.caveats"]
    )
    write_records(
        records,
        snakemake.output.records,
        rule=rule_name(snakemake),
        inputs=snakemake.input,
        config=snakemake.params.cfg,
    )
    log.info("%d records", len(records))
