# The tables of the Snakemake HTML report (`snakemake --report report.html`), beside its
# figures, numbers, claims and paper: the scorecard and the per-rule runtimes, each an HTML page
# (analysis/paper/report_tables.py; the report shows HTML inline, a CSV only as a download).
# Included after paper.smk: the runtime table is made last, from every job's benchmark file.


rule scorecard_table:
    """The scorecard (each published figure beside this build's interval and verdict) as the report's table."""
    input:
        csv=results("scorecard.csv"),
    output:
        html=report(
            results("report/scorecard.html"),
            caption="../report/scorecard_table.rst",
            category="Tables",
            labels={"table": "scorecard"},
        ),
    log:
        f"{LOGS}/scorecard_table.log",
    benchmark:
        f"{LOGS}/benchmarks/scorecard_table.tsv"
    resources:
        mem_mb=300,
    params:
        cfg=subtree(CFG, "data.name"),
        code=code_hash("analysis.paper.report_tables"),
    script:
        "../scripts/scorecard_table.py"


rule rule_runtimes:
    """Wall time, CPU time and peak memory per rule of the latest run, from the jobs' benchmark files, as the report's table."""
    input:
        pdf=f"{PAPER_BUILD}/paper.pdf",
        site=f"{PAPER_BUILD}/site",
        config=PATHS.config,
        scorecard=results("report/scorecard.html"),
    output:
        html=report(
            f"{LOGS}/rule_runtimes.html",
            caption="../report/rule_runtimes.rst",
            category="Tables",
            labels={"table": "runtime per rule"},
        ),
    log:
        f"{LOGS}/rule_runtimes.log",
    benchmark:
        f"{LOGS}/benchmarks/rule_runtimes.tsv"
    resources:
        mem_mb=300,
    params:
        cfg=subtree(CFG, "data.name"),
        # every tier's: a variant's jobs log where they write (analysis/variants.py)
        benchmarks=sorted({VARIANT.paths(tier).benchmarks for tier in TIERS}),
        code=code_hash("analysis.paper.report_tables"),
    script:
        "../scripts/rule_runtimes.py"
