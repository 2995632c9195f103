"""Rule parse_failures: per model and stage, items whose output stayed unreadable."""

from analysis.provenance import write_records
from analysis.stages.combine import call_counts, parse_failure_records, parse_failure_table
from analysis.stages.rule_support import read, write
from analysis.workflow_io import rule_logging

smk = snakemake
with rule_logging(smk) as log:
    outputs = [(stage, model, read(path)) for stage, model, path in smk.params.outputs]
    table = parse_failure_table(outputs)
    write(table, smk.output.table)
    records = parse_failure_records(table, smk.params.cfg["stages.caveats"])
    write_records(
        records,
        smk.output.records,
        rule=smk.rule,
        inputs=smk.input,
        config=smk.params.cfg,
        calls=call_counts(table, smk.params.cfg["llm.store"]),
    )
    log.info("parse failures:\n%s", table.to_string())
