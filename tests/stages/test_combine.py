"""Combining rules: pass-through without models, parsed rows only, canonical columns."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.data.schemas import COLUMNS
from analysis.settings import StagesConfig
from analysis.stages import steps
from analysis.stages.combine import (
    combine_preference_ratings,
    combine_relevance_votes,
    combine_responses,
    parse_failure_records,
    parse_failure_table,
    rater_name,
)
from analysis.stages.prompts import PromptSet
from analysis.workflow_config import ConfigError, stage_models
from tests.stages.conftest import ScriptedCaller


def test_no_models_passes_imported_tables_through(world: dict[str, pd.DataFrame]) -> None:
    votes = combine_relevance_votes(world["relevance_votes"], [], "v1")
    expected = (
        world["relevance_votes"].sort_values(["item_id", "rater", "round"]).reset_index(drop=True)
    )
    pd.testing.assert_frame_equal(votes, expected)
    assert list(combine_responses(world["responses"], [], "v1").columns) == list(
        COLUMNS["responses"]
    )
    assert parse_failure_table([]).empty and parse_failure_records(parse_failure_table([])) == []


def test_votes_enter_only_when_parsed(
    world: dict[str, pd.DataFrame], stages_cfg: StagesConfig, prompts: PromptSet
) -> None:
    answers = iter(['{"answer": "YES"}', "maybe", '{"answer": "NO"}'] * 100)
    caller = ScriptedCaller(
        lambda r: "hmm" if r.custom_id.endswith("#repair") else next(answers), name="fake-voter"
    )
    table = steps.relevance_step(
        world["relevance_items"],
        world["prompts"],
        world["attributes"],
        stages_cfg,
        prompts,
        caller,
        1,
    )
    combined = combine_relevance_votes(world["relevance_votes"], [table], "v1")
    mine = combined[combined["rater"] == "fake-voter"]
    assert len(mine) == (table["parse_status"] == "ok").sum() == 12
    assert list(combined.columns) == list(COLUMNS["relevance_votes"])
    counts = parse_failure_table([("stage2_relevance", "fake-voter", table)])
    assert counts.iloc[0].to_dict() == {
        "model": "fake-voter",
        "stage": "stage2_relevance",
        "n_calls": 18,
        "n_repair_calls": 6,
        "n_repaired": 0,
        "n_failed": 6,
    }
    (rec,) = parse_failure_records(counts, {"fake-voter": "near random"})
    assert rec.key == "parse_failures.stage2_relevance.fake-voter" and rec.value == 6
    assert rec.extra["caveat"] == "near random" and rec.extra["failure_rate"] == pytest.approx(
        1 / 3
    )


def test_generated_responses_and_rater_collisions(
    world: dict[str, pd.DataFrame], stages_cfg: StagesConfig, prompts: PromptSet
) -> None:
    caller = ScriptedCaller(lambda r: f"Reply {len(r.messages)}", name="sim-gen-a")
    table = steps.generation_step(
        world["relevance_votes"],
        world["prompts"],
        world["attributes"],
        stages_cfg,
        prompts,
        caller,
        1,
    )
    assert len(table) == 12 and set(table["condition"]) == {"generic", "personalized"}
    # requests alternate generic / personalized; only the personalized system message has a profile
    assert all("- The user" in r.messages[0]["content"] for r in caller.batches[0][1::2])
    assert not any("- The user" in r.messages[0]["content"] for r in caller.batches[0][::2])
    combined = combine_responses(world["responses"], [table], "v1")
    # sim-gen-a is already an imported generator: the workflow's one is filed apart
    assert rater_name("sim-gen-a", world["responses"]["generator"], "v1") == "sim-gen-a@v1"
    assert (combined["generator"] == "sim-gen-a@v1").sum() == 12
    assert combined["response_id"].is_unique


def test_judge_ratings_combine(
    world: dict[str, pd.DataFrame], stages_cfg: StagesConfig, prompts: PromptSet
) -> None:
    tables = [
        world[k]
        for k in ("responses", "relevance_votes", "preference_ratings", "prompts", "attributes")
    ]
    table = steps.judging_step(
        *tables, stages_cfg, prompts, ScriptedCaller(lambda r: '{"rating": 4}'), 1
    )
    combined = combine_preference_ratings(world["preference_ratings"], [table], "v1")
    assert len(combined) == len(world["preference_ratings"]) + len(table)
    assert list(combined.columns) == list(COLUMNS["preference_ratings"])


def test_stage_models_and_nested_config() -> None:
    cfg = {"models": {"b": {}, "a": {}}, "stages": {"stage2": {"voters": None}}}
    assert stage_models(cfg, "stage2", "voters") == ["a", "b"]
    cfg["stages"]["stage2"]["voters"] = ["b"]
    assert stage_models(cfg, "stage2", "voters") == ["b"]
    cfg["stages"]["stage2"]["voters"] = ["zzz"]
    with pytest.raises(ConfigError, match="zzz"):
        stage_models(cfg, "stage2", "voters")
    assert stage_models({"models": {}, "stages": {"s": {"r": None}}}, "s", "r") == []
