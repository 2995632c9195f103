"""Stage 2: each configured model votes YES/NO on every (user, prompt, attribute) item.

The question is the study's, in this project's words: should knowing this attribute change
the response to this prompt in any way, explicitly or implicitly. Items are the final round's
``relevance_items``; a capped model sees whole prompts in seeded hash-rank order, so its
subset supports per-prompt statistics and bootstrap clusters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from analysis.stages.parsing import PARSED, ParsedOutput, outcome_frame
from analysis.stages.prompts import PromptSet, truncate
from analysis.stages.selection import cap_by_groups

ROUND = "final"

VOTE_COLUMNS = ("item_id", "user_id", "prompt_id", "attribute_id", "round", "model", "vote")


def select_items(
    items: pd.DataFrame,
    prompts_table: pd.DataFrame,
    attributes: pd.DataFrame,
    cap: int | None,
    seed: int,
) -> pd.DataFrame:
    """Final-round items with prompt and attribute text, whole prompts up to ``cap`` items."""
    final = items[items["round"] == ROUND]
    texts = attributes.drop_duplicates(["attribute_id", "user_id"])[
        ["attribute_id", "user_id", "text"]
    ].rename(columns={"text": "attribute_text"})
    merged = final.merge(
        prompts_table[["prompt_id", "text"]].rename(columns={"text": "prompt_text"}),
        on="prompt_id",
        how="inner",
        validate="many_to_one",
    ).merge(texts, on=["attribute_id", "user_id"], how="inner", validate="many_to_one")
    if len(merged) != len(final):
        raise ValueError(
            f"relevance_items: {len(final) - len(merged)} final-round items lack a prompt or "
            "attribute text in the canonical tables"
        )
    chosen = cap_by_groups(merged, "prompt_id", cap, seed, "stage2.relevance")
    return chosen.sort_values(["prompt_id", "user_id", "item_id"], kind="stable").reset_index(
        drop=True
    )


def relevance_requests(
    chosen: pd.DataFrame, prompts: PromptSet, *, params: dict[str, Any], answer_format: str
) -> list[Any]:
    """One request per item (custom id = item id)."""
    from analysis.stages.requests import make_request

    return [
        make_request(
            prompts.render(
                "relevance",
                attribute=truncate(a, 500),
                prompt=truncate(p, 2000),
                answer_format=answer_format,
            ),
            params,
            str(iid),
        )
        for iid, a, p in zip(
            chosen["item_id"], chosen["attribute_text"], chosen["prompt_text"], strict=True
        )
    ]


def relevance_table(
    chosen: pd.DataFrame, outcomes: Sequence[ParsedOutput], model: str
) -> pd.DataFrame:
    """One row per item: ``vote`` (nullable bool; null = parse failure) plus bookkeeping."""
    book = outcome_frame(outcomes)
    if list(book["custom_id"]) != list(chosen["item_id"].astype(str)):
        raise ValueError("relevance_table: outcomes are not in the order of the items")
    table = pd.DataFrame(
        {
            "item_id": chosen["item_id"].astype(str).to_numpy(),
            "user_id": chosen["user_id"].astype(str).to_numpy(),
            "prompt_id": chosen["prompt_id"].astype(str).to_numpy(),
            "attribute_id": chosen["attribute_id"].astype(str).to_numpy(),
            "round": ROUND,
            "model": model,
            "vote": pd.array([o.value for o in outcomes], dtype="boolean"),
        }
    )
    return pd.concat([table, book.drop(columns="custom_id")], axis=1)


def model_votes(table: pd.DataFrame, rater: str) -> list[dict[str, Any]]:
    """Canonical ``relevance_votes`` rows of one model (parsed items only)."""
    parsed = table[table["parse_status"].isin(PARSED)]
    return [
        {
            "item_id": r.item_id,
            "user_id": r.user_id,
            "prompt_id": r.prompt_id,
            "attribute_id": r.attribute_id,
            "rater": rater,
            "rater_kind": "model",
            "raw_rater": r.model,
            "round": r.round,
            "vote": bool(r.vote),
            "graded_label": None,
        }
        for r in parsed.itertuples(index=False)
    ]
