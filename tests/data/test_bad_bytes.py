"""Exports broken below the record level: empty files, bytes that are not UTF-8, a JSON key
given twice. Each is an error naming the file (and line, byte offset or field), never a rater
or a vote silently dropped or silently replaced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.data.annotation_tool import read_annotation_tool
from analysis.data.errors import DataError
from tests.data.tiny_world import tiny_world, write_world

ALICE5 = "annotations/alice_task5.jsonl"
GEMMA5 = "relevance_task5/google_gemma-4-31b-it.jsonl"


@pytest.mark.parametrize("rel", [ALICE5, GEMMA5])
@pytest.mark.parametrize("content", ["", "\n", "  \n\n\t\n"], ids=["empty", "newline", "blank"])
def test_an_empty_export_file_is_an_error_naming_it(tmp_path: Path, rel: str, content: str) -> None:
    files = tiny_world()
    files[rel] = content
    with pytest.raises(DataError) as info:
        read_annotation_tool(write_world(tmp_path / "raw", files))
    assert info.value.file == rel and info.value.line is None
    assert str(info.value).startswith(f"{rel}: ") and "no records" in str(info.value)


def test_a_byte_that_is_not_utf8_names_file_line_and_byte_offset(tmp_path: Path) -> None:
    root = write_world(tmp_path / "raw", tiny_world())
    path = root / ALICE5
    raw = path.read_bytes()
    first_line_end = raw.index(b"\n") + 1
    at = raw.index(b"mountain", first_line_end)  # inside line 2
    path.write_bytes(raw[:at] + b"\xff" + raw[at:])
    with pytest.raises(DataError) as info:
        read_annotation_tool(root)
    err = info.value
    assert (err.file, err.line) == (ALICE5, 2), str(err)
    assert f"byte offset {at}" in str(err) and "UTF-8" in str(err)
    assert str(err).startswith(f"{ALICE5}, line 2")


def test_a_json_key_given_twice_is_rejected_with_file_line_and_field(tmp_path: Path) -> None:
    files = tiny_world()
    lines = [json.dumps(rec) for rec in files[ALICE5]]
    assert '"relevant": false' in lines[1]
    lines[1] = lines[1].replace('"relevant": false', '"relevant": true, "relevant": false', 1)
    files[ALICE5] = "\n".join(lines) + "\n"
    with pytest.raises(DataError) as info:
        read_annotation_tool(write_world(tmp_path / "raw", files))
    err = info.value
    assert (err.file, err.line, err.field) == (ALICE5, 2, "relevant"), str(err)
    assert "given twice" in str(err)
