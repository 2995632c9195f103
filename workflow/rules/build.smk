# One build: the dataset's default or one variant (analysis/variants.py). Its outputs' folders
# come from the one path helper (analysis/paths.py) through common.smk; the rule files follow in
# stage order, paper last. As a member of a sweep (rules/sweep.smk) the build defines the rules
# of a shared tier (the canonical tables; the model calls and their stage tables) only when it
# is the first member of that tier's folder: the others read those outputs.

from analysis.variants import TIERS

#: the tiers whose rules this build defines: all, unless a sweep gave them to another member
SWEEP_MEMBER = config.get(MEMBER_KEY) or {}
OWNS = set(SWEEP_MEMBER["owns"]) | {"analysis"} if SWEEP_MEMBER else set(TIERS)

#: rules that take under a second: they run on the submitting host, never as cluster jobs
LOCAL_RULES = (
    "all",
    "resolved_config",
    "software_environment",
    "model_call_table",
    "extracted_attribute_counts",
    "parse_failures",
    "call_usage",
    "numbers",
    "dataset_description",
    "paper_tables",
    "validation_table",
    "claims",
    "scorecard",
    "provenance_appendix",
    "audit_site",
    "scorecard_table",
    "rule_runtimes",
)

# Each rule file appends its record files and figures; rule `numbers` and the paper read them.
RECORD_FILES = []
FIGURE_FILES = []


include: "common.smk"
include: "model_calls.smk"
include: "data.smk"
include: "stage1.smk"
include: "stage2.smk"
include: "stage3.smk"
include: "statistics.smk"
include: "interventions.smk"
include: "scorecard.smk"
include: "figures.smk"
include: "validation.smk"
include: "paper.smk"
include: "report.smk"


# A run that calls models passes each model's API key variable to cluster jobs (from the
# submitting shell, nowhere else); a replay run declares none, since Snakemake stops on an unset one.
if API_KEY_VARIABLES:

    envvars:
        *API_KEY_VARIABLES,


rule resolved_config:
    """The resolved Hydra config of this build (runtime-only llm keys left out), beside its results, and what makes it a variant (its overrides and the keys they change)."""
    output:
        config=PATHS.config,
        variant=PATHS.variant_file,
    log:
        f"{LOGS}/resolved_config.log",
    benchmark:
        f"{LOGS}/benchmarks/resolved_config.tsv"
    resources:
        mem_mb=200,
    params:
        cfg=subtree(CFG, *sorted(CFG)),
        variant=VARIANT.describe(),
    script:
        "../scripts/resolved_config.py"


# Rules that take under a second run on the submitting host, never as cluster jobs. This is what
# the `localrules:` directive does, by the rules' names in the running workflow: a module's
# rules carry its prefix, which the directive does not add, and a shared tier's rules exist only
# where this build defines them.
workflow.localrules(
    *[
        name
        for name in map(workflow.modifier.modify_rulename, LOCAL_RULES)
        if workflow.is_rule(name)
    ]
)
