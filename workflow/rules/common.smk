# Definitions every rule file shares. Where outputs go (the one path helper, analysis/paths.py,
# per tier of the build's variant; repository files through repo_file) and the models of each
# model-call step (the registry analysis/stages/steps.py:CALL_STEPS).

import os

from analysis.resamples import resamples_path
from analysis.stages.steps import CALL_STEPS
from analysis.variants import output_tier
from analysis.workflow_config import call_store_root, stage_models

DATASET = CFG["data"]["name"]
#: where each tier of this build writes (analysis.variants: the dataset's folder for a tier the
#: variant does not change, so a stats variant reads the default build's model calls)
PATHS = VARIANT.paths("analysis")
DATA_PATHS = VARIANT.paths("data")
CALL_PATHS = VARIANT.paths("calls")
RESULTS = PATHS.results
FIGURES = PATHS.figures
LOGS = PATHS.logs
DATA_LOGS = DATA_PATHS.logs
CALL_LOGS = CALL_PATHS.logs
PAPER_GENERATED = PATHS.paper_generated
PAPER_BUILD = PATHS.paper_build
API_KEY_VARIABLES = (
    sorted({m["api_key_env"] for m in CFG["models"].values() if m.get("api_key_env")})
    if CFG["llm"]["mode"] != "replay"
    else []
)

PROMPT_VERSION = CFG["prompts"]["version"]
MODEL_PATTERN = "[a-z0-9][a-z0-9._-]*"
# The `models.<name>` subtree of one model-call job without its runtime-only keys (its change
# reruns only that job; a key variable, concurrency or server threads rerun nothing).
model_spec = lambda wildcards: model_params(CFG, wildcards.model)
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


def repo_file(path):
    """A file of the repository (the sources: config, data, paper, benchmarks), as Snakemake
    sees it: relative to the working directory, which is the repository itself unless the
    workflow runs as a module or with --directory."""
    return os.path.relpath(REPO / path)


#: the folders of the model-call steps' tables: the model-call tier's, like its stage tables
CALL_FOLDERS = tuple(step.folder for step in CALL_STEPS.values())


def tier_of(path):
    """The tier (analysis/variants.py) of a file under results/<dataset>/."""
    return output_tier(path, CALL_FOLDERS)


def owns(tier):
    """Whether this build defines the rules of a tier (a sweep gives a shared tier to one member)."""
    return tier in OWNS


def results(path):
    """A file of this build's results: results/<dataset>[/variants/<name>]/<path>, in the
    folder of the path's tier (a shared file in the folder of the settings it depends on).
    """
    return VARIANT.paths(tier_of(path)).result(path)


def call_file(path):
    """A file of the model-call tier, for paths whose folder is a wildcard ({calls})."""
    return CALL_PATHS.result(path)


def record_file(rule):
    """The number records of one rule, results/<dataset>/.../records/<rule>.json."""
    return results(f"records/{rule}.json")


def resample_file(rule):
    """The resamples of one rule's records (their designs' parts), beside them (analysis/resamples.py)."""
    return resamples_path(record_file(rule))


def step_models(step):
    """The models one model-call step runs for (stages.<stage>.<role> of its registry entry)."""
    return stage_models(CFG, CALL_STEPS[step].config_stage, CALL_STEPS[step].role)


def model_table(folder, model="{model}"):
    """One model's whole table of the model-call step writing under results/<ds>/<folder>."""
    return call_file(f"{folder}/{model}.{PROMPT_VERSION}.parquet")


def call_table(step, model="{model}"):
    """One model's whole table of a model-call step (its shards joined)."""
    return model_table(CALL_STEPS[step].folder, model)


def call_tables(step):
    """The tables of every model of a model-call step, in model order."""
    return [call_table(step, model) for model in step_models(step)]


def shard_table(folder, model="{model}", shard="{shard}"):
    """One shard's table of the model-call step writing under results/<ds>/<folder>."""
    return call_file(
        f"{folder}/shards/{model}.{PROMPT_VERSION}.{shard}-of-{N_SHARDS}.parquet"
    )


def call_shard(step):
    """One shard's table of a model-call step (wildcards model and shard)."""
    return shard_table(CALL_STEPS[step].folder)


def joined_call_table(step):
    """A shard job's params function: its model's joined table of the step, which the job
    removes when it starts (analysis.workflow_io.run_model_step)."""
    return lambda wildcards: call_table(step, wildcards.model)
