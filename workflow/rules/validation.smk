# The simulation as a validation study (docs/provenance.md): on a simulated dataset, whose raw
# folder holds the world's ground truth (truth.json, written by `recenter simulate`), every
# estimate's 95% interval is compared with the truth. Real data has no truth: no such rule.

TRUTH_FILE = DATA_ROOT / "truth.json"

if TRUTH_FILE.is_file():

    rule validation_records:
        """Each estimate of the stage statistics against the simulated world's ground truth."""
        input:
            records=[
                record_file(r)
                for r in (
                    "stage1_statistics",
                    "stage2_statistics",
                    "stage3_statistics",
                )
            ],
            truth=os.path.relpath(TRUTH_FILE, REPO),
        output:
            records=record_file("validation"),
        log:
            f"{LOGS}/validation_records.log",
        benchmark:
            f"{LOGS}/benchmarks/validation_records.tsv"
        resources:
            mem_mb=500,
        params:
            code=code_hash("analysis.paper.validation"),
        script:
            "../scripts/validation_records.py"

    RECORD_FILES.append(record_file("validation"))
