"""recenter: regenerate every number, figure and the PDF of the paper from the raw annotations.

    snakemake --cores 8                                   # bundled (simulated) world
    snakemake --cores 8 --config overrides="data=annotation_tool data.root=/abs/path"

The Hydra config is composed once here; each rule gets only the subtree it reads.
"""

from pathlib import Path

from analysis.workflow_config import code_hash, compose_config, overrides_from_snakemake, subtree

# --config / --configfile carry Hydra overrides only (key `overrides`); any other key is an error
CFG = compose_config(overrides_from_snakemake(config), config_dir=Path(workflow.basedir) / "config")
DATASET = CFG["data"]["name"]
RESULTS = f"results/{DATASET}"
FIGURES = f"figures/{DATASET}"
LOGS = f"logs/{DATASET}"
# The software of every rule: the project environment (pyproject.toml is its source of truth).
CONDA_ENV = str(Path(workflow.basedir) / "environment.yml")

# Each rule file appends its record files and figures; rule `numbers` and the paper read them.
RECORD_FILES = []
FIGURE_FILES = []


include: "workflow/rules/common.smk"
include: "workflow/rules/model_calls.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/stage1.smk"
include: "workflow/rules/stage2.smk"
include: "workflow/rules/stage3.smk"
include: "workflow/rules/statistics.smk"
include: "workflow/rules/interventions.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/paper.smk"


rule all:
    """The paper, compiled: every number, table and figure in it regenerated."""
    input:
        "paper/build/paper.pdf",
        f"{RESULTS}/config.yaml",
    default_target: True


rule resolved_config:
    """The resolved Hydra config of this run (runtime-only llm keys left out), next to the results."""
    output:
        f"{RESULTS}/config.yaml",
    params:
        cfg=subtree(CFG, *sorted(CFG)),
    log:
        f"{LOGS}/resolved_config.log",
    resources:
        mem_mb=200,
    conda:
        CONDA_ENV
    script:
        "workflow/scripts/resolved_config.py"
