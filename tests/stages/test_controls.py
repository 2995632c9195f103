"""No-context, mismatched-profile and swapped-order controls, and position consistency."""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from analysis.settings import StagesConfig
from analysis.stages import steps
from analysis.stages.controls import combine_controls, mismatched_attributes
from analysis.stages.generation import relevant_attributes
from analysis.stages.judging import judge_items
from analysis.stages.prompts import PromptSet
from analysis.stats.control_effects import position_consistency
from tests.settings_defaults import stats_settings
from tests.stages.conftest import ScriptedCaller

TABLES = ("responses", "relevance_votes", "preference_ratings", "prompts", "attributes")


def _always_b(request: Any) -> str:
    """A judge with pure position bias: B is always much better."""
    return '{"rating": 5}'


def _fit_judge(request: Any) -> str:
    """Prefers personalized only when it is told a fact; otherwise no difference."""
    text = request.messages[-1]["content"]
    if "Picture yourself" not in text:
        return '{"rating": 3}'
    a = re.search(r"Reply A:\n(.*?)\n\nReply B:", text, re.S).group(1)
    return '{"rating": 1}' if "[PERSONALIZED]" in a else '{"rating": 5}'


def test_controls_with_a_position_biased_judge(
    world: dict[str, pd.DataFrame], stages_cfg: StagesConfig, prompts: PromptSet
) -> None:
    tables = [world[k] for k in TABLES]
    caller = ScriptedCaller(_always_b)
    main = steps.judging_step(*tables, stages_cfg, prompts, caller, 3)
    ctl = steps.controls_step(*tables, stages_cfg, prompts, caller, 3)
    assert set(ctl["control"]) == {"no_context", "mismatched_profile", "swapped_order"}
    swapped = ctl[ctl["control"] == "swapped_order"]
    merged = swapped.merge(main, on=["user_id", "prompt_id", "generator", "attribute_id"])
    assert (merged["personalized_first_x"] != merged["personalized_first_y"]).all()
    pc = position_consistency(main, swapped)
    assert len(pc) == len(swapped) and not pc["same"].any()  # 5 vs 1 after mapping, always
    table, records = combine_controls(
        ["fake-judge"],
        [ctl],
        [main],
        stats=stats_settings(n_boot=100, seed=1, caveats={"fake-judge": "not a real judge"}),
    )
    recs = {r.key: r for r in records}
    assert recs["stage3.controls.position_consistency.fake-judge"].value == 0.0
    assert recs["stage3.controls.position_consistency.fake-judge"].extra["caveat"]
    assert "stage3.controls.mean_rating.no_context.fake-judge" in recs
    assert len(table) == len(ctl)


def test_controls_with_a_judge_that_rewards_fit(
    world: dict[str, pd.DataFrame], stages_cfg: StagesConfig, prompts: PromptSet
) -> None:
    tables = [world[k] for k in TABLES]
    caller = ScriptedCaller(_fit_judge)
    main = steps.judging_step(*tables, stages_cfg, prompts, caller, 3)
    ctl = steps.controls_step(*tables, stages_cfg, prompts, caller, 3)
    no_ctx = ctl[ctl["control"] == "no_context"]
    assert (no_ctx["rating"] == 3).all()
    # the no-context prompt never shows an attribute
    texts = [
        r.messages[-1]["content"]
        for b in caller.batches
        for r in b
        if r.custom_id.startswith("no_context|")
    ]
    assert texts and not any("Picture yourself" in t for t in texts)
    # without an attribute, the slots of one response pair are one and the same request
    n_pairs = no_ctx[["user_id", "prompt_id", "generator"]].drop_duplicates().shape[0]
    assert len(set(texts)) <= n_pairs < len(texts)  # (both fixture generators write alike)
    pc = position_consistency(main, ctl[ctl["control"] == "swapped_order"])
    assert pc["same"].all()
    _, records = combine_controls(
        ["fake-judge"],
        [ctl],
        [main],
        stats=stats_settings(n_boot=100, seed=1),
    )
    recs = {r.key: r.value for r in records}
    assert recs["stage3.controls.position_consistency.fake-judge"] == 1.0
    assert recs["stage3.controls.mean_rating.no_context.fake-judge"] == 3.0
    assert recs["stage3.controls.mean_rating.matched_for_no_context.fake-judge"] == 5.0


def test_mismatched_attribute_is_another_users(world: dict[str, pd.DataFrame]) -> None:
    relevant = relevant_attributes(world["relevance_votes"])
    items = judge_items(world["responses"], relevant, world["preference_ratings"])
    picks = mismatched_attributes(items, relevant, seed=5)
    assert all(uid != u for (_, uid), u in zip(picks, items["user_id"], strict=True))
    assert picks == mismatched_attributes(items, relevant, seed=5)
    # stable under removing other slots
    assert mismatched_attributes(items.iloc[3:], relevant, seed=5) == picks[3:]


def test_controls_can_be_switched_off(
    world: dict[str, pd.DataFrame], stages_cfg: StagesConfig, prompts: PromptSet
) -> None:
    for c in ("no_context", "mismatched_profile", "swapped_order"):
        setattr(stages_cfg.stage3.controls, c, c == "no_context")
    ctl = steps.controls_step(
        *[world[k] for k in TABLES], stages_cfg, prompts, ScriptedCaller(_always_b), 3
    )
    assert set(ctl["control"]) == {"no_context"}
