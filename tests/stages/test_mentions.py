"""The explicit-mention detector, checked on its project-written, hand-checked sample."""

from __future__ import annotations

import pandas as pd

from analysis.settings import StagesConfig
from analysis.stages.generation import relevant_attributes
from analysis.stages.mention_sample import CALIBRATION, CHECK
from analysis.stages.mentions import (
    attribute_core,
    calibrate,
    detector_records,
    mention_slots,
    mention_table,
    second_person_sentences,
    stem,
)


def test_sample_is_balanced_and_disjoint() -> None:
    for half in (CALIBRATION, CHECK):
        assert sum(c.mentioned for c in half) * 2 == len(half)
    assert not {c.attribute for c in CALIBRATION} & {c.attribute for c in CHECK}


def test_config_thresholds_are_the_calibrated_ones(stages_cfg: StagesConfig) -> None:
    lex, emb, acc = calibrate()
    cfg = stages_cfg.stage3.mentions
    assert (lex, emb) == (cfg.lexical_threshold, cfg.embedding_threshold)
    assert acc >= 0.85


def test_held_back_accuracy_is_reported(stages_cfg: StagesConfig) -> None:
    cfg = stages_cfg.stage3.mentions
    (rec,) = detector_records(cfg.lexical_threshold, cfg.embedding_threshold)
    assert rec.key == "stage3.mentions.detector_accuracy" and rec.n == len(CHECK)
    assert rec.value >= 0.8
    assert "not used to choose" in rec.method


def test_helpers() -> None:
    assert stem("keeps") == "keep" and stem("keeping") == "keep" and stem("bees") == "bee"
    assert attribute_core("The user's dog is old.") == "dog is old"
    assert second_person_sentences("Bees fly. Since you keep bees, relax!\nThanks") == [
        "Since you keep bees, relax!"
    ]


def test_mention_table_flags_the_personalized_mention(world: dict[str, pd.DataFrame]) -> None:
    responses = world["responses"].copy()
    pers = responses["condition"] == "personalized"
    responses.loc[pers, "text"] = responses.loc[pers, "text"].str.replace(
        "Since ", "Since you told me: ", regex=False
    )
    slots = mention_slots(
        responses, relevant_attributes(world["relevance_votes"]), world["preference_ratings"]
    )
    table = mention_table(slots, responses, world["attributes"], 0.3, 0.8)
    cond = table.merge(responses[["response_id", "condition"]], on="response_id")
    assert list(table.columns) == [
        "response_id",
        "attribute_id",
        "mentioned",
        "method",
        "lexical_score",
        "embedding_score",
    ]
    assert not cond.loc[cond["condition"] == "generic", "mentioned"].any()
    assert cond.loc[cond["condition"] == "personalized", "mentioned"].mean() > 0.5
