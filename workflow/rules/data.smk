# Rules of data (see docs/architecture.md): the configured dataset's raw files -> the validated
# canonical tables that every other rule reads. docs/data.md documents tables and file kinds.

import os

from analysis.data import resolve_root
from analysis.data.adapters import dataset_adapter
from analysis.data.schemas import TABLE_NAMES

# data.root is relative to the repository (the folder above workflow/) unless absolute; the raw
# files are declared relative to the working directory, as Snakemake sees every path.
DATA_ROOT = resolve_root(CFG["data"]["root"], REPO)
#: the dataset's adapter (the registry analysis/data/adapters.py), checked at every start
ADAPTER = dataset_adapter(CFG["data"]["adapter"])


if owns("data"):

    rule canonical_tables:
        """Raw files read by the dataset's adapter into validated canonical tables, skips reported."""
        input:
            # The adapter finds files by pattern; declaring them makes any change rerun the rule.
            raw=[os.path.relpath(f) for f in ADAPTER.raw_files(DATA_ROOT)],
        output:
            **{name: results(f"tables/{name}.parquet") for name in TABLE_NAMES},
            skipped=results("tables/skipped_records.json"),
            sources=results("tables/sources.json"),
            records=record_file("canonical_tables"),
            resamples=resample_file("canonical_tables"),
        log:
            f"{DATA_LOGS}/canonical_tables.log",
        benchmark:
            f"{DATA_LOGS}/benchmarks/canonical_tables.tsv"
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
