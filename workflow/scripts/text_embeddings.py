"""Rule text_embeddings: MiniLM vectors of one kind of text (id, embedding); of the responses,
only those paired with a human rating (the reward models read no others)."""

from analysis.stages.embeddings import embedding_table, kind_texts, write_embedding_table
from analysis.workflow_io import read, rule_logging

with rule_logging(snakemake) as log:
    kind, table = snakemake.wildcards.kind, read(snakemake.input.table)
    if "ratings" in snakemake.input.keys():
        # imported here: the reward models' module brings scikit-learn and SciPy (about a
        # CPU-second per job), which only the responses' job needs, for this selection
        from analysis.learn.reward_model import rated_responses

        rated = rated_responses(read(snakemake.input.ratings), table)
        log.info("responses: %d of %d paired with a human rating", len(rated), len(table))
        table = rated
    ids, texts = kind_texts(kind, table)
    result = embedding_table(ids, texts)
    write_embedding_table(result, snakemake.output.table)
    log.info("%s: %d vectors", kind, len(result))
