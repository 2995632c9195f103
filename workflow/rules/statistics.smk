# Rules of statistics (see docs/architecture.md, docs/statistics.md): the study's numbers from
# the combined stage tables, each a record with a 95% interval, a method and its provenance.


rule stage1_statistics:
    """Stage-1 attribute acceptance per source, the real-vs-synthetic gap, human agreement and LLM verifiers."""
    input:
        judgments=results("stage1/attribute_judgments.parquet"),
        users=results("tables/users.parquet"),
    output:
        records=record_file("stage1_statistics"),
        resamples=resample_file("stage1_statistics"),
    log:
        f"{LOGS}/stage1_statistics.log",
    benchmark:
        f"{LOGS}/benchmarks/stage1_statistics.tsv"
    resources:
        mem_mb=2000,
    params:
        cfg=subtree(CFG, "stats", "run.seed", "stages.caveats"),
        code=code_hash("analysis.stats.study_stage1"),
    script:
        "../scripts/stage1_statistics.py"


RECORD_FILES.append(record_file("stage1_statistics"))


rule stage2_statistics:
    """Stage-2 relevance rates, over-selection, pairwise kappa matrix and group means, agreement with the human majority and the human ceiling, per round."""
    input:
        votes=results("stage2/relevance_votes.parquet"),
    output:
        records=record_file("stage2_statistics"),
        resamples=resample_file("stage2_statistics"),
        kappa_matrix=results("stage2/kappa_matrix.parquet"),
    log:
        f"{LOGS}/stage2_statistics.log",
    benchmark:
        f"{LOGS}/benchmarks/stage2_statistics.tsv"
    resources:
        mem_mb=3000,
    params:
        cfg=subtree(CFG, "stats", "run.seed", "stages.caveats"),
        code=code_hash("analysis.stats.study_stage2"),
    script:
        "../scripts/stage2_statistics.py"


RECORD_FILES.append(record_file("stage2_statistics"))


rule stage3_statistics:
    """Stage-3 human preference for personalized responses, judge-human gaps with tests, mention effects and rank agreement."""
    input:
        ratings=results("stage3/preference_ratings.parquet"),
        responses=results("stage3/responses.parquet"),
        mentions=results("stage3/mentions.parquet"),
    output:
        records=record_file("stage3_statistics"),
        resamples=resample_file("stage3_statistics"),
    log:
        f"{LOGS}/stage3_statistics.log",
    benchmark:
        f"{LOGS}/benchmarks/stage3_statistics.tsv"
    resources:
        mem_mb=2000,
    params:
        # data.nouns: the method sentences call the raters by the dataset's noun
        cfg=subtree(CFG, "stats", "run.seed", "stages.caveats", "data.nouns"),
        code=code_hash("analysis.stats.study_stage3"),
    script:
        "../scripts/stage3_statistics.py"


RECORD_FILES.append(record_file("stage3_statistics"))
