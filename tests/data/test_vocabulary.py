"""The schemas check the tables against the vocabulary the analysis code imports."""

from __future__ import annotations

from analysis.data import schemas, vocabulary


def test_schemas_use_the_vocabulary_tuples() -> None:
    cols = schemas.COLUMNS
    assert cols["attribute_judgments"]["label"].isin is vocabulary.STAGE1_LABELS
    assert cols["attribute_judgments"]["rater_kind"].isin is vocabulary.JUDGE_KINDS
    assert cols["relevance_votes"]["rater_kind"].isin is vocabulary.VOTE_KINDS
    assert cols["relevance_items"]["round"].isin is vocabulary.STAGE2_ROUNDS
    assert cols["users"]["source_kind"].isin is vocabulary.SOURCE_KINDS


def test_values_are_the_stored_strings() -> None:
    assert vocabulary.STAGE1_LABELS == ("accepted", "uncertain", "rejected")
    assert vocabulary.VOTE_KINDS == ("human", "model", "human_majority")
    assert vocabulary.STAGE2_ROUNDS == ("pilot", "pilot_graded", "pilot2", "final")
    assert vocabulary.CONDITIONS == ("generic", "personalized", "full_profile")
    assert vocabulary.SOURCE_KINDS == ("real", "synthetic")
