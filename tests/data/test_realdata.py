"""The adapter on the authors' real exports: the counts their README states.

Skipped with a reason where ../shared/data/annotation-tool is absent (a user's clone); CI has it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis.data.annotation_tool import AdapterResult, read_annotation_tool
from analysis.data.layout import discover, raw_files
from analysis.data.raters import normalize_human_rater

pytestmark = pytest.mark.realdata


@pytest.fixture(scope="module")
def real(real_data_root: Path) -> AdapterResult:
    return read_annotation_tool(real_data_root)


def _votes(real: AdapterResult, round_: str, kind: str | None = None) -> pd.DataFrame:
    v = real.tables["relevance_votes"]
    v = v[v["round"] == round_]
    return v if kind is None else v[v["rater_kind"] == kind]


def test_final_stage2_pairs_items_and_majority_labels(real: AdapterResult) -> None:
    items = real.tables["relevance_items"]
    final = items[items["round"] == "final"]
    assert len(final) == 3973
    assert len(final[["user_id", "prompt_id"]].drop_duplicates()) == 164
    assert final["user_id"].nunique() == 47 and final["prompt_id"].nunique() == 41
    per_prompt = final[["user_id", "prompt_id"]].drop_duplicates().groupby("prompt_id").size()
    assert set(per_prompt) == {4}
    majority = _votes(real, "final", "human_majority")
    assert len(majority) == 3969
    assert int(majority["vote"].sum()) == 708  # the human-majority YES labels


def test_final_llm_votes_cover_every_item(real: AdapterResult) -> None:
    models = _votes(real, "final", "model")
    assert models.groupby("rater").size().to_dict() == {"gemma-4-31b-it": 3973, "gpt-5.4": 3973}


def test_stage1_users_sources_and_attributes(real: AdapterResult) -> None:
    users = real.tables["users"]
    recorded = users[~users["source_inferred"]]
    assert len(recorded) == 78
    assert recorded.groupby("source").size().to_dict() == {
        "synthetic:cupid": 10,
        "synthetic:personalens": 10,
        "synthetic:prefeval": 10,
        "wildchat": 48,
    }
    attrs = real.tables["attributes"]
    assert int((attrs["set"] == "stage1").sum()) == 2265
    # the WildChat users' conversations are empty in this earlier version of the file
    conv_users = set(real.tables["conversations"]["user_id"])
    assert conv_users == set(recorded.loc[recorded["source_kind"] == "synthetic", "user_id"])


def test_round2_classifier_set(real: AdapterResult) -> None:
    clf = real.tables["relevance_classifier_set"]
    assert len(clf) == 631 == len(_votes(real, "pilot2", "human_majority"))
    assert clf.groupby("split").size().to_dict() == {"test": 97, "train": 338, "val": 196}
    assert set(clf["n_annotators"]) == {3, 4}


def test_stage3_items_and_responses(real: AdapterResult) -> None:
    r = real.tables["responses"]
    assert len(r) == 10 * 164  # ten response files; the 308 task-6 items duplicate two of them
    personalized = r[r["condition"] == "personalized"]
    assert personalized.groupby("generator").size().to_dict() == {
        "claude-sonnet-4-6": 164,
        "gpt-5.4": 164,
    }
    assert set(r["generator"]) == {
        "claude-sonnet-4-6",
        "gemma-4-31b-it",
        "gpt-5.4",
        "llama-3.3-70b-instruct",
    }
    assert real.tables["preference_ratings"].empty  # the human ratings were not published


def test_pilot_rounds_are_kept_apart(real: AdapterResult) -> None:
    humans = set(_votes(real, "pilot", "human")["rater"])
    assert humans == {"Jiarui", "Lechen", "Lechen2", "Tal", "Xiuzhu"}  # admin's labels are null
    assert set(_votes(real, "pilot", "model")["rater"]) == {
        "claude-sonnet-4-6",
        "gemma-4-31b-it",
        "gpt-5.4",
        "llama-3.3-70b-instruct",
    }
    graded = _votes(real, "pilot_graded")
    assert set(graded["rater"]) == {"Jiarui", "Lechen", "Tal", "Xiuzhu", "Zhuguowang"}
    assert graded["graded_label"].notna().all()


def test_raw_model_ids_are_kept_beside_normalized_ones(real: AdapterResult) -> None:
    v = real.tables["relevance_votes"]
    claude = v[v["rater"] == "claude-sonnet-4-6"]
    assert claude["raw_rater"].str.startswith("arn:aws:bedrock:").all()
    assert not v["rater"].str.contains("/|arn", regex=True).any()


def test_known_quirks_are_counted_skips(real: AdapterResult, real_data_root: Path) -> None:
    report = real.report()
    assert report["skipped_by_kind"] == {
        "empty_record": 53,  # Lechen task 3 (50) and Tal task 3 (3) records without labels
        "null_label": 43,  # admin's 35 null votes, 4 null majority labels in each of 2 files
        "unpublished_item_list": 583,  # the stage-1 pilot: 5 users, 82 attributes, 8 annotators
        "unrated": 1188,  # the graded task's default 'none'
    }
    pilot1 = [s for s in real.skipped if s.kind == "unpublished_item_list"]
    assert len({s.file for s in pilot1}) == 8
    ignored = {f["file"] for f in report["ignored_files"]}
    locks = {p.relative_to(real_data_root).as_posix() for p in real_data_root.rglob("*.lock")}
    assert locks and locks <= ignored
    assert "relevance_debug/Zhuguowang_task3.jsonl" in ignored


def test_pseudonymized_annotators_normalize(real_data_root: Path) -> None:
    layout = discover(real_data_root)
    names = {normalize_human_rater(a.annotator) for a in layout.annotations}
    assert {n for n in names if n.startswith("prolific")} == {f"prolific_P{i}" for i in range(1, 6)}
    assert not any(n.endswith("_") for n in names)
    files = raw_files(real_data_root)
    assert len(files) == 39 and not any(f.endswith(".lock") for f in files)
