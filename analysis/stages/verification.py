"""Stage 1, step 3: an LLM verifier labels each stage-1 attribute supported or unsupported.

The verifier sees the user's conversations, the attribute and its stated reason, and answers
SUPPORTED or UNSUPPORTED. Its labels enter ``attribute_judgments`` as a model rater
(supported -> accepted, unsupported -> rejected) so they can be compared with human
acceptance in the same round. Attributes whose user has no conversation text are not sent:
a verdict without evidence would measure the verifier's prior, not the attribute.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from analysis.stages.parsing import PARSED, ParsedOutput, outcome_frame
from analysis.stages.prompts import PromptSet, format_conversation, truncate
from analysis.stages.selection import hash_rank


def select_attributes(
    attributes: pd.DataFrame,
    judgments: pd.DataFrame,
    conversations: pd.DataFrame,
    cap: int | None,
    seed: int,
) -> pd.DataFrame:
    """Stage-1 attributes a verifier sees: human-judged ones first, each group by hash rank.

    Only attributes whose user has conversation text qualify. Human-judged attributes come
    first because the verifier's labels are compared with human acceptance.
    """
    with_text = set(
        conversations.loc[conversations["text"].fillna("").str.strip() != "", "user_id"].astype(str)
    )
    pool = attributes[(attributes["set"] == "stage1") & attributes["user_id"].isin(with_text)]
    pool = pool.drop_duplicates("attribute_id")
    judged = set(judgments.loc[judgments["rater_kind"] == "human", "attribute_id"].astype(str))
    ids = pool["attribute_id"].astype(str)
    ranked = hash_rank(ids[ids.isin(judged)], seed, "stage1.verification") + hash_rank(
        ids[~ids.isin(judged)], seed, "stage1.verification"
    )
    if cap is not None:
        ranked = ranked[: max(int(cap), 0)]
    chosen = pool[ids.isin(set(ranked))]
    # in call order: one user's attributes together, so the shared conversations are cached
    return chosen.sort_values(["user_id", "attribute_id"], kind="stable").reset_index(drop=True)


def user_evidence(conversations: pd.DataFrame, user_id: str, max_chars: int) -> str:
    """All of a user's conversations, each cut to an equal share of ``max_chars``."""
    conv = conversations[conversations["user_id"] == user_id]
    ids = sorted(conv["conversation_id"].astype(str).unique())
    share = max(max_chars // max(len(ids), 1), 200)
    blocks = [
        f"[Conversation {k + 1}]\n"
        + format_conversation(conv[conv["conversation_id"] == cid], share)
        for k, cid in enumerate(ids)
    ]
    return "\n\n".join(blocks)


def verification_requests(
    chosen: pd.DataFrame,
    conversations: pd.DataFrame,
    prompts: PromptSet,
    *,
    max_chars: int,
    params: dict[str, Any],
    answer_format: str,
) -> list[Any]:
    """One request per chosen attribute (custom id = attribute id)."""
    from analysis.stages.requests import make_request

    evidence: dict[str, str] = {}
    requests = []
    for aid, uid, text, reason in zip(
        chosen["attribute_id"], chosen["user_id"], chosen["text"], chosen["reason"], strict=True
    ):
        uid = str(uid)
        if uid not in evidence:
            evidence[uid] = user_evidence(conversations, uid, max_chars)
        messages = prompts.render(
            "verification",
            conversations=evidence[uid],
            attribute=truncate(str(text), 500),
            reason=truncate(str(reason) if isinstance(reason, str) else "(none given)", 500),
            answer_format=answer_format,
        )
        requests.append(make_request(messages, params, str(aid)))
    return requests


def verification_table(
    chosen: pd.DataFrame, outcomes: Sequence[ParsedOutput], model: str
) -> pd.DataFrame:
    """One row per attribute: ``supported`` (nullable bool; null = parse failure)."""
    book = outcome_frame(outcomes)
    if list(book["custom_id"]) != list(chosen["attribute_id"].astype(str)):
        raise ValueError("verification_table: outcomes are not in the order of the attributes")
    table = pd.DataFrame(
        {
            "attribute_id": chosen["attribute_id"].astype(str).to_numpy(),
            "user_id": chosen["user_id"].astype(str).to_numpy(),
            "model": model,
            "supported": pd.array([o.value for o in outcomes], dtype="boolean"),
        }
    )
    return pd.concat([table, book.drop(columns="custom_id")], axis=1)


def verifier_judgments(
    table: pd.DataFrame, human_judgments: pd.DataFrame, rater: str
) -> list[dict[str, Any]]:
    """Canonical ``attribute_judgments`` rows of one verifier (parsed items only).

    A model label is filed under every round in which humans judged the attribute (rounds
    are never pooled), and under ``final`` when no human did.
    """
    humans = human_judgments[human_judgments["rater_kind"] == "human"]
    rounds = humans.groupby("attribute_id")["round"].apply(lambda s: sorted(set(s))).to_dict()
    rows = []
    parsed = table[table["parse_status"].isin(PARSED)]
    for aid, uid, model, supported in zip(
        parsed["attribute_id"],
        parsed["user_id"],
        parsed["model"],
        parsed["supported"],
        strict=True,
    ):
        for rnd in rounds.get(aid, ["final"]):
            rows.append(
                {
                    "attribute_id": str(aid),
                    "user_id": str(uid),
                    "rater": rater,
                    "rater_kind": "model",
                    "raw_rater": str(model),
                    "round": rnd,
                    "label": "accepted" if bool(supported) else "rejected",
                    "note": None,
                    "flag_reason": None,
                }
            )
    return rows
