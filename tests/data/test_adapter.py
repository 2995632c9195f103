"""The annotation-tool adapter on the tiny made-up world: every file kind, round and mapping."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd

from analysis.data import ids
from analysis.data.annotation_tool import AdapterResult, read_annotation_tool
from analysis.data.items_files import source_of
from analysis.data.layout import raw_files
from tests.data.tiny_world import (
    A1,
    A2,
    A3,
    C1,
    CLAUDE_ARN,
    EXPECTED_IGNORED,
    EXPECTED_ROWS,
    EXPECTED_SKIPS,
    P1,
    P2,
    P3,
    tiny_world,
    write_world,
)


def _votes(result: AdapterResult, **where: str) -> pd.DataFrame:
    v = result.tables["relevance_votes"]
    for col, value in where.items():
        v = v[v[col] == value]
    return v


def test_every_table_has_the_hand_counted_rows(tiny: AdapterResult) -> None:
    assert {name: len(df) for name, df in tiny.tables.items()} == EXPECTED_ROWS


def test_skipped_records_and_ignored_files_are_reported(tiny: AdapterResult) -> None:
    report = tiny.report()
    assert report["skipped_by_kind"] == EXPECTED_SKIPS
    assert {f["file"] for f in report["ignored_files"]} == EXPECTED_IGNORED
    null = [s for s in tiny.skipped if s.file == "annotations/alice_task4.jsonl"]
    assert [(s.line, s.field, s.kind) for s in null] == [
        (2, "attr_judgments[1].judgment", "null_label")
    ]
    unrated = [s for s in tiny.skipped if s.kind == "unrated"]
    assert [(s.file, s.field) for s in unrated] == [
        ("annotations_v0/dave_task2.jsonl", "relevance_judgments[2].rating")
    ]


def test_users_keep_or_infer_their_source(tiny: AdapterResult) -> None:
    users = tiny.tables["users"].set_index("user_id")
    assert tuple(users.loc["u-wc-1"]) == ("wildchat", "real", False)
    assert tuple(users.loc["u-syn-1"]) == ("synthetic:cupid", "synthetic", False)
    # seen only in stage-2 / pilot files: the study's real users
    assert tuple(users.loc["u-wc-2"]) == ("wildchat", "real", True)
    assert users.loc["u-pilot-1", "source_inferred"]


def test_stage1_judgments_map_ok_bad_unsure(tiny: AdapterResult) -> None:
    j = tiny.tables["attribute_judgments"]
    alice = j[(j["rater"] == "alice") & (j["user_id"] == "u-wc-1")].set_index("attribute_id")
    assert alice.loc[ids.attribute_id("u-wc-1", A1), "label"] == "accepted"
    assert alice.loc[ids.attribute_id("u-wc-1", A2), "label"] == "rejected"
    assert alice.loc[ids.attribute_id("u-wc-1", A2), "note"] == "one recipe is not a hobby"
    assert alice.loc[ids.attribute_id("u-wc-1", A3), "label"] == "uncertain"
    assert set(j["round"]) == {"final"} and set(j["rater_kind"]) == {"human"}


def test_votes_are_keyed_by_sample_and_attribute_never_by_text(tiny: AdapterResult) -> None:
    assert A1 == C1  # the same sentence for two users of prompt 3
    alice = _votes(tiny, rater="alice", round="final", prompt_id=ids.prompt_id(3))
    by_user = alice.set_index("attribute_id")["vote"]
    assert by_user[ids.attribute_id("u-wc-1", A1)]
    assert not by_user[ids.attribute_id("u-wc-2", C1)]
    assert ids.attribute_id("u-wc-1", A1) != ids.attribute_id("u-wc-2", C1)


def test_graded_pilot_is_binarized_and_keeps_its_label(tiny: AdapterResult) -> None:
    graded = _votes(tiny, round="pilot_graded").set_index("attribute_id")
    p1, p2 = ids.attribute_id("u-pilot-1", P1), ids.attribute_id("u-pilot-1", P2)
    assert graded.loc[p1, "vote"] and graded.loc[p1, "graded_label"] == "necessary_implicit"
    assert not graded.loc[p2, "vote"] and graded.loc[p2, "graded_label"] == "optional"
    assert ids.attribute_id("u-pilot-1", P3) not in graded.index  # 'none' = never rated
    # rounds are never pooled: the same person's binary file is its own round
    binary = _votes(tiny, round="pilot", rater="dave").set_index("attribute_id")
    assert binary.loc[p2, "vote"] and binary["graded_label"].isna().all()


def test_pilot_model_file_without_prompt_index_is_placed_by_sample(tiny: AdapterResult) -> None:
    gpt = _votes(tiny, round="pilot", rater="gpt-5.4")
    assert len(gpt) == 3 and set(gpt["prompt_id"]) == {ids.prompt_id(1)}
    assert set(gpt["user_id"]) == {"u-pilot-1"}


def test_model_ids_are_normalized_and_raw_ids_kept(tiny: AdapterResult) -> None:
    final_models = _votes(tiny, round="final", rater_kind="model")
    raw = final_models.groupby("rater")["raw_rater"].unique().map(list).to_dict()
    assert raw == {"claude-sonnet-4-6": [CLAUDE_ARN], "gemma-4-31b-it": ["google/gemma-4-31B-it"]}
    gens = tiny.tables["responses"].groupby("generator")["raw_generator"].first().to_dict()
    assert gens["llama-3.3-70b-instruct"] == "meta-llama/Llama-3.3-70B-Instruct"


def test_majority_labels_and_classifier_set(tiny: AdapterResult) -> None:
    majority = _votes(tiny, round="final", rater_kind="human_majority")
    assert len(majority) == 6  # 7 published labels minus one null
    assert set(majority["rater"]) == {"human-majority"}
    clf = tiny.tables["relevance_classifier_set"].set_index("attribute_id")
    row = clf.loc[ids.attribute_id("u-pilot-1", P1)]
    assert (row["split"], bool(row["label"]), int(row["n_annotators"])) == ("train", True, 3)
    assert len(_votes(tiny, round="pilot2")) == 3


def test_responses_conditions_and_duplicates(tiny: AdapterResult) -> None:
    r = tiny.tables["responses"]
    assert r.groupby("condition").size().to_dict() == {
        "full_profile": 3,
        "generic": 4,
        "personalized": 4,
    }
    mine = r[(r["user_id"] == "u-wc-1") & (r["generator"] == "gpt-5.4")].set_index("condition")
    assert mine.loc["personalized", "text"] == "Take a short hike."


def test_preference_ratings_from_people_and_judges(tiny: AdapterResult) -> None:
    p = tiny.tables["preference_ratings"]
    judge = p[p["rater_kind"] == "model"]
    assert set(judge["rater"]) == {"gpt-5.4"} and sorted(judge["rating"]) == [4, 5]
    alice = p[p["rater"] == "alice"].set_index("generator")
    assert alice.loc["gpt-5.4", "rating"] == 4
    assert alice.loc["claude-sonnet-4-6", "rating"] == 2


def test_ids_are_content_derived_and_reads_are_deterministic(tiny_root: Path) -> None:
    first, second = read_annotation_tool(tiny_root), read_annotation_tool(tiny_root)
    for name in first.tables:
        pd.testing.assert_frame_equal(first.tables[name], second.tables[name])
    items = first.tables["relevance_items"]
    row = items[items["round"] == "final"].iloc[0]
    assert row["item_id"] == ids.item_id(row["user_id"], row["prompt_id"], row["attribute_id"])


def test_files_are_discovered_by_pattern(tmp_path: Path) -> None:
    files = tiny_world()
    # another annotation folder and another annotator: no file names are listed anywhere
    files["annotations_round2/zoe_task5.jsonl"] = [
        dict(rec, annotator="zoe") for rec in files["annotations/alice_task5.jsonl"]
    ]
    root = write_world(tmp_path / "raw", files)
    result = read_annotation_tool(root)
    assert len(_votes(result, rater="zoe")) == 6
    listed = {Path(p).relative_to(root).as_posix() for p in raw_files(root)}
    assert "annotations_round2/zoe_task5.jsonl" in listed
    assert not listed & EXPECTED_IGNORED
    assert len(listed) == len(files) - len(EXPECTED_IGNORED)


def test_simulated_sources_are_kept(tmp_path: Path) -> None:
    files = tiny_world()
    items = files["extracted/task4_items.jsonl"]
    items[0]["source"], items[1]["source"] = "sim-wildchat", "sim-prefeval"
    users = read_annotation_tool(write_world(tmp_path, files)).tables["users"].set_index("user_id")
    assert tuple(users.loc["u-wc-1", ["source", "source_kind"]]) == ("sim-wildchat", "real")
    assert tuple(users.loc["u-syn-1", ["source", "source_kind"]]) == ("sim-prefeval", "synthetic")
    assert users.loc["u-wc-2", "source"] == "sim-wildchat"  # inferred in the dataset's naming


def test_source_names() -> None:
    assert source_of("personalens") == ("synthetic:personalens", "synthetic")
    assert source_of("sim-cupid") == ("sim-cupid", "synthetic")


def test_missing_optional_file_kinds_are_fine(tmp_path: Path, tiny_root: Path) -> None:
    # the published snapshot has no per-annotator final files and no judge files
    for sub in ("annotations", "judge_task6"):
        shutil.rmtree(tiny_root / sub)
    result = read_annotation_tool(tiny_root)
    assert result.tables["attribute_judgments"].empty
    assert result.tables["preference_ratings"].empty
    assert len(_votes(result, round="final", rater_kind="human")) == 0


def test_prompt_id_may_be_a_bare_prompt_index(tmp_path: Path, tiny: AdapterResult) -> None:
    files = tiny_world()
    for rel, recs in files.items():
        if rel.startswith(("extracted/task6", "annotations/", "judge_task6/", "task6/")):
            for rec in recs:
                if "prompt_id" in rec:
                    rec["prompt_id"] = rec["prompt_id"].rsplit("_", 1)[1]
    again = read_annotation_tool(write_world(tmp_path, files))
    for name in ("responses", "preference_ratings"):
        pd.testing.assert_frame_equal(again.tables[name], tiny.tables[name])


def test_flag_reason_is_read_where_given_and_null_elsewhere(tmp_path: Path) -> None:
    """The structured reason of a flag becomes a column; the note is never read for it."""
    files = tiny_world()
    files["annotations/alice_task4.jsonl"][0]["attr_judgments"][1]["flag_reason"] = (
        "overgeneralization"
    )
    tables = read_annotation_tool(write_world(tmp_path / "raw", files)).tables
    j = tables["attribute_judgments"]
    alice = j[(j["rater"] == "alice") & (j["user_id"] == "u-wc-1")].set_index("attribute_id")
    assert alice.loc[ids.attribute_id("u-wc-1", A2), "flag_reason"] == "overgeneralization"
    # every other judgment carries no field: null, not a reason read from its note
    assert j["flag_reason"].notna().sum() == 1


def test_real_layout_without_flag_reasons_has_a_null_column(tiny: AdapterResult) -> None:
    j = tiny.tables["attribute_judgments"]
    assert "flag_reason" in j.columns and j["flag_reason"].isna().all()
    assert j["note"].notna().any()  # notes exist, and are not turned into reasons
