# Stage 3 (docs/stages.md): generic and personalized responses, judges' 1-5 ratings in a
# seeded shuffled order, explicit-mention detection, the three controls, and the parse-failure
# counts of every model-call step of the three stages.

GENERATORS = stage_models(CFG, "stage3", "generators")
JUDGES = stage_models(CFG, "stage3", "judges")
JUDGE_INPUTS = dict(
    responses=f"{RESULTS}/stage3/responses.parquet",
    votes=f"{RESULTS}/tables/relevance_votes.parquet",
    ratings=f"{RESULTS}/tables/preference_ratings.parquet",
    prompts=f"{RESULTS}/tables/prompts.parquet",
    attributes=f"{RESULTS}/tables/attributes.parquet",
)


rule model_responses:
    """One shard of one generator's generic and personalized responses per (user, prompt) pair."""
    input:
        votes=f"{RESULTS}/tables/relevance_votes.parquet",
        prompts=f"{RESULTS}/tables/prompts.parquet",
        attributes=f"{RESULTS}/tables/attributes.parquet",
    output:
        table=call_shard("stage3/generated"),
    wildcard_constraints:
        model=MODEL_PATTERN,
        shard=r"\d+",
    params:
        cfg=subtree(CFG, *STAGE_COMMON, "stages.stage3", "prompts", "llm", "run.seed"),
        model=model_spec,
        code=STAGE_CODE,
    log:
        f"{LOGS}/model_responses.{{model}}.{{shard}}.log",
    resources:
        mem_mb=2000,
        api=1,
    conda:
        CONDA_ENV
    script:
        "../scripts/model_calls.py"


rule responses:
    """Stage-3 responses the statistics read: imported ones plus each workflow generator's."""
    input:
        responses=f"{RESULTS}/tables/responses.parquet",
        models=expand(
            f"{RESULTS}/stage3/generated/{{model}}.{PROMPT_VERSION}.parquet", model=GENERATORS
        ),
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


rule model_preference_ratings:
    """One shard of one judge's 1-5 ratings (5 = personalized much better) per rating slot."""
    input:
        **JUDGE_INPUTS,
    output:
        table=call_shard("stage3/judged"),
    wildcard_constraints:
        model=MODEL_PATTERN,
        shard=r"\d+",
    params:
        cfg=subtree(CFG, *STAGE_COMMON, "stages.stage3", "prompts", "llm", "run.seed"),
        model=model_spec,
        code=STAGE_CODE,
    log:
        f"{LOGS}/model_preference_ratings.{{model}}.{{shard}}.log",
    resources:
        mem_mb=2000,
        api=1,
    conda:
        CONDA_ENV
    script:
        "../scripts/model_calls.py"


rule preference_ratings:
    """Stage-3 ratings the statistics read: imported human and judge ratings plus workflow judges."""
    input:
        ratings=f"{RESULTS}/tables/preference_ratings.parquet",
        models=expand(f"{RESULTS}/stage3/judged/{{model}}.{PROMPT_VERSION}.parquet", model=JUDGES),
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


rule model_control_ratings:
    """One shard of one judge's ratings under the controls (no context, mismatched, swapped)."""
    input:
        **JUDGE_INPUTS,
    output:
        table=call_shard("stage3/controls"),
    wildcard_constraints:
        model=MODEL_PATTERN,
        shard=r"\d+",
    params:
        cfg=subtree(CFG, *STAGE_COMMON, "stages.stage3", "prompts", "llm", "run.seed"),
        model=model_spec,
        code=STAGE_CODE,
    log:
        f"{LOGS}/model_control_ratings.{{model}}.{{shard}}.log",
    resources:
        mem_mb=2000,
        api=1,
    conda:
        CONDA_ENV
    script:
        "../scripts/model_calls.py"


rule control_ratings:
    """Every judge's control ratings in one table, with position consistency and mean ratings."""
    input:
        controls=expand(f"{RESULTS}/stage3/controls/{{model}}.{PROMPT_VERSION}.parquet", model=JUDGES),
        judged=expand(f"{RESULTS}/stage3/judged/{{model}}.{PROMPT_VERSION}.parquet", model=JUDGES),
    output:
        table=f"{RESULTS}/stage3/controls.parquet",
        records=f"{RESULTS}/records/control_ratings.json",
    params:
        cfg=subtree(CFG, "stats", "stages.caveats", "run.seed"),
        models=JUDGES,
        code=code_hash(
            "analysis.stages", "analysis.stats.bootstrap", "analysis.stats.control_effects"
        ),
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
MODEL_CALL_OUTPUTS = (
    [("stage1_extraction", m, f"{RESULTS}/stage1/extracted/{m}.{PROMPT_VERSION}.parquet") for m in EXTRACTORS]
    + [("stage1_verification", m, f"{RESULTS}/stage1/verification/{m}.{PROMPT_VERSION}.parquet") for m in VERIFIERS]
    + [("stage2_relevance", m, f"{RESULTS}/stage2/votes/{m}.{PROMPT_VERSION}.parquet") for m in VOTERS]
    + [("stage3_generation", m, f"{RESULTS}/stage3/generated/{m}.{PROMPT_VERSION}.parquet") for m in GENERATORS]
    + [("stage3_judging", m, f"{RESULTS}/stage3/judged/{m}.{PROMPT_VERSION}.parquet") for m in JUDGES]
    + [("stage3_controls", m, f"{RESULTS}/stage3/controls/{m}.{PROMPT_VERSION}.parquet") for m in JUDGES]
)


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
