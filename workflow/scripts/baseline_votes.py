"""Rule baseline_votes: BM25 and MiniLM baselines thresholded on dev prompts, scored on eval."""

from analysis.provenance import write_records
from analysis.stages.baselines import baseline_step
from analysis.stages.embeddings import read_embedding_table
from analysis.stages.rule_support import nested, read, write
from analysis.workflow_io import rule_logging

smk = snakemake
with rule_logging(smk) as log:
    cfg = nested(smk.params.cfg)
    table, records = baseline_step(
        read(smk.input.votes),
        read(smk.input.prompts),
        read(smk.input.attributes),
        read_embedding_table(smk.input.prompt_embeddings),
        read_embedding_table(smk.input.attribute_embeddings),
        baselines_cfg=cfg["stages"]["stage2"]["baselines"],
        stats_cfg=cfg["stats"],
        seed=int(cfg["run"]["seed"]),
    )
    write(table, smk.output.table)
    write_records(
        records, smk.output.records, rule=smk.rule, inputs=smk.input, config=smk.params.cfg
    )
    log.info("%d baseline votes, %d records", len(table), len(records))
