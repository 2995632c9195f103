"""Annotator ids and pilot attribute texts that differ only in case or surrounding space are
errors naming file, line and the near match, unless the dataset config lists them as distinct;
the shipped datasets (the bundled world, the real exports) have none and read as before."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from analysis.data import read_dataset
from analysis.data.errors import DataError
from analysis.workflow_config import compose_config
from tests.data.tiny_world import P1, tiny_world, write_world


def _read(root: Path, **distinct):
    return read_dataset("annotation_tool", root, **distinct)


def test_folded_forms() -> None:
    from analysis.data.near_misses import folded

    assert folded("  Likes   Tea\t") == folded("likes tea") == "likes tea"
    assert folded("likes tea") != folded("likes-tea")


def test_a_second_annotator_file_differing_only_in_case_is_an_error(tmp_path: Path) -> None:
    """tal_task3.jsonl beside Tal_task3.jsonl became a new human rater (kappa moved)."""
    files = tiny_world()
    files["annotations_v0/Erin_task2.jsonl"] = [
        {**copy.deepcopy(files["annotations_v0/dave_task2.jsonl"][0]), "annotator": "Erin"}
    ]
    root = write_world(tmp_path / "raw", files)
    with pytest.raises(DataError) as err:
        _read(root)
    message = str(err.value)
    assert "annotations_v0/erin_task3.jsonl, field 'annotator (file name)'" in message
    assert "annotator 'erin' differs from annotator 'Erin'" in message
    assert "annotations_v0/Erin_task2.jsonl" in message and "data.distinct_annotators" in message

    result = _read(root, distinct_annotators=[["Erin", "erin"]])
    humans = set(result.tables["relevance_votes"].query("rater_kind == 'human'")["rater"])
    assert {"Erin", "erin"} <= humans


def test_an_annotator_differing_only_in_surrounding_space_is_an_error(tmp_path: Path) -> None:
    files = tiny_world()
    files["annotations_v0/dave _task1.jsonl"] = files.pop(
        "annotations_v0/prolific_P9_____task1.jsonl"
    )
    files["annotations_v0/dave _task1.jsonl"][0]["annotator"] = "dave "
    root = write_world(tmp_path / "raw", files)
    for distinct in ([], [["dave", "dave "]]):  # space never tells two raters apart
        with pytest.raises(DataError) as err:
            _read(root, distinct_annotators=distinct)
        message = str(err.value)
        assert "annotator 'dave' differs from annotator 'dave '" in message
        assert "annotations_v0/dave _task1.jsonl" in message and "rename the file" in message


def _pilot_vote_with(files: dict, text: str) -> None:
    """erin's pilot vote on P1 names it ``text`` instead."""
    record = files["annotations_v0/erin_task3.jsonl"][0]
    judgments = record["relevance_judgments"]
    assert judgments[0]["attribute"] == P1
    judgments[0]["attribute"] = text


@pytest.mark.parametrize("spelling", [P1 + " ", " " + P1, P1.upper(), P1.replace(" ", "  ", 1)])
def test_a_pilot_vote_on_a_near_copy_of_an_attribute_is_an_error(
    tmp_path: Path, spelling: str
) -> None:
    """One trailing space made a new pilot item (kappa moved): now an error at the odd
    spelling's file, line and field, naming the attribute it nearly is."""
    files = tiny_world()
    _pilot_vote_with(files, spelling)
    root = write_world(tmp_path / "raw", files)
    with pytest.raises(DataError) as err:
        _read(root)
    message = str(err.value)
    assert message.startswith(
        "annotations_v0/erin_task3.jsonl, line 1, field 'relevance_judgments[0].attribute'"
    )
    assert f"attribute text {spelling!r} matches no attribute" in message
    assert f"but {P1!r} (annotations_v0/dave_task2.jsonl, line 1" in message
    assert "data.distinct_attributes" in message


def test_listed_pilot_texts_are_two_attributes(tmp_path: Path) -> None:
    files = tiny_world()
    _pilot_vote_with(files, P1.upper())
    root = write_world(tmp_path / "raw", files)
    result = _read(root, distinct_attributes=[[P1, P1.upper()]])
    texts = set(result.tables["attributes"].query("set == 'stage2_pilot'")["text"])
    assert {P1, P1.upper()} <= texts


def test_a_final_vote_off_by_a_space_names_the_profile_attribute(tmp_path: Path) -> None:
    files = tiny_world()
    judgment = files["annotations/alice_task5.jsonl"][0]["relevance_judgments"][0]
    text = judgment["attribute"]
    judgment["attribute"] = text + " "
    with pytest.raises(DataError, match=f"not a profile attribute .*{text!r} is, once whitespace"):
        _read(write_world(tmp_path / "raw", files))


def test_the_dataset_configs_list_nothing_and_the_bundled_world_reads() -> None:
    """Both shipped dataset configs carry the keys, empty: neither dataset has a near-miss (the
    real exports are read by test_realdata.py and the real-data build with the same check)."""
    for overrides in ([], ["data=annotation_tool"]):
        data = compose_config(overrides)["data"]
        assert data["distinct_annotators"] == [] and data["distinct_attributes"] == []
