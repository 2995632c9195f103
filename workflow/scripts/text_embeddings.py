"""Rule text_embeddings: MiniLM vectors of one kind of text (id, embedding)."""

from analysis.stages.embeddings import embedding_table, kind_texts, write_embedding_table
from analysis.stages.rule_support import read
from analysis.workflow_io import rule_logging

smk = snakemake
with rule_logging(smk) as log:
    ids, texts = kind_texts(smk.wildcards.kind, read(smk.input.table))
    table = embedding_table(ids, texts)
    write_embedding_table(table, smk.output.table)
    log.info("%s: %d vectors", smk.wildcards.kind, len(table))
