"""Writing and reading the canonical tables; the dataset size records."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from analysis.data.annotation_tool import AdapterResult, read_annotation_tool
from analysis.data.canonical import write_skipped_report, write_tables
from tests.data.tables import read_tables
from analysis.data.errors import TableValidationError
from analysis.data.schemas import KEYS, TABLE_NAMES
from analysis.data.summary import dataset_size_records
from tests.data.tiny_world import tiny_world, write_world


def test_round_trip_keeps_every_table(tiny: AdapterResult, tmp_path: Path) -> None:
    paths = write_tables(tiny.tables, tmp_path)
    assert sorted(p.name for p in paths) == sorted(f"{n}.parquet" for n in TABLE_NAMES)
    back = read_tables(tmp_path)
    for name in TABLE_NAMES:
        expected = tiny.tables[name].sort_values(list(KEYS[name])).reset_index(drop=True)
        pd.testing.assert_frame_equal(back[name], expected, check_like=False)


def test_files_are_byte_identical_and_sorted(tiny: AdapterResult, tmp_path: Path) -> None:
    write_tables(tiny.tables, tmp_path / "a")
    # same rows in another order must give the same bytes
    shuffled = {n: df.sample(frac=1.0, random_state=7) for n, df in tiny.tables.items()}
    write_tables(shuffled, tmp_path / "b")
    for name in TABLE_NAMES:
        a = (tmp_path / "a" / f"{name}.parquet").read_bytes()
        assert a == (tmp_path / "b" / f"{name}.parquet").read_bytes(), name
    votes = pd.read_parquet(tmp_path / "a" / "relevance_votes.parquet")
    keys = list(zip(*(votes[c] for c in KEYS["relevance_votes"]), strict=True))
    assert keys == sorted(keys)


def test_invalid_tables_are_not_written(tiny: AdapterResult, tmp_path: Path) -> None:
    tables = dict(tiny.tables)
    tables["preference_ratings"] = tables["preference_ratings"].assign(rating=7)
    with pytest.raises(TableValidationError, match="preference_ratings"):
        write_tables(tables, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_skipped_report_is_deterministic_json(tiny: AdapterResult, tmp_path: Path) -> None:
    write_skipped_report(tiny.report(), tmp_path / "a.json")
    write_skipped_report(tiny.report(), tmp_path / "b.json")
    text = (tmp_path / "a.json").read_text()
    assert text == (tmp_path / "b.json").read_text()
    report = json.loads(text)
    assert report["n_skipped"] == len(report["skipped"]) == 9
    first = report["skipped"][0]
    assert set(first) == {"file", "line", "field", "kind", "reason"}


def test_dataset_size_records(tiny: AdapterResult) -> None:
    values = {r.key: r.value for r in dataset_size_records(tiny.tables)}
    assert values["data.n_users"] == 5
    assert values["data.n_users.real"] == 4 and values["data.n_users.synthetic"] == 1
    assert values["data.n_conversations"] == 2
    assert values["data.n_conversations.real"] == 1
    assert values["data.n_attributes.stage1"] == 5
    assert values["data.n_relevance_items.final"] == 7
    assert values["data.n_pairs.final"] == 3
    # human judgments of the final rounds: 9 stage-1, 13 stage-2, 3 stage-3
    assert values["data.n_judgments.stage1"] == 9
    assert values["data.n_judgments.stage2"] == 13
    assert values["data.n_judgments.stage3"] == 3
    assert values["data.n_judgments.total"] == 25
    assert values["data.n_judgments.stage2.pilot"] == 5  # dave 3 + erin 2 (one null)
    assert values["data.n_majority_labels.final"] == 6


def test_counts_a_dataset_lacks_are_absent(tmp_path: Path) -> None:
    files = tiny_world()
    for rel in ("annotations/alice_task6.jsonl", "annotations/bob_task6.jsonl"):
        del files[rel]
    keys = {
        r.key
        for r in dataset_size_records(read_annotation_tool(write_world(tmp_path, files)).tables)
    }
    assert "data.n_judgments.stage3" not in keys
    assert "data.n_judgments.stage1" in keys
