"""Writing the canonical tables (``results/<dataset>/tables/<name>.parquet``).

Files are byte-stable: rows sorted by the table's key, columns in schema order, no pandas
index, fixed compression, so rerunning on the same raw data reproduces the same bytes and a
changed file always means changed data. Tables are validated on the way out (the tests read
them back, validated again, with ``tests/data/tables.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from analysis.data.schemas import COLUMNS, KEYS, TABLE_NAMES, validate_tables
from analysis.provenance import dump_json


def sort_table(name: str, df: pd.DataFrame) -> pd.DataFrame:
    """Columns in schema order, rows by key, a fresh 0..n-1 index."""
    out = df[list(COLUMNS[name])]
    return out.sort_values(list(KEYS[name]), kind="stable").reset_index(drop=True)


def table_path(out_dir: Path | str, name: str) -> Path:
    return Path(out_dir) / f"{name}.parquet"


def write_tables(tables: Mapping[str, pd.DataFrame], out_dir: Path | str) -> list[Path]:
    """Validate, sort and write every canonical table as parquet; return the paths written."""
    validate_tables(tables)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name in TABLE_NAMES:
        df = sort_table(name, tables[name])
        table = pa.Table.from_pandas(df, preserve_index=False)
        path = table_path(out_dir, name)
        pq.write_table(table, path, compression="zstd", compression_level=3)
        written.append(path)
    return written


def write_skipped_report(report: Mapping[str, Any], path: Path | str) -> None:
    """The adapter's skipped-records report as deterministic JSON."""
    dump_json(dict(report), path)
