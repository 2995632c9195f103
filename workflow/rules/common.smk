# Definitions every rule file shares. Where outputs go (one helper per kind of path) and the
# models of each model-call step (the registry analysis/stages/steps.py:CALL_STEPS).

from analysis.stages.steps import CALL_STEPS
from analysis.workflow_config import call_store_root, stage_models

PROMPT_VERSION = CFG["prompts"]["version"]
MODEL_PATTERN = "[a-z0-9][a-z0-9._-]*"
# The `models.<name>` subtree of one model-call job (its change reruns only that job).
model_spec = lambda wildcards: CFG["models"][wildcards.model]
STAGE_CODE = code_hash("analysis.stages", "analysis.llm")
STAGE_COMMON = (
    "stages.repair_attempts",
    "stages.repair_echo_chars",
    "stages.label_format",
)

# The call store of model-call jobs when files move through a storage provider: the one on the
# shared claim (<prefix>/<llm.store>), so calls recorded in a pod outlive it (docs/cluster.md).
# None: the store beside the sources. Passed as a param only when set, so a local run's params
# (and with them its rerun decisions) are those of a run without this.
CALL_STORE = call_store_root(
    CFG,
    workflow.storage_settings.default_storage_provider,
    workflow.storage_settings.default_storage_prefix,
)
CALL_STORE_PARAM = {"store": CALL_STORE} if CALL_STORE else {}

# Each (model-call step, model) runs as llm.shards jobs, each asking one contiguous slice of the
# step's items (analysis/stages/shards.py); rule model_call_table joins them in shard order.
N_SHARDS = CFG["llm"]["shards"]


def results(path):
    """A file of this dataset's results: results/<dataset>/<path>."""
    return f"{RESULTS}/{path}"


def record_file(rule):
    """The number records of one rule, results/<dataset>/records/<rule>.json."""
    return results(f"records/{rule}.json")


def step_models(step):
    """The models one model-call step runs for (stages.<stage>.<role> of its registry entry)."""
    return stage_models(CFG, CALL_STEPS[step].config_stage, CALL_STEPS[step].role)


def model_table(folder, model="{model}"):
    """One model's whole table of the model-call step writing under results/<ds>/<folder>."""
    return results(f"{folder}/{model}.{PROMPT_VERSION}.parquet")


def call_table(step, model="{model}"):
    """One model's whole table of a model-call step (its shards joined)."""
    return model_table(CALL_STEPS[step].folder, model)


def call_tables(step):
    """The tables of every model of a model-call step, in model order."""
    return [call_table(step, model) for model in step_models(step)]


def shard_table(folder, model="{model}", shard="{shard}"):
    """One shard's table of the model-call step writing under results/<ds>/<folder>."""
    return results(
        f"{folder}/shards/{model}.{PROMPT_VERSION}.{shard}-of-{N_SHARDS}.parquet"
    )


def call_shard(step):
    """One shard's table of a model-call step (wildcards model and shard)."""
    return shard_table(CALL_STEPS[step].folder)
