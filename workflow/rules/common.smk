# Shared definitions of the rule files (the names every stage's model-call rules use) and
# where their shard tables go (rule model_call_table, model_calls.smk, joins them).

from analysis.workflow_config import stage_models

PROMPT_VERSION = CFG["prompts"]["version"]
MODEL_PATTERN = "[a-z0-9][a-z0-9._-]*"
# The `models.<name>` subtree of one model-call job (its change reruns only that job).
model_spec = lambda wildcards: CFG["models"][wildcards.model]
STAGE_CODE = code_hash("analysis.stages", "analysis.llm")
STAGE_COMMON = ("stages.repair_attempts", "stages.repair_echo_chars", "stages.label_format")

# Each (model-call step, model) runs as llm.shards jobs, each asking one contiguous slice of the
# step's items (analysis/stages/shards.py); rule model_call_table joins them in shard order.
N_SHARDS = CFG["llm"]["shards"]
CALL_TABLE_DIRS = (
    "stage1/extracted",
    "stage1/verification",
    "stage2/votes",
    "stage3/generated",
    "stage3/judged",
    "stage3/controls",
)


def call_table(folder, model="{model}"):
    """One model's whole table of the model-call step writing under results/<ds>/<folder>."""
    return f"{RESULTS}/{folder}/{model}.{PROMPT_VERSION}.parquet"


def call_shard(folder):
    """One shard's table of that step (wildcards model and shard)."""
    return f"{RESULTS}/{folder}/shards/{{model}}.{PROMPT_VERSION}.{{shard}}-of-{N_SHARDS}.parquet"
