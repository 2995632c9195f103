"""Reading canonical tables back, for tests: the workflow's rules only write them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.data.canonical import table_path
from analysis.data.schemas import TABLE_NAMES, schema, validate_tables


def read_tables(
    in_dir: Path | str, names: tuple[str, ...] = TABLE_NAMES
) -> dict[str, pd.DataFrame]:
    """Read canonical tables back (all of them by default) and validate what was read.

    Cross-table links are checked only when every table is read.
    """
    tables = {name: pd.read_parquet(table_path(in_dir, name)) for name in names}
    if set(names) == set(TABLE_NAMES):
        return validate_tables(tables)
    for name, df in tables.items():
        schema(name).validate(df)
    return tables
