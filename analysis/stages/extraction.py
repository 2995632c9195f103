"""Stage 1, step 1: each extractor turns one conversation into attributes of its user.

An attribute is one sentence about the user with a reason (the evidence) and a confidence in
[0, 1], asked for as JSON of a fixed schema. The output table has one row per conversation
(with the parse bookkeeping), the attributes as a JSON list; :mod:`analysis.stages.merging`
unpacks and merges them per user.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pandas as pd

from analysis.stages.parsing import ParsedOutput, outcome_frame, parse_attributes_json
from analysis.stages.prompts import PromptSet, format_conversation
from analysis.stages.selection import ranked_subset

#: JSON schema of one extraction answer (sent as the response format where supported)
EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "attributes": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "sentence": {"type": "string"},
                    "reason": {"type": "string"},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                },
                "required": ["sentence", "reason", "confidence"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["attributes"],
    "additionalProperties": False,
}


def conversations_with_text(conversations: pd.DataFrame) -> pd.DataFrame:
    """``conversation_id, user_id`` of conversations with at least one non-empty user turn.

    The real snapshot's WildChat users have empty conversations (a bug of the tool at the
    time); extracting from nothing would only measure a model's inventiveness.
    """
    has_text = conversations["text"].fillna("").str.strip() != ""
    usable = conversations[has_text & (conversations["role"] == "user")]
    return (
        usable[["conversation_id", "user_id"]]
        .drop_duplicates("conversation_id")
        .sort_values("conversation_id", kind="stable")
        .reset_index(drop=True)
    )


def select_conversations(conversations: pd.DataFrame, cap: int | None, seed: int) -> pd.DataFrame:
    """The capped, seeded subset of usable conversations an extractor sees (by hash rank)."""
    usable = conversations_with_text(conversations)
    chosen = ranked_subset(usable["conversation_id"], cap, seed, "stage1.extraction")
    return usable[usable["conversation_id"].isin(chosen)].reset_index(drop=True)


def extraction_requests(
    conversations: pd.DataFrame,
    chosen: pd.DataFrame,
    prompts: PromptSet,
    *,
    max_chars: int,
    max_attributes: int,
    params: dict[str, Any],
) -> list[Any]:
    """One request per chosen conversation (custom id = conversation id), in chosen order."""
    from analysis.stages.requests import make_request

    turns = {cid: g for cid, g in conversations.groupby("conversation_id", sort=False)}
    requests = []
    for cid in chosen["conversation_id"]:
        messages = prompts.render(
            "extraction",
            conversation=format_conversation(turns[cid], max_chars),
            max_attributes=max_attributes,
        )
        requests.append(make_request(messages, params, str(cid)))
    return requests


def extraction_parser(max_attributes: int):
    """The strict parser of one extraction answer, bound to the attribute limit."""

    def parse(text: str) -> list[dict[str, Any]]:
        return parse_attributes_json(text, max_attributes)

    return parse


def extraction_table(
    chosen: pd.DataFrame, outcomes: Sequence[ParsedOutput], model: str
) -> pd.DataFrame:
    """One row per conversation: its attributes as JSON (``null`` when parsing failed)."""
    book = outcome_frame(outcomes)
    if list(book["custom_id"]) != list(chosen["conversation_id"].astype(str)):
        raise ValueError("extraction_table: outcomes are not in the order of the conversations")
    values = [o.value for o in outcomes]
    table = pd.DataFrame(
        {
            "conversation_id": chosen["conversation_id"].astype(str).to_numpy(),
            "user_id": chosen["user_id"].astype(str).to_numpy(),
            "model": model,
            "n_attributes": pd.array(
                [len(v) if v is not None else None for v in values], dtype="Int64"
            ),
            "attributes_json": pd.array(
                [json.dumps(v, sort_keys=True) if v is not None else None for v in values],
                dtype="str",
            ),
        }
    )
    return pd.concat([table, book.drop(columns="custom_id")], axis=1)
