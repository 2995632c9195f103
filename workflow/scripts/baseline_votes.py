"""Rule baseline_votes: BM25 and MiniLM baselines thresholded on dev prompts, scored on eval."""

from analysis.provenance import write_records
from analysis.settings import BaselinesConfig, from_params
from analysis.stages.baselines import baseline_step
from analysis.stages.embeddings import read_embedding_table
from analysis.stats.settings import StatsSettings
from analysis.workflow_io import read, rule_logging, rule_name, write

with rule_logging(snakemake) as log:
    cfg = snakemake.params.cfg
    table, records = baseline_step(
        read(snakemake.input.votes),
        read(snakemake.input.prompts),
        read(snakemake.input.attributes),
        read_embedding_table(snakemake.input.prompt_embeddings),
        read_embedding_table(snakemake.input.attribute_embeddings),
        baselines=from_params(
            BaselinesConfig, cfg["stages.stage2.baselines"], "stages.stage2.baselines"
        ),
        stats=StatsSettings.from_rule_params(cfg),
    )
    write(table, snakemake.output.table)
    write_records(
        records,
        snakemake.output.records,
        rule=rule_name(snakemake),
        inputs=snakemake.input,
        config=snakemake.params.cfg,
    )
    log.info("%d baseline votes, %d records", len(table), len(records))
