"""Judges see the two responses in a seeded shuffled order; ratings map back to 5 = personalized."""

from __future__ import annotations

import re
from typing import Any

import pandas as pd
import pytest

from analysis.settings import LabelFormat, StagesConfig
from analysis.stages import steps
from analysis.stages.generation import relevant_attributes
from analysis.stages.judging import judge_items, model_ratings, to_personalized_scale
from analysis.stages.prompts import PromptSet
from tests.stages.conftest import ScriptedCaller


def test_scale_mapping() -> None:
    assert [to_personalized_scale(r, False) for r in range(1, 6)] == [1, 2, 3, 4, 5]
    assert [to_personalized_scale(r, True) for r in range(1, 6)] == [5, 4, 3, 2, 1]
    with pytest.raises(ValueError):
        to_personalized_scale(0, True)


def _prefers_personalized(strength: int):
    """A judge that always prefers the reply tagged [PERSONALIZED] by ``strength`` (1 or 2)."""

    def answer(request: Any) -> str:
        text = request.messages[-1]["content"]
        a = re.search(r"Reply A:\n(.*?)\n\nReply B:", text, re.S).group(1)
        personalized_is_a = "[PERSONALIZED]" in a
        rating = 3 - strength if personalized_is_a else 3 + strength
        return f'{{"rating": {rating}}}'

    return answer


def test_ratings_map_back_whatever_the_order(
    world: dict[str, pd.DataFrame], stages_cfg: StagesConfig, prompts: PromptSet
) -> None:
    tables = [
        world[k]
        for k in ("responses", "relevance_votes", "preference_ratings", "prompts", "attributes")
    ]
    caller = ScriptedCaller(_prefers_personalized(2))
    table = steps.judging_step(*tables, stages_cfg, prompts, caller, 3)
    # 2 generators x 7 relevant (user, prompt, attribute) slots = 14
    assert len(table) == 14 and (table["parse_status"] == "ok").all()
    assert set(table["personalized_first"]) == {True, False}  # both orders occur
    assert (table["rating"] == 5).all()
    assert set(table["raw_rating"]) == {1, 5}
    # one response pair keeps its order across the attributes it is rated for
    per_pair = table.groupby(["user_id", "prompt_id", "generator"])["personalized_first"].nunique()
    assert (per_pair == 1).all()
    rows = model_ratings(table, "fake-judge")
    assert {r["rating"] for r in rows} == {5} and rows[0]["rater_kind"] == "model"
    # the same seed gives the same order; another seed another one
    again = steps.judging_step(
        *tables, stages_cfg, prompts, ScriptedCaller(_prefers_personalized(1)), 3
    )
    assert list(again["personalized_first"]) == list(table["personalized_first"])
    assert (again["rating"] == 4).all()
    other = steps.judging_step(
        *tables, stages_cfg, prompts, ScriptedCaller(_prefers_personalized(1)), 4
    )
    assert list(other["personalized_first"]) != list(table["personalized_first"])


def test_cap_and_slots(
    world: dict[str, pd.DataFrame], stages_cfg: StagesConfig, prompts: PromptSet
) -> None:
    items = judge_items(
        world["responses"],
        relevant_attributes(world["relevance_votes"]),
        world["preference_ratings"],
    )
    assert items["human_rated"].sum() == len(world["preference_ratings"]) == 7
    stages_cfg.stage3.max_ratings_per_judge = 5
    tables = [
        world[k]
        for k in ("responses", "relevance_votes", "preference_ratings", "prompts", "attributes")
    ]
    stages_cfg.label_format = LabelFormat.word
    table = steps.judging_step(*tables, stages_cfg, prompts, ScriptedCaller(lambda r: "3"), 3)
    assert (table["rating"] == 3).all()
    assert len(table) == 5 and (table["generator"] == "sim-gen-a").all()
