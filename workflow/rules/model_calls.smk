# Joining model-call shards: each model-call rule of stage1/2/3.smk writes llm.shards shard
# tables per model (call_shard in common.smk); this rule joins them into the model's table.


rule model_call_table:
    """One model's table of one model-call step: its llm.shards shard tables joined in order."""
    input:
        shards=lambda wildcards: expand(
            call_shard(wildcards.calls), model=wildcards.model, shard=range(N_SHARDS)
        ),
    output:
        table=call_table("{calls}"),
    wildcard_constraints:
        calls="|".join(CALL_TABLE_DIRS),
        model=MODEL_PATTERN,
    params:
        code=code_hash("analysis.stages.shards"),
    log:
        f"{LOGS}/model_call_table.{{calls}}.{{model}}.log",
    resources:
        mem_mb=1000,
    conda:
        CONDA_ENV
    script:
        "../scripts/model_call_table.py"
