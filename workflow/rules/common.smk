# Shared definitions for every rule file: the resolved config and where it is written.


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
        "../scripts/resolved_config.py"
