"""Rule explicit_mentions: local explicit-mention detection per (response, slot attribute)."""

from analysis.provenance import write_records
from analysis.stages.generation import relevant_attributes
from analysis.stages.mentions import detector_records, mention_slots, mention_table
from analysis.stats.settings import StatsSettings
from analysis.workflow_io import read, rule_logging, rule_name, write

with rule_logging(snakemake) as log:
    cfg = snakemake.params.cfg["stages.stage3.mentions"]
    responses, attributes = read(snakemake.input.responses), read(snakemake.input.attributes)
    slots = mention_slots(
        responses, relevant_attributes(read(snakemake.input.votes)), read(snakemake.input.ratings)
    )
    table = mention_table(
        slots, responses, attributes, cfg["lexical_threshold"], cfg["embedding_threshold"]
    )
    write(table, snakemake.output.table)
    records = detector_records(
        cfg["lexical_threshold"],
        cfg["embedding_threshold"],
        StatsSettings.from_rule_params(snakemake.params.cfg),
    )
    write_records(
        records,
        snakemake.output.records,
        rule=rule_name(snakemake),
        inputs=snakemake.input,
        config=snakemake.params.cfg,
    )
    log.info(
        "%d (response, attribute) pairs, %d mentioned", len(table), int(table["mentioned"].sum())
    )
