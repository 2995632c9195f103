"""Rule parse_failures: per model and stage, items whose output stayed unreadable."""

from analysis.provenance import write_records
from analysis.stages.combine import call_counts, parse_failure_records, parse_failure_table
from analysis.workflow_io import read, rule_logging, rule_name, write

with rule_logging(snakemake) as log:
    outputs = [(stage, model, read(path)) for stage, model, path in snakemake.params.outputs]
    table = parse_failure_table(outputs)
    write(table, snakemake.output.table)
    records = parse_failure_records(table, snakemake.params.cfg["stages.caveats"])
    write_records(
        records,
        snakemake.output.records,
        rule=rule_name(snakemake),
        inputs=snakemake.input,
        config=snakemake.params.cfg,
        calls=call_counts(table, snakemake.params.cfg["llm.store"]),
    )
    log.info("parse failures:\n%s", table.to_string())
