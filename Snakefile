"""recenter: regenerate every number, figure and the PDF of the paper from the raw annotations.

    snakemake --cores 8                                   # bundled (simulated) world
    snakemake --cores 8 --config overrides="data=annotation_tool data.root=/abs/path"

The Hydra config is composed once here; each rule gets only the subtree it reads.
"""

from pathlib import Path

from analysis.workflow_config import code_hash, compose_config, subtree

# The repository (this file's folder), also when a test's Snakefile includes this one.
WORKFLOW_DIR = Path(str(workflow.current_basedir))
CFG = compose_config(config.get("overrides"), config_dir=WORKFLOW_DIR / "config")
DATASET = CFG["data"]["name"]
RESULTS = f"results/{DATASET}"
FIGURES = f"figures/{DATASET}"
LOGS = f"logs/{DATASET}"
PAPER_GENERATED = f"paper/generated/{DATASET}"
PAPER_BUILD = f"paper/build/{DATASET}"
# The software of every rule: the project environment (pyproject.toml is its source of truth).
CONDA_ENV = str(WORKFLOW_DIR / "environment.yml")

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
        f"{PAPER_BUILD}/paper.pdf",
        f"{RESULTS}/config.yaml",
    default_target: True


rule resolved_config:
    """The fully resolved Hydra config of this run, written next to the results."""
    output:
        f"{RESULTS}/config.yaml",
    params:
        cfg=CFG,
    log:
        f"{LOGS}/resolved_config.log",
    resources:
        mem_mb=200,
    conda:
        CONDA_ENV
    script:
        "workflow/scripts/resolved_config.py"
