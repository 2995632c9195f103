# Stage 1 (docs/stages.md): attribute extraction, per-user merging and LLM verification, plus
# the MiniLM text embeddings the trained models read. Model-call rules run once per model of
# the step's list (config stages.stage1.*); the prompt version is part of every output path.

EXTRACTORS = step_models("attribute_extraction")


if owns("calls"):

    rule merged_attributes:
        """One extractor's attributes merged per user (agglomerative, MiniLM), originals kept."""
        input:
            table=call_table("attribute_extraction"),
        output:
            merged=results(f"stage1/merged/{{model}}.{PROMPT_VERSION}.parquet"),
            originals=results(
                f"stage1/merged/{{model}}.{PROMPT_VERSION}.originals.parquet"
            ),
        log:
            f"{CALL_LOGS}/merged_attributes.{{model}}.log",
        benchmark:
            f"{CALL_LOGS}/benchmarks/merged_attributes.{{model}}.tsv"
        wildcard_constraints:
            model=MODEL_PATTERN,
        resources:
            mem_mb=3000,
        params:
            cfg=subtree(CFG, "stages.stage1.merge_distance_threshold"),
            code=code_hash("analysis.stages"),
        script:
            "../scripts/merged_attributes.py"


if owns("calls"):

    rule extracted_attribute_counts:
        """How many attributes each extractor produced and how many remain after merging."""
        input:
            merged=expand(
                results(f"stage1/merged/{{model}}.{PROMPT_VERSION}.parquet"),
                model=EXTRACTORS,
            ),
            originals=expand(
                results(f"stage1/merged/{{model}}.{PROMPT_VERSION}.originals.parquet"),
                model=EXTRACTORS,
            ),
        output:
            records=record_file("extracted_attribute_counts"),
            resamples=resample_file("extracted_attribute_counts"),
        log:
            f"{CALL_LOGS}/extracted_attribute_counts.log",
        benchmark:
            f"{CALL_LOGS}/benchmarks/extracted_attribute_counts.tsv"
        resources:
            mem_mb=500,
        params:
            cfg=subtree(CFG, "stages.caveats", "stages.stage1", "prompts.version"),
            models=EXTRACTORS,
            code=code_hash("analysis.stages"),
        script:
            "../scripts/extracted_attribute_counts.py"


RECORD_FILES.append(record_file("extracted_attribute_counts"))


if owns("calls"):

    rule attribute_judgments:
        """Stage-1 judgments the statistics read: imported ones plus each verifier's labels."""
        input:
            judgments=results("tables/attribute_judgments.parquet"),
            verifiers=call_tables("attribute_verification"),
        output:
            table=results("stage1/attribute_judgments.parquet"),
        log:
            f"{CALL_LOGS}/attribute_judgments.log",
        benchmark:
            f"{CALL_LOGS}/benchmarks/attribute_judgments.tsv"
        resources:
            mem_mb=1000,
        params:
            cfg=subtree(CFG, "prompts.version"),
            code=code_hash("analysis.stages", "analysis.data.schemas"),
        script:
            "../scripts/attribute_judgments.py"


# Per kind, the table its texts come from; responses also read the ratings, because only the
# responses paired with a human rating are embedded (the reward models read no others).
EMBEDDING_INPUTS = {
    "attributes": {"table": results("tables/attributes.parquet")},
    "reasons": {"table": results("tables/attributes.parquet")},
    "prompts": {"table": results("tables/prompts.parquet")},
    "responses": {
        "table": results("stage3/responses.parquet"),
        "ratings": results("tables/preference_ratings.parquet"),
    },
}


if owns("calls"):

    rule text_embeddings:
        """MiniLM vectors (normalized float32) of each attribute, reason, prompt or rated response."""
        input:
            unpack(lambda wildcards: EMBEDDING_INPUTS[wildcards.kind]),
        output:
            table=results(f"embeddings/{{kind}}.parquet"),
        log:
            f"{CALL_LOGS}/text_embeddings.{{kind}}.log",
        benchmark:
            f"{CALL_LOGS}/benchmarks/text_embeddings.{{kind}}.tsv"
        wildcard_constraints:
            kind="attributes|reasons|prompts|responses",
        threads: 1  # MiniLM runs on one thread (same bytes on any machine: embeddings.py)
        resources:
            mem_mb=3000,
        params:
            code=code_hash("analysis.stages.embeddings", "analysis.learn.reward_model"),
        script:
            "../scripts/text_embeddings.py"
