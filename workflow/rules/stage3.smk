# Stage 3 (docs/stages.md): generic and personalized responses, judges' 1-5 ratings in a
# seeded shuffled order, explicit-mention detection, the three controls, and the parse-failure
# counts of every model-call step of the three stages.

JUDGES = step_models("model_preference_ratings")


if owns("calls"):

    rule responses:
        """Stage-3 responses the statistics read: imported ones plus each workflow generator's."""
        input:
            responses=results("tables/responses.parquet"),
            models=call_tables("model_responses"),
        output:
            table=results("stage3/responses.parquet"),
        log:
            f"{CALL_LOGS}/responses.log",
        benchmark:
            f"{CALL_LOGS}/benchmarks/responses.tsv"
        resources:
            mem_mb=1000,
        params:
            cfg=subtree(CFG, "prompts.version"),
            code=code_hash("analysis.stages", "analysis.data.schemas"),
        script:
            "../scripts/responses.py"


if owns("calls"):

    rule preference_ratings:
        """Stage-3 ratings the statistics read: imported human and judge ratings plus workflow judges."""
        input:
            ratings=results("tables/preference_ratings.parquet"),
            models=call_tables("model_preference_ratings"),
        output:
            table=results("stage3/preference_ratings.parquet"),
        log:
            f"{CALL_LOGS}/preference_ratings.log",
        benchmark:
            f"{CALL_LOGS}/benchmarks/preference_ratings.tsv"
        resources:
            mem_mb=1000,
        params:
            cfg=subtree(CFG, "prompts.version"),
            code=code_hash("analysis.stages", "analysis.data.schemas"),
        script:
            "../scripts/preference_ratings.py"


rule explicit_mentions:
    """Whether each response mentions each of its slot attributes outright (local detector), and the detector's own records."""
    input:
        responses=results("stage3/responses.parquet"),
        ratings=results("stage3/preference_ratings.parquet"),
        votes=results("tables/relevance_votes.parquet"),
        attributes=results("tables/attributes.parquet"),
    output:
        table=results("stage3/mentions.parquet"),
        records=record_file("explicit_mentions"),
        resamples=resample_file("explicit_mentions"),
    log:
        f"{LOGS}/explicit_mentions.log",
    benchmark:
        f"{LOGS}/benchmarks/explicit_mentions.tsv"
    threads: 1  # MiniLM runs on one thread (same bytes on any machine: embeddings.py)
    resources:
        mem_mb=3000,
    params:
        cfg=subtree(CFG, "stages.stage3.mentions", "stats", "run.seed"),
        code=code_hash("analysis.stages"),
    script:
        "../scripts/explicit_mentions.py"


RECORD_FILES.append(record_file("explicit_mentions"))


rule control_ratings:
    """Every judge's control ratings in one table, with position consistency and mean ratings."""
    input:
        controls=call_tables("model_control_ratings"),
        judged=call_tables("model_preference_ratings"),
    output:
        table=results("stage3/controls.parquet"),
        records=record_file("control_ratings"),
        resamples=resample_file("control_ratings"),
    log:
        f"{LOGS}/control_ratings.log",
    benchmark:
        f"{LOGS}/benchmarks/control_ratings.tsv"
    resources:
        mem_mb=1000,
    params:
        cfg=subtree(CFG, "stats", "stages.caveats", "run.seed"),
        models=JUDGES,
        code=code_hash("analysis.stages", "analysis.stats.control_effects"),
    script:
        "../scripts/control_ratings.py"


RECORD_FILES.append(record_file("control_ratings"))

# (stage, model, path) of every model-call table, for the parse-failure counts and the call usage.
MODEL_CALL_OUTPUTS = [
    (step.stage, model, call_table(name, model))
    for name, step in CALL_STEPS.items()
    for model in step_models(name)
]


if owns("calls"):

    rule parse_failures:
        """Items per model and stage whose output stayed unreadable after one repair request."""
        input:
            tables=[path for _, _, path in MODEL_CALL_OUTPUTS],
        output:
            table=results("parse_failures.parquet"),
            records=record_file("parse_failures"),
            resamples=resample_file("parse_failures"),
        log:
            f"{CALL_LOGS}/parse_failures.log",
        benchmark:
            f"{CALL_LOGS}/benchmarks/parse_failures.tsv"
        resources:
            mem_mb=500,
        params:
            cfg=subtree(
                CFG,
                "stages.caveats",
                "stages.repair_attempts",
                "prompts.version",
                "llm.store",
            ),
            outputs=[list(o) for o in MODEL_CALL_OUTPUTS],
            code=code_hash("analysis.stages"),
        script:
            "../scripts/parse_failures.py"


RECORD_FILES.append(record_file("parse_failures"))
