"""Stage 3, step 1: each generator writes a generic and a personalized response per pair.

The generic response sees only the prompt. The personalized response is also given the
attributes the human majority judged relevant for this (user, prompt) pair: the study's best
case, in which personalization cannot fail for lack of the right information. Pairs without
any relevant attribute are not answered (there is nothing to personalize on and no rating
slot to fill).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from analysis.data.ids import response_id
from analysis.stages.parsing import ParsedOutput, outcome_frame
from analysis.stages.prompts import PromptSet, format_profile
from analysis.stages.selection import ranked_subset

CONDITIONS = ("generic", "personalized")

GENERATED_COLUMNS = (
    "response_id",
    "user_id",
    "prompt_id",
    "generator",
    "condition",
    "text",
)


def relevant_attributes(votes: pd.DataFrame, round_: str = "final") -> pd.DataFrame:
    """``user_id, prompt_id, attribute_id`` judged relevant by the human majority."""
    maj = votes[(votes["rater_kind"] == "human_majority") & (votes["round"] == round_)]
    rel = maj[maj["vote"].astype(bool)]
    return (
        rel[["user_id", "prompt_id", "attribute_id"]]
        .drop_duplicates()
        .sort_values(["user_id", "prompt_id", "attribute_id"], kind="stable")
        .reset_index(drop=True)
    )


def select_pairs(relevant: pd.DataFrame, cap: int | None, seed: int) -> pd.DataFrame:
    """``user_id, prompt_id`` pairs a generator answers (capped, by hash rank), sorted."""
    pairs = relevant[["user_id", "prompt_id"]].drop_duplicates()
    keys = [f"{u}|{p}" for u, p in zip(pairs["user_id"], pairs["prompt_id"], strict=True)]
    chosen = set(ranked_subset(keys, cap, seed, "stage3.generation"))
    mask = [k in chosen for k in keys]
    return pairs[mask].sort_values(["user_id", "prompt_id"], kind="stable").reset_index(drop=True)


def generation_requests(
    pairs: pd.DataFrame,
    relevant: pd.DataFrame,
    prompts_table: pd.DataFrame,
    attributes: pd.DataFrame,
    prompts: PromptSet,
    *,
    model: str,
    words: int,
    params: dict[str, Any],
) -> tuple[list[Any], pd.DataFrame]:
    """Two requests per pair (generic, personalized) and the matching response rows."""
    from analysis.stages.requests import make_request

    prompt_text = dict(zip(prompts_table["prompt_id"], prompts_table["text"], strict=True))
    att_text = {
        (a, u): t
        for a, u, t in zip(
            attributes["attribute_id"], attributes["user_id"], attributes["text"], strict=True
        )
    }
    rel = relevant.groupby(["user_id", "prompt_id"])["attribute_id"].apply(sorted).to_dict()
    requests, rows = [], []
    for uid, pid in zip(pairs["user_id"], pairs["prompt_id"], strict=True):
        prompt = str(prompt_text[pid])
        profile = format_profile(att_text[(a, uid)] for a in rel[(uid, pid)])
        for condition in CONDITIONS:
            if condition == "generic":
                messages = prompts.render("generic_response", prompt=prompt, max_words=words)
            else:
                messages = prompts.render(
                    "personalized_response", prompt=prompt, profile=profile, max_words=words
                )
            # the prompt version keeps ids apart from an imported generator of the same name
            rid = response_id(str(uid), str(pid), f"{model}@{prompts.version}", condition)
            requests.append(make_request(messages, params, rid))
            rows.append(
                {
                    "response_id": rid,
                    "user_id": str(uid),
                    "prompt_id": str(pid),
                    "generator": model,
                    "condition": condition,
                }
            )
    return requests, pd.DataFrame(rows, columns=list(GENERATED_COLUMNS[:-1]))


def generation_table(rows: pd.DataFrame, outcomes: Sequence[ParsedOutput]) -> pd.DataFrame:
    """One row per response: ``text`` (null = parse failure) plus bookkeeping."""
    book = outcome_frame(outcomes)
    if list(book["custom_id"]) != list(rows["response_id"]):
        raise ValueError("generation_table: outcomes are not in the order of the responses")
    table = rows.reset_index(drop=True).assign(
        text=pd.array([o.value for o in outcomes], dtype="str")
    )
    return pd.concat([table, book.drop(columns="custom_id")], axis=1)
