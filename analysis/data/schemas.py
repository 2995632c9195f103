"""The canonical tables: the one contract between raw data and every analysis.

Every dataset (the authors' exports, the bundled world) becomes these tables; analysis code
reads nothing else. Each table has a pandera schema with a strict column set (an extra or
missing column is an error), exact dtypes, allowed values and its key. ``validate_tables``
checks every table and the links between them (each vote's item exists, each item's attribute
exists, ...) and raises one :class:`~analysis.data.errors.TableValidationError` naming table,
row and column for every failure. ``docs/data.md`` documents each column.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from analysis.data.errors import TableValidationError
from analysis.data.vocabulary import (
    ACCEPTED,
    ATTRIBUTE_SETS,
    CONDITIONS,
    FLAG_REASONS,
    GRADED_LABELS,
    JUDGE_KINDS,
    REAL,
    REAL_SOURCES,
    ROLES,
    SOURCE_KINDS,
    SOURCE_PATTERN,
    SPLITS,
    STAGE1_LABELS,
    STAGE1_ROUNDS,
    STAGE2_ROUNDS,
    STAGE3_ROUNDS,
    VOTE_KINDS,
)

if TYPE_CHECKING:
    import pandera.pandas as pa
    from pandera.errors import SchemaErrors


@dataclass(frozen=True)
class Col:
    """One column: pandas dtype, whether it may be null, and its value checks."""

    dtype: str
    nullable: bool = False
    isin: Sequence[Any] | None = None
    ge: float | None = None
    le: float | None = None
    regex: str | None = None
    unique: bool = False

    def column(self) -> pa.Column:
        import pandera.pandas as pa

        checks: list[pa.Check] = []
        if self.isin is not None:
            checks.append(pa.Check.isin(list(self.isin)))
        if self.ge is not None:
            checks.append(pa.Check.ge(self.ge))
        if self.le is not None:
            checks.append(pa.Check.le(self.le))
        if self.regex is not None:
            checks.append(pa.Check.str_matches(self.regex))
        return pa.Column(self.dtype, checks=checks, nullable=self.nullable, unique=self.unique)


ID = Col("str")
TEXT = Col("str")

#: table -> ordered columns. The order is the column order written to parquet.
COLUMNS: dict[str, dict[str, Col]] = {
    "users": {
        "user_id": ID,
        "source": Col("str", regex=SOURCE_PATTERN),
        "source_kind": Col("str", isin=SOURCE_KINDS),
        "source_inferred": Col("bool"),
    },
    "conversations": {
        "conversation_id": ID,
        "user_id": ID,
        "conversation_index": Col("int64", ge=0),
        "turn": Col("int64", ge=0),
        "role": Col("str", isin=ROLES),
        "text": TEXT,
    },
    "attributes": {
        "attribute_id": ID,
        "user_id": ID,
        "set": Col("str", isin=ATTRIBUTE_SETS),
        "position": Col("Int64", nullable=True, ge=0),
        "text": TEXT,
        "reason": Col("str", nullable=True),
        "confidence": Col("float64", nullable=True, ge=0.0, le=1.0),
        "n_originals": Col("Int64", nullable=True, ge=1),
    },
    "attribute_judgments": {
        "attribute_id": ID,
        "user_id": ID,
        "rater": ID,
        "rater_kind": Col("str", isin=JUDGE_KINDS),
        "raw_rater": ID,
        "round": Col("str", isin=STAGE1_ROUNDS),
        "label": Col("str", isin=STAGE1_LABELS),
        "note": Col("str", nullable=True),
        "flag_reason": Col("str", nullable=True, isin=FLAG_REASONS),
    },
    "prompts": {
        "prompt_id": ID,
        "prompt_index": Col("int64", ge=0, unique=True),
        "text": TEXT,
    },
    "relevance_items": {
        "item_id": ID,
        "round": Col("str", isin=STAGE2_ROUNDS),
        "sample_index": Col("int64", ge=0),
        "user_id": ID,
        "prompt_id": ID,
        "attribute_id": ID,
    },
    "relevance_votes": {
        "item_id": ID,
        "user_id": ID,
        "prompt_id": ID,
        "attribute_id": ID,
        "rater": ID,
        "rater_kind": Col("str", isin=VOTE_KINDS),
        "raw_rater": ID,
        "round": Col("str", isin=STAGE2_ROUNDS),
        "vote": Col("bool"),
        "graded_label": Col("str", nullable=True, isin=GRADED_LABELS),
    },
    "responses": {
        "response_id": ID,
        "user_id": ID,
        "prompt_id": ID,
        "generator": ID,
        "raw_generator": ID,
        "condition": Col("str", isin=CONDITIONS),
        "text": TEXT,
    },
    "preference_ratings": {
        "user_id": ID,
        "prompt_id": ID,
        "generator": ID,
        "attribute_id": ID,
        "rater": ID,
        "rater_kind": Col("str", isin=JUDGE_KINDS),
        "raw_rater": ID,
        "round": Col("str", isin=STAGE3_ROUNDS),
        "rating": Col("int64", ge=1, le=5),
    },
    "relevance_classifier_set": {
        "item_id": ID,
        "user_id": ID,
        "prompt_id": ID,
        "attribute_id": ID,
        "sample_index": Col("int64", ge=0),
        "split": Col("str", isin=SPLITS),
        "label": Col("bool"),
        "human_yes_rate": Col("float64", ge=0.0, le=1.0),
        "n_annotators": Col("int64", ge=1),
    },
}

#: table -> its key: unique, and the sort order of the written file
KEYS: dict[str, tuple[str, ...]] = {
    "users": ("user_id",),
    "conversations": ("conversation_id", "turn"),
    "attributes": ("attribute_id", "set"),
    "attribute_judgments": ("attribute_id", "rater", "round"),
    "prompts": ("prompt_id",),
    "relevance_items": ("item_id", "round"),
    "relevance_votes": ("item_id", "rater", "round"),
    "responses": ("response_id",),
    "preference_ratings": ("user_id", "prompt_id", "generator", "attribute_id", "rater", "round"),
    "relevance_classifier_set": ("item_id",),
}

TABLE_NAMES: tuple[str, ...] = tuple(COLUMNS)


#: rules that tie several columns of one row together: (table, columns, predicate, message)
ROW_RULES: tuple[tuple[str, tuple[str, ...], Any, str], ...] = (
    (
        "users",
        ("source", "source_kind"),
        lambda df: (df["source_kind"] == REAL) == df["source"].isin(REAL_SOURCES),
        "source_kind must be 'real' exactly for the sources " + " / ".join(REAL_SOURCES),
    ),
    (
        "attributes",
        ("set", "reason", "n_originals", "position"),
        lambda df: (
            (df["set"] == "stage2_pilot")
            | (df["reason"].notna() & df["n_originals"].notna() & df["position"].notna())
        ),
        "stage1 and stage2 attributes need reason, n_originals and position",
    ),
    (
        "attribute_judgments",
        ("label", "flag_reason"),
        lambda df: df["flag_reason"].isna() | (df["label"] != ACCEPTED),
        "flag_reason is set only on judgments that do not accept the attribute",
    ),
    (
        "relevance_votes",
        ("round", "graded_label"),
        lambda df: (df["round"] == "pilot_graded") == df["graded_label"].notna(),
        "graded_label is set exactly on pilot_graded votes",
    ),
)


@functools.cache
def schema(table: str) -> pa.DataFrameSchema:
    """The pandera schema of one canonical table (strict columns, key unique).

    Built on first use, like pandera itself (imported here, not with the module): the workflow
    reads this module's table names at every start of snakemake, where importing pandera
    would cost each call a third of a CPU-second.
    """
    import pandera.pandas as pa

    return pa.DataFrameSchema(
        {name: col.column() for name, col in COLUMNS[table].items()},
        strict=True,
        unique=list(KEYS[table]),
        report_duplicates="all",
        name=table,
    )


def make_table(table: str, rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Build a table from row dicts with exactly the schema's columns and dtypes."""
    columns = COLUMNS[table]
    df = pd.DataFrame(list(rows), columns=list(columns))
    return df.astype({name: col.dtype for name, col in columns.items()})


def _failures(
    table: str, frame: pd.DataFrame, err: SchemaErrors
) -> list[tuple[str, Any, str | None, str]]:
    out: list[tuple[str, Any, str | None, str]] = []
    cases = err.failure_cases
    for rec in cases.to_dict("records"):
        column = rec.get("column")
        column = None if column is None or pd.isna(column) or column == table else str(column)
        row = rec.get("index")
        row = None if row is None or (not isinstance(row, str) and pd.isna(row)) else row
        check = rec.get("check")
        value = rec.get("failure_case")
        if check == "column_in_dataframe":
            problem = f"column '{value}' is missing"
            column = str(value)
        elif check == "column_in_schema":
            problem = f"column '{value}' is not part of the table"
            column = str(value)
        elif check == "multiple_fields_uniqueness":
            key = KEYS[table]
            column = key[0]
            values = frame.loc[row, list(key)] if row in frame.index else value
            shown = tuple(values) if isinstance(values, pd.Series) else values
            problem = f"duplicate key {key} = {shown!r}"
        elif check == "field_uniqueness":
            problem = f"duplicate value {value!r}"
        elif check == "dtype" or str(check).startswith("dtype("):
            spec = COLUMNS[table].get(column or "")
            problem = f"dtype is {value}, expected {spec.dtype if spec else check}"
        elif check == "not_nullable":
            problem = "null value"
        else:
            problem = f"check {check} failed (value {value!r})"
        out.append((table, row, column, problem))
    return list(dict.fromkeys(out))


def _show(value: Any) -> str:
    """A cell value as a person reads it (no numpy reprs)."""
    if hasattr(value, "item"):
        value = value.item()
    return repr(value)


def _row_rule_failures(table: str, frame: pd.DataFrame) -> list[tuple[str, Any, str | None, str]]:
    out: list[tuple[str, Any, str | None, str]] = []
    for name, columns, predicate, message in ROW_RULES:
        if name != table or frame.empty:
            continue
        ok = predicate(frame).to_numpy(dtype=bool)
        for pos in (~ok).nonzero()[0][:50]:
            values = ", ".join(f"{c}={_show(frame.iloc[pos][c])}" for c in columns)
            out.append((table, frame.index[pos], columns[0], f"{message} ({values})"))
    return out


def _foreign_keys(tables: Mapping[str, pd.DataFrame]) -> list[tuple[str, Any, str | None, str]]:
    """Every id a table refers to exists in the table that owns it."""
    failures: list[tuple[str, Any, str | None, str]] = []

    def need(table: str, cols: Sequence[str], owner: str, owner_cols: Sequence[str]) -> None:
        child = tables[table]
        if child.empty:
            return
        known = pd.MultiIndex.from_frame(tables[owner][list(owner_cols)])
        missing = ~pd.MultiIndex.from_frame(child[list(cols)]).isin(known)
        for pos in missing.nonzero()[0][:50]:
            values = ", ".join(f"{c}={_show(child.iloc[pos][c])}" for c in cols)
            failures.append(
                (
                    table,
                    child.index[pos],
                    cols[0],
                    f"{values} not found in table '{owner}' {tuple(owner_cols)}",
                )
            )

    need("attributes", ["user_id"], "users", ["user_id"])
    need("conversations", ["user_id"], "users", ["user_id"])
    need("relevance_items", ["user_id"], "users", ["user_id"])
    need("relevance_items", ["prompt_id"], "prompts", ["prompt_id"])
    need("relevance_items", ["attribute_id", "user_id"], "attributes", ["attribute_id", "user_id"])
    need(
        "relevance_votes",
        ["item_id", "round", "user_id", "prompt_id", "attribute_id"],
        "relevance_items",
        ["item_id", "round", "user_id", "prompt_id", "attribute_id"],
    )
    need(
        "attribute_judgments",
        ["attribute_id", "user_id"],
        "attributes",
        ["attribute_id", "user_id"],
    )
    need("responses", ["user_id"], "users", ["user_id"])
    need("responses", ["prompt_id"], "prompts", ["prompt_id"])
    need("preference_ratings", ["user_id"], "users", ["user_id"])
    need("preference_ratings", ["prompt_id"], "prompts", ["prompt_id"])
    need(
        "preference_ratings", ["attribute_id", "user_id"], "attributes", ["attribute_id", "user_id"]
    )
    need(
        "relevance_classifier_set",
        ["item_id", "user_id", "prompt_id", "attribute_id"],
        "relevance_items",
        ["item_id", "user_id", "prompt_id", "attribute_id"],
    )
    return failures


def validate_tables(tables: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Check every canonical table and the ids that link them; return them unchanged.

    Raises :class:`TableValidationError` listing (table, row, column, problem) for every
    failure, so a broken adapter or a hand-edited file is caught before any analysis runs.
    """
    failures: list[tuple[str, Any, str | None, str]] = []
    missing = [name for name in TABLE_NAMES if name not in tables]
    extra = sorted(set(tables) - set(TABLE_NAMES))
    failures += [(name, None, None, "table is missing") for name in missing]
    failures += [(name, None, None, "not a canonical table") for name in extra]
    from pandera.errors import SchemaErrors

    for name in TABLE_NAMES:
        if name not in tables:
            continue
        try:
            schema(name).validate(tables[name], lazy=True)
        except SchemaErrors as err:
            failures += _failures(name, tables[name], err)
        else:
            failures += _row_rule_failures(name, tables[name])
    if not failures:
        failures += _foreign_keys(tables)
    if failures:
        raise TableValidationError(failures)
    return dict(tables)
