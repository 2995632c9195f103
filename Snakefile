"""recenter: regenerate every number, figure and the PDF of the paper from the raw annotations.

    snakemake --cores 8                                   # bundled (simulated) world
    snakemake --cores 8 --config overrides="data=annotation_tool data.root=/abs/path"

The Hydra config is composed once here; each rule gets only the subtree it reads.
"""

from pathlib import Path

from snakemake.utils import min_version

from analysis.workflow_config import (
    code_hash,
    compose_config,
    overrides_from_snakemake,
    subtree,
)

min_version("9.27")


report: "workflow/report/workflow.rst"


# The repository (this file's folder), also when a test's Snakefile includes this one.
WORKFLOW_DIR = Path(str(workflow.current_basedir))
# --config / --configfile carry Hydra overrides only (key `overrides`); any other key is an error
CFG = compose_config(
    overrides_from_snakemake(config), config_dir=WORKFLOW_DIR / "config"
)
DATASET = CFG["data"]["name"]
RESULTS = f"results/{DATASET}"
FIGURES = f"figures/{DATASET}"
LOGS = f"logs/{DATASET}"
PAPER_GENERATED = f"paper/generated/{DATASET}"
PAPER_BUILD = f"paper/build/{DATASET}"
API_KEY_VARIABLES = (
    sorted({m["api_key_env"] for m in CFG["models"].values() if m.get("api_key_env")})
    if CFG["llm"]["mode"] != "replay"
    else []
)

# Each rule file appends its record files and figures; rule `numbers` and the paper read them.
RECORD_FILES = []
FIGURE_FILES = []


# The first rule is the default target: the paper, compiled.
rule all:
    """The paper, compiled: every number, table and figure in it regenerated."""
    input:
        f"{PAPER_BUILD}/paper.pdf",
        f"{RESULTS}/config.yaml",


include: "workflow/rules/common.smk"
include: "workflow/rules/model_calls.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/stage1.smk"
include: "workflow/rules/stage2.smk"
include: "workflow/rules/stage3.smk"
include: "workflow/rules/statistics.smk"
include: "workflow/rules/interventions.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/validation.smk"
include: "workflow/rules/paper.smk"


# Rules that take under a second run on the submitting host, never as cluster jobs.
localrules:
    all,
    resolved_config,
    software_environment,
    model_call_table,
    extracted_attribute_counts,
    parse_failures,
    call_usage,
    numbers,
    dataset_description,
    paper_tables,
    validation_table,
    claims,
    provenance_appendix,


# A run that calls models passes each model's API key variable to cluster jobs (from the
# submitting shell, nowhere else); a replay run declares none, since Snakemake stops on an unset one.
if API_KEY_VARIABLES:

    envvars:
        *API_KEY_VARIABLES,


rule resolved_config:
    """The resolved Hydra config of this run (runtime-only llm keys left out), next to the results."""
    output:
        f"{RESULTS}/config.yaml",
    log:
        f"{LOGS}/resolved_config.log",
    benchmark:
        f"{LOGS}/benchmarks/resolved_config.tsv"
    resources:
        mem_mb=200,
    params:
        cfg=subtree(CFG, *sorted(CFG)),
    script:
        "workflow/scripts/resolved_config.py"
