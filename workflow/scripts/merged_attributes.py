"""Rule merged_attributes: one extractor's attributes merged per user, originals kept."""

from analysis.stages.embeddings import default_embedder
from analysis.stages.merging import explode_extractions, merge_user_attributes
from analysis.stages.rule_support import read, write
from analysis.workflow_io import rule_logging

smk = snakemake
with rule_logging(smk) as log:
    originals = explode_extractions(read(smk.input.table))
    vectors = default_embedder().encode(originals["text"].tolist())
    threshold = float(smk.params.cfg["stages.stage1.merge_distance_threshold"])
    merged, originals = merge_user_attributes(originals, vectors, threshold)
    write(merged, smk.output.merged)
    write(originals, smk.output.originals)
    log.info("%d originals -> %d merged attributes", len(originals), len(merged))
