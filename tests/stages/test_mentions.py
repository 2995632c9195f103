"""The explicit-mention detector, checked on its project-written, hand-checked sample."""

from __future__ import annotations

import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

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
from tests.settings_defaults import stats_settings


def test_sample_is_balanced_and_disjoint() -> None:
    for half in (CALIBRATION, CHECK):
        assert sum(c.mentioned for c in half) * 2 == len(half)
    assert not {c.attribute for c in CALIBRATION} & {c.attribute for c in CHECK}


def test_config_thresholds_are_the_calibrated_ones(stages_cfg: StagesConfig) -> None:
    lex, emb, acc = calibrate()
    cfg = stages_cfg.stage3.mentions
    assert (lex, emb) == (cfg.lexical_threshold, cfg.embedding_threshold)
    assert acc >= 0.85


def test_held_back_accuracy_sensitivity_and_specificity_are_exact(
    stages_cfg: StagesConfig,
) -> None:
    cfg = stages_cfg.stage3.mentions
    recs = {
        r.key: r
        for r in detector_records(cfg.lexical_threshold, cfg.embedding_threshold, stats_settings())
    }
    acc = recs["stage3.mentions.detector_accuracy"]
    assert acc.n == len(CHECK) and acc.value >= 0.8 and "not used to choose" in acc.method
    mentioned = sum(c.mentioned for c in CHECK)
    sens = recs["stage3.mentions.detector_sensitivity"]
    spec = recs["stage3.mentions.detector_specificity"]
    assert (sens.n, spec.n) == (mentioned, len(CHECK) - mentioned)
    for rec in recs.values():  # independent cases, few: Clopper-Pearson on them
        k = rec.extra["hits"]
        assert (rec.ci_low, rec.ci_high) == pytest.approx(
            proportion_confint(k, rec.n, method="beta")
        )
        assert rec.extra["exact"] is True and "design check_cases: cases" in rec.method


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
