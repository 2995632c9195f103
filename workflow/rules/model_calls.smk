# Model-call rules, generated from the one registry of steps (analysis/stages/steps.py:
# CALL_STEPS): per step, a rule named after it runs one shard of one model (wildcards model and
# shard, llm.shards jobs per model); rule model_call_table joins a model's shards; rule
# parse_failures counts unreadable outputs over every step's tables. A shard job removes its
# model's joined table when it starts (analysis/workflow_io.py: run_model_step), so a job that
# fails or is killed leaves no table of the old shards behind. Adding a step is one
# registry entry plus its function (docs/architecture.md). The rules are the model-call tier's
# (analysis/variants.py): in a sweep, one member defines them for every member that shares them.

if owns("calls"):

    for _step_name, _step in CALL_STEPS.items():

        rule:
            f"""{_step.doc}"""
            name:
                _step_name
            input:
                **{name: results(path) for name, path in _step.inputs.items()},
            output:
                table=call_shard(_step_name),
            log:
                f"{CALL_LOGS}/{_step_name}.{{model}}.{{shard}}.log",
            benchmark:
                f"{CALL_LOGS}/benchmarks/{_step_name}.{{model}}.{{shard}}.tsv"
            wildcard_constraints:
                model=MODEL_PATTERN,
                shard=r"\d+",
            resources:
                mem_mb=2000,
                api=1,
            params:
                **CALL_STORE_PARAM,
                cfg=subtree(
                    CFG,
                    *STAGE_COMMON,
                    f"stages.{_step.config_stage}",
                    "prompts",
                    "llm",
                    "run.seed",
                ),
                model=model_spec,
                step=_step_name,
                joined=joined_call_table(_step_name),
                code=STAGE_CODE,
            script:
                "../scripts/model_calls.py"

    rule model_call_table:
        """One model's table of one model-call step: its llm.shards shard tables joined in order."""
        input:
            shards=lambda wildcards: [
                shard_table(wildcards.calls, wildcards.model, shard)
                for shard in range(N_SHARDS)
            ],
        output:
            table=model_table("{calls}"),
        log:
            f"{CALL_LOGS}/model_call_table.{{calls}}.{{model}}.log",
        benchmark:
            f"{CALL_LOGS}/benchmarks/model_call_table.{{calls}}.{{model}}.tsv"
        wildcard_constraints:
            calls="|".join(step.folder for step in CALL_STEPS.values()),
            model=MODEL_PATTERN,
        resources:
            mem_mb=1000,
        params:
            code=code_hash("analysis.stages.shards"),
        script:
            "../scripts/model_call_table.py"
