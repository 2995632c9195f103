"""Rule extracted_attribute_counts: attributes per extractor before and after merging."""

from analysis.provenance import write_records
from analysis.stages.merging import count_records
from analysis.stages.rule_support import read
from analysis.workflow_io import rule_logging

smk = snakemake
with rule_logging(smk) as log:
    merged = [read(p) for p in smk.input.merged]
    originals = [read(p) for p in smk.input.originals]
    records = count_records(
        smk.params.models, merged, originals, caveats=smk.params.cfg["stages.caveats"]
    )
    write_records(
        records, smk.output.records, rule=smk.rule, inputs=smk.input, config=smk.params.cfg
    )
    log.info("%d records", len(records))
