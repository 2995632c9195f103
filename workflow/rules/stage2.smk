# Stage 2 (docs/stages.md): every configured model votes YES/NO per relevance item; the BM25
# and MiniLM baselines are thresholded on development prompts and scored on the others.

VOTERS = stage_models(CFG, "stage2", "voters")


rule model_relevance_votes:
    """One shard of one model's YES/NO votes per sampled final-round relevance item."""
    input:
        relevance_items=f"{RESULTS}/tables/relevance_items.parquet",
        prompts=f"{RESULTS}/tables/prompts.parquet",
        attributes=f"{RESULTS}/tables/attributes.parquet",
    output:
        table=call_shard("stage2/votes"),
    wildcard_constraints:
        model=MODEL_PATTERN,
        shard=r"\d+",
    params:
        cfg=subtree(CFG, *STAGE_COMMON, "stages.stage2", "prompts", "llm", "run.seed"),
        model=model_spec,
        code=STAGE_CODE,
    log:
        f"{LOGS}/model_relevance_votes.{{model}}.{{shard}}.log",
    resources:
        mem_mb=2000,
        api=1,
    conda:
        CONDA_ENV
    script:
        "../scripts/model_calls.py"


rule relevance_votes:
    """Stage-2 votes the statistics read: imported votes plus each workflow model's votes."""
    input:
        votes=f"{RESULTS}/tables/relevance_votes.parquet",
        models=expand(f"{RESULTS}/stage2/votes/{{model}}.{PROMPT_VERSION}.parquet", model=VOTERS),
    output:
        table=f"{RESULTS}/stage2/relevance_votes.parquet",
    params:
        cfg=subtree(CFG, "prompts.version"),
        code=code_hash("analysis.stages", "analysis.data.schemas"),
    log:
        f"{LOGS}/relevance_votes.log",
    resources:
        mem_mb=1000,
    conda:
        CONDA_ENV
    script:
        "../scripts/relevance_votes.py"


rule baseline_votes:
    """BM25 and MiniLM retrieval baselines: dev-split thresholds, P/R/F1 vs the human majority."""
    input:
        votes=f"{RESULTS}/tables/relevance_votes.parquet",
        prompts=f"{RESULTS}/tables/prompts.parquet",
        attributes=f"{RESULTS}/tables/attributes.parquet",
        prompt_embeddings=f"{RESULTS}/embeddings/prompts.parquet",
        attribute_embeddings=f"{RESULTS}/embeddings/attributes.parquet",
    output:
        table=f"{RESULTS}/stage2/baseline_votes.parquet",
        records=f"{RESULTS}/records/baseline_votes.json",
    params:
        cfg=subtree(CFG, "stages.stage2.baselines", "stats", "run.seed"),
        code=code_hash(
            "analysis.stages", "analysis.stats.bootstrap", "analysis.stats.baseline_scores"
        ),
    log:
        f"{LOGS}/baseline_votes.log",
    resources:
        mem_mb=2000,
    conda:
        CONDA_ENV
    script:
        "../scripts/baseline_votes.py"


RECORD_FILES.append(f"{RESULTS}/records/baseline_votes.json")
