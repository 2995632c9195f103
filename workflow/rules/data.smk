# Rules of data (see docs/architecture.md): the configured dataset's raw files -> the validated
# canonical tables that every other rule reads. docs/data.md documents tables and file kinds.

import os

from analysis.data import resolve_root
from analysis.data.layout import raw_files
from analysis.data.schemas import TABLE_NAMES

# data.root is relative to the repository (the folder above workflow/) unless absolute.
DATA_ROOT = resolve_root(CFG["data"]["root"], REPO)


rule canonical_tables:
    """Raw files read by the dataset's adapter into validated canonical tables, skips reported."""
    input:
        # The adapter finds files by pattern; declaring them makes any change rerun the rule.
        raw=[os.path.relpath(f, REPO) for f in raw_files(DATA_ROOT)],
    output:
        **{name: results(f"tables/{name}.parquet") for name in TABLE_NAMES},
        skipped=results("tables/skipped_records.json"),
        sources=results("tables/sources.json"),
        records=record_file("canonical_tables"),
    log:
        f"{LOGS}/canonical_tables.log",
    benchmark:
        f"{LOGS}/benchmarks/canonical_tables.tsv"
    resources:
        mem_mb=2000,
    params:
        cfg=subtree(
            CFG,
            "data.adapter",
            "data.root",
            "data.models",
            "data.distinct_annotators",
            "data.distinct_attributes",
        ),
        code=code_hash("analysis.data"),
    script:
        "../scripts/canonical_tables.py"


RECORD_FILES.append(record_file("canonical_tables"))
