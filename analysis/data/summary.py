"""Dataset size records: how many users, items and judgments a dataset holds.

The paper's data section states sizes (conversations; human judgments in stages 1 / 2 / 3;
the study's own counts are entries of ``config/study/published.yaml``). These records compute
them from the canonical tables, so the paper prints what the data hold. Human judgments count the ``final`` round; pilot rounds get
their own keys. A count of zero is left out (absent key), never written as 0.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from analysis.provenance import Record

_CODE = "analysis.data.summary:dataset_size_records"
#: what each count counts (a record's ``unit``), by the key's second part (``data.n_<what>``)
UNITS = {
    "n_users": "users",
    "n_conversations": "conversations",
    "n_attributes": "attributes",
    "n_prompts": "prompts",
    "n_pairs": "pairs",
    "n_responses": "responses",
    "n_judgments": "judgments",
    "n_majority_labels": "labels",
    "n_model_votes": "votes",
    "n_model_ratings": "ratings",
    "n_relevance_items": "items",
}


def _count(key: str, value: int, method: str) -> Record | None:
    if value <= 0:
        return None
    unit = UNITS[key.split(".")[1]]
    return Record(key=key, value=int(value), fmt=",d", method=method, code=_CODE, unit=unit)


def dataset_size_records(tables: Mapping[str, pd.DataFrame]) -> list[Record]:
    """Counts of the canonical tables as records (keys ``data.*``, sorted)."""
    users = tables["users"]
    attrs = tables["attributes"]
    items = tables["relevance_items"]
    votes = tables["relevance_votes"]
    judgments = tables["attribute_judgments"]
    ratings = tables["preference_ratings"]
    responses = tables["responses"]

    stage1 = judgments[(judgments["rater_kind"] == "human") & (judgments["round"] == "final")]
    stage2 = votes[(votes["rater_kind"] == "human") & (votes["round"] == "final")]
    stage3 = ratings[(ratings["rater_kind"] == "human") & (ratings["round"] == "final")]
    final_items = items[items["round"] == "final"]
    conversations = tables["conversations"]
    real_users = users.loc[users["source_kind"] == "real", "user_id"]

    specs: list[tuple[str, int, str]] = [
        ("data.n_users", len(users), "users in the canonical users table"),
        ("data.n_users.real", int((users["source_kind"] == "real").sum()), "users of source kind real (chat-history users; stand-ins in a simulated dataset)"),
        (
            "data.n_users.synthetic",
            int((users["source_kind"] == "synthetic").sum()),
            "users from synthetic benchmarks",
        ),
        (
            "data.n_users.stage1",
            attrs.loc[attrs["set"] == "stage1", "user_id"].nunique(),
            "users whose extracted attributes were shown in stage 1",
        ),
        (
            "data.n_conversations",
            conversations["conversation_id"].nunique(),
            "conversations with at least one turn",
        ),
        (
            "data.n_conversations.real",
            conversations.loc[
                conversations["user_id"].isin(real_users), "conversation_id"
            ].nunique(),
            "conversations of users of source kind real (chat-history users; stand-ins in a simulated dataset)",
        ),
        (
            "data.n_attributes.stage1",
            int((attrs["set"] == "stage1").sum()),
            "merged attributes of stage-1 users",
        ),
        (
            "data.n_attributes.stage2",
            int((attrs["set"] == "stage2").sum()),
            "profile attributes of stage-2 users",
        ),
        ("data.n_prompts", len(tables["prompts"]), "prompts referenced by any stage"),
        (
            "data.n_pairs.final",
            len(final_items[["user_id", "prompt_id"]].drop_duplicates()),
            "(user, prompt) pairs of the final stage-2 study",
        ),
        ("data.n_responses", len(responses), "generated responses (all conditions)"),
        (
            "data.n_judgments.stage1",
            len(stage1),
            "human attribute judgments, final round",
        ),
        ("data.n_judgments.stage2", len(stage2), "human relevance votes, final round"),
        ("data.n_judgments.stage3", len(stage3), "human preference ratings, final round"),
        (
            "data.n_judgments.total",
            len(stage1) + len(stage2) + len(stage3),
            "human judgments of the final rounds, all stages",
        ),
        (
            "data.n_majority_labels.final",
            int(((votes["rater_kind"] == "human_majority") & (votes["round"] == "final")).sum()),
            "published human-majority relevance labels, final round",
        ),
        (
            "data.n_model_votes.final",
            int(((votes["rater_kind"] == "model") & (votes["round"] == "final")).sum()),
            "model relevance votes, final round",
        ),
        (
            "data.n_model_ratings.stage3",
            int((ratings["rater_kind"] == "model").sum()),
            "model-judge preference ratings",
        ),
    ]
    for round_ in sorted(items["round"].unique()):
        specs.append(
            (
                f"data.n_relevance_items.{round_}",
                int((items["round"] == round_).sum()),
                f"(user, prompt, attribute) items of stage-2 round {round_}",
            )
        )
    for round_ in sorted(set(judgments["round"]) - {"final"}):
        specs.append(
            (
                f"data.n_judgments.stage1.{round_}",
                int(((judgments["round"] == round_) & (judgments["rater_kind"] == "human")).sum()),
                f"human attribute judgments, round {round_}",
            )
        )
    for round_ in sorted(set(votes["round"]) - {"final"}):
        specs.append(
            (
                f"data.n_judgments.stage2.{round_}",
                int(((votes["round"] == round_) & (votes["rater_kind"] == "human")).sum()),
                f"human relevance votes, round {round_}",
            )
        )
    records = [r for key, value, method in specs if (r := _count(key, value, method))]
    return sorted(records, key=lambda r: r.key)
