# Rules of the trained interventions (analysis.learn; docs/interventions.md): a verifier for
# stage 1, a relevance classifier for stage 2 and reward models for stage 3, each trained on
# human labels and measured against held-out people. Model files are outputs, never committed.


rule attribute_verifier:
    """Stage-1 verifier trained on human acceptance, grouped by user; verify-and-refine effect."""
    input:
        attributes=f"{RESULTS}/tables/attributes.parquet",
        conversations=f"{RESULTS}/tables/conversations.parquet",
        judgments=f"{RESULTS}/stage1/attribute_judgments.parquet",
        attribute_embeddings=f"{RESULTS}/embeddings/attributes.parquet",
        reason_embeddings=f"{RESULTS}/embeddings/reasons.parquet",
    output:
        records=f"{RESULTS}/records/attribute_verifier.json",
        model=f"{RESULTS}/models/attribute_verifier.joblib",
        predictions=f"{RESULTS}/stage1/verifier_predictions.parquet",
    params:
        cfg=subtree(CFG, "learn", "stats", "run.seed"),
        code=code_hash("analysis.learn", "analysis.stats"),
    log:
        f"{LOGS}/attribute_verifier.log",
    threads: 2
    resources:
        mem_mb=3000,
    conda:
        CONDA_ENV
    script:
        "../scripts/attribute_verifier.py"


rule relevance_classifier:
    """Stage-2 relevance classifier against the human majority, test prompts unseen, per round."""
    input:
        votes=f"{RESULTS}/stage2/relevance_votes.parquet",
        baseline_votes=f"{RESULTS}/stage2/baseline_votes.parquet",
        prompts=f"{RESULTS}/tables/prompts.parquet",
        attributes=f"{RESULTS}/tables/attributes.parquet",
        classifier_set=f"{RESULTS}/tables/relevance_classifier_set.parquet",
        prompt_embeddings=f"{RESULTS}/embeddings/prompts.parquet",
        attribute_embeddings=f"{RESULTS}/embeddings/attributes.parquet",
    output:
        records=f"{RESULTS}/records/relevance_classifier.json",
        model=f"{RESULTS}/models/relevance_classifier.joblib",
        predictions=f"{RESULTS}/stage2/classifier_predictions.parquet",
    params:
        cfg=subtree(CFG, "learn", "stats", "run.seed"),
        code=code_hash("analysis.learn", "analysis.stats"),
    log:
        f"{LOGS}/relevance_classifier.log",
    threads: 2
    resources:
        mem_mb=3000,
    conda:
        CONDA_ENV
    script:
        "../scripts/relevance_classifier.py"


rule reward_models:
    """Stage-3 reward models of the human 1-5 rating beside the LLM judges and the human ceiling."""
    input:
        ratings=f"{RESULTS}/stage3/preference_ratings.parquet",
        responses=f"{RESULTS}/stage3/responses.parquet",
        attributes=f"{RESULTS}/tables/attributes.parquet",
        response_embeddings=f"{RESULTS}/embeddings/responses.parquet",
        attribute_embeddings=f"{RESULTS}/embeddings/attributes.parquet",
        prompt_embeddings=f"{RESULTS}/embeddings/prompts.parquet",
    output:
        records=f"{RESULTS}/records/reward_models.json",
        model=f"{RESULTS}/models/reward_models.joblib",
        predictions=f"{RESULTS}/stage3/reward_model_predictions.parquet",
    params:
        cfg=subtree(CFG, "learn", "stats", "run.seed"),
        code=code_hash("analysis.learn", "analysis.stats"),
    log:
        f"{LOGS}/reward_models.log",
    threads: 2
    resources:
        mem_mb=3000,
    conda:
        CONDA_ENV
    script:
        "../scripts/reward_models.py"


RECORD_FILES.extend(
    [
        f"{RESULTS}/records/attribute_verifier.json",
        f"{RESULTS}/records/relevance_classifier.json",
        f"{RESULTS}/records/reward_models.json",
    ]
)
