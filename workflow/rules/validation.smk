# The simulation as a validation study (docs/provenance.md): on a simulated dataset, whose raw
# folder holds the world's ground truth (truth.json, written by `recenter simulate`), every
# estimate's 95% interval is compared with the truth. Real data has no truth: no such rule.
# On the bundled world itself, the coverage benchmark's worlds (same model, fresh seeds) add
# each interval's coverage across worlds.

TRUTH_FILE = DATA_ROOT / "truth.json"
COVERAGE_WORLDS = REPO / "benchmarks" / "coverage_worlds.jsonl"
WITH_COVERAGE = (
    DATA_ROOT.resolve() == (REPO / "data" / "raw" / "bundled").resolve()
    and COVERAGE_WORLDS.is_file()
)

if TRUTH_FILE.is_file():

    rule validation_records:
        """Each estimate against the simulated world's truth; coverage and recovery across worlds (bundled)."""
        input:
            records=[
                record_file(r)
                for r in (
                    "stage1_statistics",
                    "stage2_statistics",
                    "stage3_statistics",
                )
            ],
            truth=os.path.relpath(TRUTH_FILE),
            worlds=[os.path.relpath(COVERAGE_WORLDS)] if WITH_COVERAGE else [],
        output:
            records=record_file("validation"),
            resamples=resample_file("validation"),
        log:
            f"{LOGS}/validation_records.log",
        benchmark:
            f"{LOGS}/benchmarks/validation_records.tsv"
        resources:
            mem_mb=500,
        params:
            cfg=subtree(CFG, "stats", "run.seed", "stages.caveats"),
            code=code_hash(
                "analysis.paper.validation",
                "analysis.stats.coverage",
                "analysis.stats.intervals",
            ),
        script:
            "../scripts/validation_records.py"

    RECORD_FILES.append(record_file("validation"))
