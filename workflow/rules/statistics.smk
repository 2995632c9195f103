# Rules of statistics (see docs/architecture.md, docs/statistics.md): the study's numbers from
# the combined stage tables, each a record with a 95% interval, a method and its provenance.


rule stage1_statistics:
    """Stage-1 attribute acceptance per source, the real-vs-synthetic gap, human agreement and LLM verifiers."""
    input:
        judgments=f"{RESULTS}/stage1/attribute_judgments.parquet",
        users=f"{RESULTS}/tables/users.parquet",
    output:
        records=f"{RESULTS}/records/stage1_statistics.json",
    params:
        cfg=subtree(CFG, "stats", "run.seed", "stages.caveats"),
        code=code_hash("analysis.stats.study_stage1"),
    log:
        f"{LOGS}/stage1_statistics.log",
    resources:
        mem_mb=2000,
    conda:
        CONDA_ENV
    script:
        "../scripts/stage1_statistics.py"


RECORD_FILES.append(f"{RESULTS}/records/stage1_statistics.json")


rule stage2_statistics:
    """Stage-2 relevance rates, over-selection, pairwise kappa matrix and group means, agreement with the human majority and the human ceiling, per round."""
    input:
        votes=f"{RESULTS}/stage2/relevance_votes.parquet",
    output:
        records=f"{RESULTS}/records/stage2_statistics.json",
        kappa_matrix=f"{RESULTS}/stage2/kappa_matrix.parquet",
    params:
        cfg=subtree(CFG, "stats", "run.seed", "stages.caveats"),
        code=code_hash("analysis.stats.study_stage2"),
    log:
        f"{LOGS}/stage2_statistics.log",
    resources:
        mem_mb=3000,
    conda:
        CONDA_ENV
    script:
        "../scripts/stage2_statistics.py"


RECORD_FILES.append(f"{RESULTS}/records/stage2_statistics.json")


rule stage3_statistics:
    """Stage-3 human preference for personalized responses, judge-human gaps with tests, mention effects and rank agreement."""
    input:
        ratings=f"{RESULTS}/stage3/preference_ratings.parquet",
        responses=f"{RESULTS}/stage3/responses.parquet",
        mentions=f"{RESULTS}/stage3/mentions.parquet",
    output:
        records=f"{RESULTS}/records/stage3_statistics.json",
    params:
        cfg=subtree(CFG, "stats", "run.seed", "stages.caveats"),
        code=code_hash("analysis.stats.study_stage3"),
    log:
        f"{LOGS}/stage3_statistics.log",
    resources:
        mem_mb=2000,
    conda:
        CONDA_ENV
    script:
        "../scripts/stage3_statistics.py"


RECORD_FILES.append(f"{RESULTS}/records/stage3_statistics.json")
