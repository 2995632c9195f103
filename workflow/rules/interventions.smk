# Rules of the trained interventions (analysis.learn; docs/interventions.md): a verifier for
# stage 1, a relevance classifier for stage 2 and reward models for stage 3, each trained on
# human labels and measured against held-out people. Model files are outputs, never committed.


rule attribute_verifier:
    """Stage-1 verifier trained on human acceptance, grouped by user; verify-and-refine effect."""
    input:
        attributes=results("tables/attributes.parquet"),
        conversations=results("tables/conversations.parquet"),
        judgments=results("stage1/attribute_judgments.parquet"),
        users=results("tables/users.parquet"),
        attribute_embeddings=results("embeddings/attributes.parquet"),
        reason_embeddings=results("embeddings/reasons.parquet"),
    output:
        records=record_file("attribute_verifier"),
        resamples=resample_file("attribute_verifier"),
        model=results("models/attribute_verifier.joblib"),
        predictions=results("stage1/verifier_predictions.parquet"),
    log:
        f"{LOGS}/attribute_verifier.log",
    benchmark:
        f"{LOGS}/benchmarks/attribute_verifier.tsv"
    threads: 2
    resources:
        mem_mb=3000,
    params:
        cfg=subtree(CFG, "learn", "stats", "run.seed"),
        code=code_hash("analysis.learn", "analysis.stats"),
    script:
        "../scripts/attribute_verifier.py"


rule relevance_classifier:
    """Stage-2 relevance classifier against the human majority, test prompts unseen, per round."""
    input:
        votes=results("stage2/relevance_votes.parquet"),
        baseline_votes=results("stage2/baseline_votes.parquet"),
        prompts=results("tables/prompts.parquet"),
        attributes=results("tables/attributes.parquet"),
        classifier_set=results("tables/relevance_classifier_set.parquet"),
        prompt_embeddings=results("embeddings/prompts.parquet"),
        attribute_embeddings=results("embeddings/attributes.parquet"),
    output:
        records=record_file("relevance_classifier"),
        resamples=resample_file("relevance_classifier"),
        model=results("models/relevance_classifier.joblib"),
        predictions=results("stage2/classifier_predictions.parquet"),
    log:
        f"{LOGS}/relevance_classifier.log",
    benchmark:
        f"{LOGS}/benchmarks/relevance_classifier.tsv"
    threads: 2
    resources:
        mem_mb=3000,
    params:
        cfg=subtree(CFG, "learn", "stats", "run.seed"),
        code=code_hash("analysis.learn", "analysis.stats"),
    script:
        "../scripts/relevance_classifier.py"


rule reward_models:
    """Stage-3 reward models of the human 1-5 rating beside the LLM judges and the human ceiling."""
    input:
        ratings=results("stage3/preference_ratings.parquet"),
        responses=results("stage3/responses.parquet"),
        attributes=results("tables/attributes.parquet"),
        response_embeddings=results("embeddings/responses.parquet"),
        attribute_embeddings=results("embeddings/attributes.parquet"),
        prompt_embeddings=results("embeddings/prompts.parquet"),
    output:
        records=record_file("reward_models"),
        resamples=resample_file("reward_models"),
        model=results("models/reward_models.joblib"),
        predictions=results("stage3/reward_model_predictions.parquet"),
    log:
        f"{LOGS}/reward_models.log",
    benchmark:
        f"{LOGS}/benchmarks/reward_models.tsv"
    threads: 2
    resources:
        mem_mb=3000,
    params:
        cfg=subtree(CFG, "learn", "stats", "run.seed"),
        code=code_hash("analysis.learn", "analysis.stats"),
    script:
        "../scripts/reward_models.py"


RECORD_FILES.extend(
    [
        record_file("attribute_verifier"),
        record_file("relevance_classifier"),
        record_file("reward_models"),
    ]
)
