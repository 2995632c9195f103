"""Malformed input: each problem is an error naming file, line and field (never a silent skip)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from analysis.data.annotation_tool import read_annotation_tool
from analysis.data.errors import DataError
from tests.data.tiny_world import A1, CLAUDE_FILE, tiny_world, write_world

Files = dict[str, Any]
ALICE5 = "annotations/alice_task5.jsonl"
GT = "task6/eval_results_task5_gt_attributes_gpt-5.4.jsonl"


def _append_raw(rel: str, line: str) -> Callable[[Files], None]:
    def change(files: Files) -> None:
        import json

        files[rel] = "".join(json.dumps(r) + "\n" for r in files[rel]) + line + "\n"

    return change


def _set(rel: str, line: int, path: tuple[Any, ...], value: Any) -> Callable[[Files], None]:
    """Set a (nested) field of record ``line`` (1-based) of file ``rel``."""

    def change(files: Files) -> None:
        node = files[rel][line - 1]
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


def _delete(rel: str, line: int, path: tuple[Any, ...]) -> Callable[[Files], None]:
    def change(files: Files) -> None:
        node = files[rel][line - 1]
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return change


def _repeat_line(rel: str, line: int) -> Callable[[Files], None]:
    def change(files: Files) -> None:
        files[rel].append(copy.deepcopy(files[rel][line - 1]))

    return change


def _copy_file(rel: str, new: str) -> Callable[[Files], None]:
    def change(files: Files) -> None:
        files[new] = copy.deepcopy(files[rel])

    return change


def _unvoted_item(files: Files) -> None:
    # a profile attribute no human, model or majority label ever judged
    files["extracted/task5_items.jsonl"][0]["profile_attributes"].append(
        {
            "attribute": "The user knits scarves.",
            "original_attributes": ["The user knits scarves."],
            "reason": "Asked about yarn weights.",
            "confidence": 0.5,
        }
    )


def _flipped_majority(files: Files) -> None:
    # a second generator's file carries the same published labels; here one of them differs
    other = copy.deepcopy(files[GT])
    other[0]["profile_attributes"][0]["ground_truth"] = False
    for rec in other:
        rec["model"] = "sim-llm-01"
    files["task6/eval_results_task5_gt_attributes_sim-llm-01.jsonl"] = other


def _unjudged_user(files: Files) -> None:
    # task-4 files exist, but no one judged this stage-1 user's attributes
    files["extracted/task4_items.jsonl"].append(
        {
            "user_id": "u-syn-2",
            "source": "prefeval",
            "merged_attributes": [
                {
                    "attribute": "The user runs marathons.",
                    "original_attributes": ["The user runs marathons."],
                    "reason": "Asked about a training plan.",
                    "confidence": 0.9,
                }
            ],
            "conversations": [],
        }
    )


CASES: list[tuple[str, Callable[[Files], None], str, int | None, str | None, str]] = [
    (
        "unknown flag reason",
        _set("annotations/alice_task4.jsonl", 1, ("attr_judgments", 1, "flag_reason"), "rude"),
        "annotations/alice_task4.jsonl",
        1,
        "attr_judgments[1].flag_reason",
        "unknown reason 'rude'",
    ),
    (
        "flag reason on an accepted judgment",
        _set("annotations/alice_task4.jsonl", 1, ("attr_judgments", 0, "flag_reason"), "other"),
        "annotations/alice_task4.jsonl",
        1,
        "attr_judgments[0].flag_reason",
        "on a judgment that accepts the attribute",
    ),
    (
        "bad JSON line",
        _append_raw(ALICE5, '{"task": "5", "index": 3'),
        ALICE5,
        4,
        None,
        "not valid JSON",
    ),
    ("line is not an object", _append_raw(ALICE5, "[1, 2]"), ALICE5, 4, None, "one JSON object"),
    (
        "missing vote field",
        _delete(ALICE5, 2, ("relevance_judgments", 0, "relevant")),
        ALICE5,
        2,
        "relevance_judgments[0].relevant",
        "missing required field",
    ),
    (
        "missing user in items",
        _delete("extracted/task5_items.jsonl", 2, ("user_id",)),
        "extracted/task5_items.jsonl",
        2,
        "user_id",
        "missing required field",
    ),
    (
        "missing reason",
        _delete("extracted/task4_items.jsonl", 1, ("merged_attributes", 1, "reason")),
        "extracted/task4_items.jsonl",
        1,
        "merged_attributes[1].reason",
        "missing required field",
    ),
    (
        "unknown stage-1 label",
        _set("annotations/alice_task4.jsonl", 1, ("attr_judgments", 1, "judgment"), "maybe"),
        "annotations/alice_task4.jsonl",
        1,
        "attr_judgments[1].judgment",
        "unknown label",
    ),
    (
        "unknown graded label",
        _set("annotations_v0/dave_task2.jsonl", 1, ("relevance_judgments", 0, "rating"), "vital"),
        "annotations_v0/dave_task2.jsonl",
        1,
        "relevance_judgments[0].rating",
        "unknown label",
    ),
    (
        "vote is not a boolean",
        _set(ALICE5, 3, ("relevance_judgments", 0, "relevant"), "yes"),
        ALICE5,
        3,
        "relevance_judgments[0].relevant",
        "expected true/false",
    ),
    (
        "unknown classifier label",
        _set("task3_relevance_clf.jsonl", 2, ("label",), 2),
        "task3_relevance_clf.jsonl",
        2,
        "label",
        "unknown label",
    ),
    (
        "duplicate annotation record",
        _repeat_line(ALICE5, 1),
        ALICE5,
        4,
        "index",
        "duplicate annotation",
    ),
    (
        "duplicate annotation in another folder",
        _copy_file(ALICE5, "annotations_b/alice_task5.jsonl"),
        "annotations_b/alice_task5.jsonl",
        1,
        "index",
        "duplicate annotation",
    ),
    (
        "attribute judged twice in a record",
        _set(ALICE5, 1, ("relevance_judgments", 1, "attribute"), A1),
        ALICE5,
        1,
        "relevance_judgments[1].attribute",
        "duplicate annotation",
    ),
    (
        "model votes a sample twice",
        _repeat_line(f"relevance_task5/{CLAUDE_FILE}.jsonl", 2),
        f"relevance_task5/{CLAUDE_FILE}.jsonl",
        4,
        "sample_index",
        "duplicate annotation",
    ),
    (
        "conflicting majority labels",
        _flipped_majority,
        "task6/eval_results_task5_gt_attributes_sim-llm-01.jsonl",
        1,
        "profile_attributes[0].ground_truth",
        "duplicate annotation",
    ),
    (
        "rating out of range",
        _set("annotations/alice_task6.jsonl", 1, ("ratings", A1), 6),
        "annotations/alice_task6.jsonl",
        1,
        f"ratings[{A1[:40]!r}]",
        "out of range 1-5",
    ),
    (
        "rating not an integer",
        _set("judge_task6/gpt-5.4.jsonl", 1, ("ratings", A1), 4.5),
        "judge_task6/gpt-5.4.jsonl",
        1,
        f"ratings[{A1[:40]!r}]",
        "integer 1-5",
    ),
    (
        "rating of an attribute not shown",
        _set("annotations/alice_task6.jsonl", 2, ("ratings",), {"The user flies kites.": 3}),
        "annotations/alice_task6.jsonl",
        2,
        "ratings['The user flies kites.']",
        "not an attribute",
    ),
    (
        "item with no raters",
        _unvoted_item,
        "extracted/task5_items.jsonl",
        1,
        "profile_attributes[3]",
        "item with no raters",
    ),
    (
        "stage-1 attribute with no raters",
        _unjudged_user,
        "extracted/task4_items.jsonl",
        3,
        "merged_attributes[0]",
        "item with no raters",
    ),
    (
        "one profile attribute described two ways",
        _set("extracted/task5_items.jsonl", 3, ("profile_attributes", 1, "reason"), "Other."),
        "extracted/task5_items.jsonl",
        3,
        "profile_attributes[1].attribute",
        "another reason",
    ),
    (
        "judgments do not match the attributes",
        _set("annotations/bob_task4.jsonl", 2, ("attr_judgments",), [{"judgment": "ok"}]),
        "annotations/bob_task4.jsonl",
        2,
        "attr_judgments",
        "1 judgments for the 2 merged_attributes",
    ),
    (
        "index beyond the items file",
        _set(ALICE5, 2, ("index",), 9),
        ALICE5,
        2,
        "index",
        "not an item index",
    ),
    (
        "record of another user",
        _set(ALICE5, 1, ("user_id",), "u-wc-2"),
        ALICE5,
        1,
        "user_id",
        "of task5_items is user",
    ),
    (
        "vote on an attribute not in the profile",
        _set(ALICE5, 1, ("relevance_judgments", 2, "attribute"), "The user flies kites."),
        ALICE5,
        1,
        "relevance_judgments[2].attribute",
        "not a profile attribute",
    ),
    (
        "unknown source",
        _set("extracted/task4_items.jsonl", 2, ("source",), "forum"),
        "extracted/task4_items.jsonl",
        2,
        "source",
        "unknown source",
    ),
    (
        "confidence out of range",
        _set("extracted/task4_items.jsonl", 1, ("merged_attributes", 0, "confidence"), 1.5),
        "extracted/task4_items.jsonl",
        1,
        "merged_attributes[0].confidence",
        "not in [0, 1]",
    ),
    (
        "unknown role",
        _set(
            "extracted/task4_items.jsonl",
            2,
            ("conversations", 0, "conversation", 1, "role"),
            "tool",
        ),
        "extracted/task4_items.jsonl",
        2,
        "conversations[0].conversation[1].role",
        "unknown role",
    ),
    ("unknown response mode", _set(GT, 2, ("mode",), "few_shot"), GT, 2, "mode", "unknown mode"),
    (
        "two texts for one response",
        _set("task6/eval_results_task5_no_context_gpt-5.4.jsonl", 1, ("response",), "Other text."),
        "task6/eval_results_task5_no_context_gpt-5.4.jsonl",
        1,
        "response",
        "differs",
    ),
    (
        "two texts for one prompt",
        _set("task3_relevance_clf.jsonl", 2, ("prompt_text",), "Hm?"),
        "task3_relevance_clf.jsonl",
        2,
        "prompt_text",
        "different text",
    ),
    (
        "annotator differs from the file name",
        _set(ALICE5, 2, ("annotator",), "mallory"),
        ALICE5,
        2,
        "annotator",
        "does not match the file name",
    ),
    (
        "pilot sample of two users",
        _set("annotations_v0/erin_task3.jsonl", 1, ("user_id",), "u-x"),
        "annotations_v0/erin_task3.jsonl",
        1,
        "user_id",
        "pilot sample 0",
    ),
    (
        "model id differs from the file name",
        _set("relevance_task5/google_gemma-4-31b-it.jsonl", 1, ("model",), "gpt-5.4"),
        "relevance_task5/google_gemma-4-31b-it.jsonl",
        1,
        "model",
        "does not match the file name",
    ),
]


@pytest.mark.parametrize(
    ("change", "file", "line", "field", "message"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_malformed_input_names_file_line_and_field(
    tmp_path: Path,
    change: Callable[[Files], None],
    file: str,
    line: int | None,
    field: str | None,
    message: str,
) -> None:
    files = tiny_world()
    change(files)
    root = write_world(tmp_path / "raw", files)
    with pytest.raises(DataError) as info:
        read_annotation_tool(root)
    err = info.value
    assert (err.file, err.line, err.field) == (file, line, field), str(err)
    assert message in str(err)
    assert str(err).startswith(f"{file}, line {line}")


def test_a_folder_without_stage2_items_is_not_read(tmp_path: Path) -> None:
    files = tiny_world()
    del files["extracted/task5_items.jsonl"]
    with pytest.raises(DataError, match="no extracted/task5_items.jsonl"):
        read_annotation_tool(write_world(tmp_path, files))


def test_nothing_is_written_from_bad_input(tmp_path: Path) -> None:
    """The rule's script validates while reading: an error leaves no table behind."""
    from analysis.data.canonical import write_tables

    files = tiny_world()
    _set(ALICE5, 1, ("relevance_judgments", 0, "relevant"), "yes")(files)
    out = tmp_path / "tables"
    with pytest.raises(DataError):
        write_tables(read_annotation_tool(write_world(tmp_path / "raw", files)).tables, out)
    assert not out.exists()
