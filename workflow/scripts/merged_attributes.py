"""Rule merged_attributes: one extractor's attributes merged per user, originals kept."""

from analysis.stages.embeddings import default_embedder
from analysis.stages.merging import explode_extractions, merge_user_attributes
from analysis.workflow_io import read, rule_logging, write

with rule_logging(snakemake) as log:
    originals = explode_extractions(read(snakemake.input.table))
    vectors = default_embedder().encode(originals["text"].tolist())
    threshold = float(snakemake.params.cfg["stages.stage1.merge_distance_threshold"])
    merged, originals = merge_user_attributes(originals, vectors, threshold)
    write(merged, snakemake.output.merged)
    write(originals, snakemake.output.originals)
    log.info("%d originals -> %d merged attributes", len(originals), len(merged))
