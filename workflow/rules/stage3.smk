# Stage 3 (docs/stages.md): generic and personalized responses, judges' 1-5 ratings in a
# seeded shuffled order, explicit-mention detection, the three controls, and the parse-failure
# counts of every model-call step of the three stages.

JUDGES = step_models("model_preference_ratings")


rule responses:
    """Stage-3 responses the statistics read: imported ones plus each workflow generator's."""
    input:
        responses=f"{RESULTS}/tables/responses.parquet",
        models=call_tables("model_responses"),
    output:
        table=f"{RESULTS}/stage3/responses.parquet",
    params:
        cfg=subtree(CFG, "prompts.version"),
        code=code_hash("analysis.stages", "analysis.data.schemas"),
    log:
        f"{LOGS}/responses.log",
    resources:
        mem_mb=1000,
    conda:
        CONDA_ENV
    script:
        "../scripts/responses.py"


rule preference_ratings:
    """Stage-3 ratings the statistics read: imported human and judge ratings plus workflow judges."""
    input:
        ratings=f"{RESULTS}/tables/preference_ratings.parquet",
        models=call_tables("model_preference_ratings"),
    output:
        table=f"{RESULTS}/stage3/preference_ratings.parquet",
    params:
        cfg=subtree(CFG, "prompts.version"),
        code=code_hash("analysis.stages", "analysis.data.schemas"),
    log:
        f"{LOGS}/preference_ratings.log",
    resources:
        mem_mb=1000,
    conda:
        CONDA_ENV
    script:
        "../scripts/preference_ratings.py"


rule explicit_mentions:
    """Whether each response mentions each of its slot attributes outright (local detector)."""
    input:
        responses=f"{RESULTS}/stage3/responses.parquet",
        ratings=f"{RESULTS}/stage3/preference_ratings.parquet",
        votes=f"{RESULTS}/tables/relevance_votes.parquet",
        attributes=f"{RESULTS}/tables/attributes.parquet",
    output:
        table=f"{RESULTS}/stage3/mentions.parquet",
        records=f"{RESULTS}/records/explicit_mentions.json",
    params:
        cfg=subtree(CFG, "stages.stage3.mentions"),
        code=code_hash("analysis.stages"),
    log:
        f"{LOGS}/explicit_mentions.log",
    threads: 2
    resources:
        mem_mb=3000,
    conda:
        CONDA_ENV
    script:
        "../scripts/explicit_mentions.py"


RECORD_FILES.append(f"{RESULTS}/records/explicit_mentions.json")


rule control_ratings:
    """Every judge's control ratings in one table, with position consistency and mean ratings."""
    input:
        controls=call_tables("model_control_ratings"),
        judged=call_tables("model_preference_ratings"),
    output:
        table=f"{RESULTS}/stage3/controls.parquet",
        records=f"{RESULTS}/records/control_ratings.json",
    params:
        cfg=subtree(CFG, "stats", "stages.caveats", "run.seed"),
        models=JUDGES,
        code=code_hash("analysis.stages", "analysis.stats.bootstrap"),
    log:
        f"{LOGS}/control_ratings.log",
    resources:
        mem_mb=1000,
    conda:
        CONDA_ENV
    script:
        "../scripts/control_ratings.py"


RECORD_FILES.append(f"{RESULTS}/records/control_ratings.json")

# (stage, model, path) of every model-call table, for the parse-failure counts.
MODEL_CALL_OUTPUTS = [
    (step.stage, model, call_table(name, model))
    for name, step in CALL_STEPS.items()
    for model in step_models(name)
]


rule parse_failures:
    """Items per model and stage whose output stayed unreadable after one repair request."""
    input:
        tables=[path for _, _, path in MODEL_CALL_OUTPUTS],
    output:
        table=f"{RESULTS}/parse_failures.parquet",
        records=f"{RESULTS}/records/parse_failures.json",
    params:
        cfg=subtree(
            CFG, "stages.caveats", "stages.repair_attempts", "prompts.version", "llm.store"
        ),
        outputs=[list(o) for o in MODEL_CALL_OUTPUTS],
        code=code_hash("analysis.stages"),
    log:
        f"{LOGS}/parse_failures.log",
    resources:
        mem_mb=500,
    conda:
        CONDA_ENV
    script:
        "../scripts/parse_failures.py"


RECORD_FILES.append(f"{RESULTS}/records/parse_failures.json")
