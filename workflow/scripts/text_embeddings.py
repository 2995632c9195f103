"""Rule text_embeddings: MiniLM vectors of one kind of text (id, embedding)."""

from analysis.stages.embeddings import embedding_table, kind_texts, write_embedding_table
from analysis.workflow_io import read, rule_logging

with rule_logging(snakemake) as log:
    ids, texts = kind_texts(snakemake.wildcards.kind, read(snakemake.input.table))
    table = embedding_table(ids, texts)
    write_embedding_table(table, snakemake.output.table)
    log.info("%s: %d vectors", snakemake.wildcards.kind, len(table))
