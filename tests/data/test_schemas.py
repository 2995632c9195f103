"""The canonical schemas on small hand-made frames: what passes, and how failures are named."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import pytest

from analysis.data.errors import TableValidationError
from analysis.data.schemas import COLUMNS, TABLE_NAMES, make_table, validate_tables

Tables = dict[str, pd.DataFrame]


def minimal_tables() -> Tables:
    """One row per table, all linked: the smallest valid dataset."""
    item = {"item_id": "i1", "user_id": "u1", "prompt_id": "p0001", "attribute_id": "a1"}
    rows = {
        "users": [
            {"user_id": "u1", "source": "wildchat", "source_kind": "real", "source_inferred": False}
        ],
        "conversations": [
            {
                "conversation_id": "c1",
                "user_id": "u1",
                "conversation_index": 0,
                "turn": 0,
                "role": "user",
                "text": "Hello there.",
            }
        ],
        "attributes": [
            {
                "attribute_id": "a1",
                "user_id": "u1",
                "set": "stage2",
                "position": 0,
                "text": "The user likes tea.",
                "reason": "Asked about oolong.",
                "confidence": 0.7,
                "n_originals": 2,
            }
        ],
        "attribute_judgments": [
            {
                "attribute_id": "a1",
                "user_id": "u1",
                "rater": "alice",
                "rater_kind": "human",
                "raw_rater": "alice",
                "round": "final",
                "label": "accepted",
                "note": None,
            }
        ],
        "prompts": [{"prompt_id": "p0001", "prompt_index": 1, "text": "Suggest a drink."}],
        "relevance_items": [{**item, "round": "final", "sample_index": 0}],
        "relevance_votes": [
            {
                **item,
                "rater": "alice",
                "rater_kind": "human",
                "raw_rater": "alice",
                "round": "final",
                "vote": True,
                "graded_label": None,
            }
        ],
        "responses": [
            {
                "response_id": "r1",
                "user_id": "u1",
                "prompt_id": "p0001",
                "generator": "gpt-5.4",
                "raw_generator": "gpt-5.4",
                "condition": "generic",
                "text": "Try green tea.",
            }
        ],
        "preference_ratings": [
            {
                "user_id": "u1",
                "prompt_id": "p0001",
                "generator": "gpt-5.4",
                "attribute_id": "a1",
                "rater": "alice",
                "rater_kind": "human",
                "raw_rater": "alice",
                "round": "final",
                "rating": 4,
            }
        ],
        "relevance_classifier_set": [],
    }
    return {name: make_table(name, rows[name]) for name in TABLE_NAMES}


def test_minimal_tables_are_valid() -> None:
    tables = minimal_tables()
    assert validate_tables(tables).keys() == set(TABLE_NAMES)
    for name, df in tables.items():
        assert list(df.columns) == list(COLUMNS[name])


def _set(table: str, column: str, value: object) -> Callable[[Tables], None]:
    def change(t: Tables) -> None:
        t[table][column] = value

    return change


def _dup(table: str) -> Callable[[Tables], None]:
    def change(t: Tables) -> None:
        t[table] = pd.concat([t[table], t[table]], ignore_index=True)

    return change


def _drop_col(table: str, column: str) -> Callable[[Tables], None]:
    def change(t: Tables) -> None:
        t[table] = t[table].drop(columns=[column])

    return change


def _as_float(table: str, column: str) -> Callable[[Tables], None]:
    def change(t: Tables) -> None:
        t[table][column] = t[table][column].astype("float64")

    return change


CASES = [
    ("extra column", _set("users", "age", 41), "users", None, "age", "not part of the table"),
    ("missing column", _drop_col("prompts", "text"), "prompts", None, "text", "is missing"),
    (
        "wrong dtype",
        _as_float("preference_ratings", "rating"),
        "preference_ratings",
        None,
        "rating",
        "dtype is float64",
    ),
    (
        "label not allowed",
        _set("attribute_judgments", "label", "good"),
        "attribute_judgments",
        0,
        "label",
        "isin",
    ),
    (
        "rating above 5",
        _set("preference_ratings", "rating", 6),
        "preference_ratings",
        0,
        "rating",
        "less_than_or_equal_to(5)",
    ),
    (
        "rating below 1",
        _set("preference_ratings", "rating", 0),
        "preference_ratings",
        0,
        "rating",
        "greater_than_or_equal_to(1)",
    ),
    (
        "confidence above 1",
        _set("attributes", "confidence", 1.2),
        "attributes",
        0,
        "confidence",
        "less_than_or_equal_to(1.0)",
    ),
    (
        "unknown round",
        _set("relevance_votes", "round", "pilot3"),
        "relevance_votes",
        0,
        "round",
        "isin",
    ),
    ("unknown source", _set("users", "source", "forum"), "users", 0, "source", "str_matches"),
    ("null text", _set("attributes", "text", None), "attributes", 0, "text", "null value"),
    (
        "two votes of one rater on one item",
        _dup("relevance_votes"),
        "relevance_votes",
        0,
        "item_id",
        "duplicate key ('item_id', 'rater', 'round')",
    ),
    (
        "graded label outside the graded round",
        _set("relevance_votes", "graded_label", "optional"),
        "relevance_votes",
        0,
        "round",
        "graded_label is set exactly on pilot_graded votes",
    ),
    (
        "flag reason on an accepted judgment",
        _set("attribute_judgments", "flag_reason", "other"),
        "attribute_judgments",
        0,
        "label",
        "flag_reason is set only on judgments that do not accept the attribute",
    ),
    (
        "unknown flag reason",
        _set("attribute_judgments", "flag_reason", "rude"),
        "attribute_judgments",
        0,
        "flag_reason",
        "isin",
    ),
    (
        "source kind contradicts source",
        _set("users", "source_kind", "synthetic"),
        "users",
        0,
        "source",
        "source_kind must be 'real'",
    ),
    (
        "stage-2 attribute without reason",
        _set("attributes", "reason", None),
        "attributes",
        0,
        "set",
        "need reason",
    ),
    (
        "vote on an unknown item",
        _set("relevance_votes", "item_id", "i9"),
        "relevance_votes",
        0,
        "item_id",
        "not found in table 'relevance_items'",
    ),
    (
        "rating of an unknown attribute",
        _set("preference_ratings", "attribute_id", "a9"),
        "preference_ratings",
        0,
        "attribute_id",
        "not found in table 'attributes'",
    ),
    (
        "attribute of an unknown user",
        _set("attributes", "user_id", "u9"),
        "attributes",
        0,
        "user_id",
        "not found in table 'users'",
    ),
]


@pytest.mark.parametrize(
    ("change", "table", "row", "column", "message"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_failures_name_table_row_and_column(
    change: Callable[[Tables], None], table: str, row: int | None, column: str, message: str
) -> None:
    tables = minimal_tables()
    change(tables)
    with pytest.raises(TableValidationError) as info:
        validate_tables(tables)
    err = info.value
    assert (err.table, err.row, err.column) == (table, row, column), str(err)
    assert message in str(err)
    assert f"table '{table}'" in str(err)


def test_a_missing_or_unknown_table_is_an_error() -> None:
    tables = minimal_tables()
    del tables["responses"]
    tables["notes"] = pd.DataFrame({"x": [1]})
    with pytest.raises(TableValidationError) as info:
        validate_tables(tables)
    problems = {(t, p) for t, _, _, p in info.value.failures}
    assert problems == {("responses", "table is missing"), ("notes", "not a canonical table")}


def test_make_table_gives_schema_dtypes_even_when_empty() -> None:
    empty = make_table("relevance_votes", [])
    assert str(empty["vote"].dtype) == "bool" and str(empty["item_id"].dtype) == "str"
    attrs = make_table("attributes", minimal_tables()["attributes"].to_dict("records"))
    assert str(attrs["position"].dtype) == "Int64"
