# Stage 1 (docs/stages.md): attribute extraction, per-user merging and LLM verification, plus
# the MiniLM text embeddings the trained models read. Model-call rules run once per model of
# the step's list (config stages.stage1.*); the prompt version is part of every output path.

EXTRACTORS = stage_models(CFG, "stage1", "extractors")
VERIFIERS = stage_models(CFG, "stage1", "verifiers")


rule attribute_extraction:
    """One shard of one extractor's attributes (sentence, reason, confidence) per conversation."""
    input:
        conversations=f"{RESULTS}/tables/conversations.parquet",
    output:
        table=call_shard("stage1/extracted"),
    wildcard_constraints:
        model=MODEL_PATTERN,
        shard=r"\d+",
    params:
        cfg=subtree(CFG, *STAGE_COMMON, "stages.stage1", "prompts", "llm", "run.seed"),
        model=model_spec,
        code=STAGE_CODE,
    log:
        f"{LOGS}/attribute_extraction.{{model}}.{{shard}}.log",
    resources:
        mem_mb=2000,
        api=1,
    conda:
        CONDA_ENV
    script:
        "../scripts/model_calls.py"


rule merged_attributes:
    """One extractor's attributes merged per user (agglomerative, MiniLM), originals kept."""
    input:
        table=f"{RESULTS}/stage1/extracted/{{model}}.{PROMPT_VERSION}.parquet",
    output:
        merged=f"{RESULTS}/stage1/merged/{{model}}.{PROMPT_VERSION}.parquet",
        originals=f"{RESULTS}/stage1/merged/{{model}}.{PROMPT_VERSION}.originals.parquet",
    wildcard_constraints:
        model=MODEL_PATTERN,
    params:
        cfg=subtree(CFG, "stages.stage1.merge_distance_threshold"),
        code=code_hash("analysis.stages"),
    log:
        f"{LOGS}/merged_attributes.{{model}}.log",
    resources:
        mem_mb=3000,
    conda:
        CONDA_ENV
    script:
        "../scripts/merged_attributes.py"


rule extracted_attribute_counts:
    """How many attributes each extractor produced and how many remain after merging."""
    input:
        merged=expand(f"{RESULTS}/stage1/merged/{{model}}.{PROMPT_VERSION}.parquet", model=EXTRACTORS),
        originals=expand(
            f"{RESULTS}/stage1/merged/{{model}}.{PROMPT_VERSION}.originals.parquet", model=EXTRACTORS
        ),
    output:
        records=f"{RESULTS}/records/extracted_attribute_counts.json",
    params:
        cfg=subtree(CFG, "stages.caveats", "stages.stage1", "prompts.version"),
        models=EXTRACTORS,
        code=code_hash("analysis.stages"),
    log:
        f"{LOGS}/extracted_attribute_counts.log",
    resources:
        mem_mb=500,
    conda:
        CONDA_ENV
    script:
        "../scripts/extracted_attribute_counts.py"


RECORD_FILES.append(f"{RESULTS}/records/extracted_attribute_counts.json")


rule attribute_verification:
    """One shard of one verifier's SUPPORTED/UNSUPPORTED label per stage-1 attribute."""
    input:
        attributes=f"{RESULTS}/tables/attributes.parquet",
        judgments=f"{RESULTS}/tables/attribute_judgments.parquet",
        conversations=f"{RESULTS}/tables/conversations.parquet",
    output:
        table=call_shard("stage1/verification"),
    wildcard_constraints:
        model=MODEL_PATTERN,
        shard=r"\d+",
    params:
        cfg=subtree(CFG, *STAGE_COMMON, "stages.stage1", "prompts", "llm", "run.seed"),
        model=model_spec,
        code=STAGE_CODE,
    log:
        f"{LOGS}/attribute_verification.{{model}}.{{shard}}.log",
    resources:
        mem_mb=2000,
        api=1,
    conda:
        CONDA_ENV
    script:
        "../scripts/model_calls.py"


rule attribute_judgments:
    """Stage-1 judgments the statistics read: imported ones plus each verifier's labels."""
    input:
        judgments=f"{RESULTS}/tables/attribute_judgments.parquet",
        verifiers=expand(
            f"{RESULTS}/stage1/verification/{{model}}.{PROMPT_VERSION}.parquet", model=VERIFIERS
        ),
    output:
        table=f"{RESULTS}/stage1/attribute_judgments.parquet",
    params:
        cfg=subtree(CFG, "prompts.version"),
        code=code_hash("analysis.stages", "analysis.data.schemas"),
    log:
        f"{LOGS}/attribute_judgments.log",
    resources:
        mem_mb=1000,
    conda:
        CONDA_ENV
    script:
        "../scripts/attribute_judgments.py"


EMBEDDING_INPUTS = {
    "attributes": f"{RESULTS}/tables/attributes.parquet",
    "reasons": f"{RESULTS}/tables/attributes.parquet",
    "prompts": f"{RESULTS}/tables/prompts.parquet",
    "responses": f"{RESULTS}/stage3/responses.parquet",
}


rule text_embeddings:
    """MiniLM vectors (normalized float32) of every attribute, reason, prompt or response."""
    input:
        table=lambda wildcards: EMBEDDING_INPUTS[wildcards.kind],
    output:
        table=f"{RESULTS}/embeddings/{{kind}}.parquet",
    wildcard_constraints:
        kind="attributes|reasons|prompts|responses",
    params:
        code=code_hash("analysis.stages.embeddings"),
    log:
        f"{LOGS}/text_embeddings.{{kind}}.log",
    threads: 2
    resources:
        mem_mb=3000,
    conda:
        CONDA_ENV
    script:
        "../scripts/text_embeddings.py"
