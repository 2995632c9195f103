# Does it reproduce? Every figure the study published (config/study/<name>.yaml, Hydra group
# `study`) against this build's records: results/<dataset>/scorecard.csv and the records
# repro.<name>.{published,verdict} (analysis/paper/scorecard.py). Included after every rule
# file that writes statistics records and before the figures: its input is the record files
# registered so far, and its own record file joins them for numbers.json.


rule scorecard:
    """Each published figure of the study against this build's record, with a computed verdict (reproduced, differs, partial, different method, not in this dataset)."""
    input:
        records=list(RECORD_FILES),
    output:
        records=record_file("scorecard"),
        resamples=resample_file("scorecard"),
        csv=results("scorecard.csv"),
    log:
        f"{LOGS}/scorecard.log",
    benchmark:
        f"{LOGS}/benchmarks/scorecard.tsv"
    resources:
        mem_mb=500,
    params:
        cfg=subtree(CFG, "study", "data.simulated"),
        code=code_hash("analysis.paper.scorecard", "analysis.provenance"),
    script:
        "../scripts/scorecard.py"


RECORD_FILES.append(record_file("scorecard"))
