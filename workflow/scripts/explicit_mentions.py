"""Rule explicit_mentions: local explicit-mention detection per (response, slot attribute)."""

from analysis.provenance import write_records
from analysis.stages.generation import relevant_attributes
from analysis.stages.mentions import detector_records, mention_slots, mention_table
from analysis.stages.rule_support import read, write
from analysis.workflow_io import rule_logging

smk = snakemake
with rule_logging(smk) as log:
    cfg = smk.params.cfg["stages.stage3.mentions"]
    responses, attributes = read(smk.input.responses), read(smk.input.attributes)
    slots = mention_slots(
        responses, relevant_attributes(read(smk.input.votes)), read(smk.input.ratings)
    )
    table = mention_table(
        slots, responses, attributes, cfg["lexical_threshold"], cfg["embedding_threshold"]
    )
    write(table, smk.output.table)
    records = detector_records(cfg["lexical_threshold"], cfg["embedding_threshold"])
    write_records(
        records, smk.output.records, rule=smk.rule, inputs=smk.input, config=smk.params.cfg
    )
    log.info(
        "%d (response, attribute) pairs, %d mentioned", len(table), int(table["mentioned"].sum())
    )
