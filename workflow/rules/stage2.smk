# Stage 2 (docs/stages.md): every configured model votes YES/NO per relevance item; the BM25
# and MiniLM baselines select per pair as many attributes as people do on development prompts
# and are scored on the others, beside the all-positive rule.


if owns("calls"):

    rule relevance_votes:
        """Stage-2 votes the statistics read: imported votes plus each workflow model's votes."""
        input:
            votes=results("tables/relevance_votes.parquet"),
            models=call_tables("model_relevance_votes"),
        output:
            table=results("stage2/relevance_votes.parquet"),
        log:
            f"{CALL_LOGS}/relevance_votes.log",
        benchmark:
            f"{CALL_LOGS}/benchmarks/relevance_votes.tsv"
        resources:
            mem_mb=1000,
        params:
            cfg=subtree(CFG, "prompts.version"),
            code=code_hash("analysis.stages", "analysis.data.schemas"),
        script:
            "../scripts/relevance_votes.py"


rule baseline_votes:
    """BM25 and MiniLM retrieval baselines (top k per pair, k from people's rate on dev prompts) and the all-positive rule: P/R/F1 vs the human majority."""
    input:
        votes=results("tables/relevance_votes.parquet"),
        prompts=results("tables/prompts.parquet"),
        attributes=results("tables/attributes.parquet"),
        prompt_embeddings=results("embeddings/prompts.parquet"),
        attribute_embeddings=results("embeddings/attributes.parquet"),
    output:
        table=results("stage2/baseline_votes.parquet"),
        records=record_file("baseline_votes"),
        resamples=resample_file("baseline_votes"),
    log:
        f"{LOGS}/baseline_votes.log",
    benchmark:
        f"{LOGS}/benchmarks/baseline_votes.tsv"
    resources:
        mem_mb=2000,
    params:
        cfg=subtree(CFG, "stages.stage2.baselines", "stats", "run.seed"),
        code=code_hash(
            "analysis.stages",
            "analysis.stats.bootstrap",
            "analysis.stats.baseline_scores",
        ),
    script:
        "../scripts/baseline_votes.py"


RECORD_FILES.append(record_file("baseline_votes"))
