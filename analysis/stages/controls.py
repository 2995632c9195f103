"""Stage 3 controls the field lacks: no context, a mismatched profile, and swapped order.

All three reuse the main judging items (a prefix of the same seeded ranking) and the same
judge prompt family, changing one thing each:

- ``no_context``: the judge sees no attribute at all. If it still prefers the personalized
  response, its preference is about something other than fit to the person (length, tone).
- ``mismatched_profile``: the attribute shown is another user's relevant attribute (seeded
  choice). A judge that rewards fit should like the personalized response less here.
- ``swapped_order``: the same slot with the two responses in the other order. Position
  consistency is the share of slots whose mapped rating is the same in both orders.

Without an attribute, the no-context request is the same for every slot of one response
pair; the call layer makes it once, and the one answer counts for each of the pair's slots.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from analysis.provenance import Record
from analysis.seeds import stable_hash
from analysis.stages.judging import (
    ITEM_KEY,
    item_key,
    judge_messages,
    personalized_shown_first,
    to_personalized_scale,
)
from analysis.stages.parsing import ParsedOutput, outcome_frame
from analysis.stages.prompts import PromptSet
from analysis.stats.control_effects import control_records
from analysis.stats.settings import StatsSettings

CONTROLS = ("no_context", "mismatched_profile", "swapped_order")

CONTROL_COLUMNS = (
    "control",
    "user_id",
    "prompt_id",
    "generator",
    "attribute_id",
    "model",
    "shown_attribute_id",
    "shown_user_id",
    "personalized_first",
    "raw_rating",
    "rating",
)


def mismatched_attributes(
    items: pd.DataFrame, pool: pd.DataFrame, seed: int
) -> list[tuple[str, str]]:
    """For each slot, another user's attribute ``(attribute_id, user_id)`` from ``pool``.

    ``pool`` has ``user_id, attribute_id`` (the relevant attributes of every user). The pick
    is the candidate of a different user with the smallest seeded hash for this slot: stable
    under changes to the other slots.
    """
    cand = pool[["attribute_id", "user_id"]].drop_duplicates().astype(str)
    cand_keys = [f"{a}|{u}" for a, u in zip(cand["attribute_id"], cand["user_id"], strict=True)]
    cand_users = cand["user_id"].to_numpy()
    out = []
    for row in items.itertuples(index=False):
        others = np.flatnonzero(cand_users != str(row.user_id))
        if not len(others):
            raise ValueError("mismatched_profile needs attributes of at least two users")
        slot = item_key(row)
        hashes = [stable_hash(seed, "stage3.controls.mismatch", slot, cand_keys[i]) for i in others]
        pick = others[int(np.argmin(hashes))]
        out.append((str(cand["attribute_id"].iloc[pick]), str(cand["user_id"].iloc[pick])))
    return out


def control_requests(
    chosen: pd.DataFrame,
    control: str,
    texts: Mapping[str, Mapping[str, str]],
    prompts: PromptSet,
    *,
    judge: str,
    seed: int,
    max_chars: int,
    params: dict[str, Any],
    answer_format: str,
    pool: pd.DataFrame | None = None,
) -> tuple[list[Any], pd.DataFrame]:
    """Requests of one control and the matching rows (order shown, attribute shown)."""
    from analysis.stages.requests import make_request

    if control not in CONTROLS:
        raise ValueError(f"unknown control '{control}'; known: {CONTROLS}")
    shown: list[tuple[str | None, str | None]]
    if control == "mismatched_profile":
        if pool is None:
            raise ValueError("mismatched_profile needs the pool of relevant attributes")
        shown = list(mismatched_attributes(chosen, pool, seed))
    elif control == "no_context":
        shown = [(None, None)] * len(chosen)
    else:
        shown = [(str(r.attribute_id), str(r.user_id)) for r in chosen.itertuples(index=False)]
    requests, rows = [], []
    for row, (aid, uid) in zip(chosen.itertuples(index=False), shown, strict=True):
        first = personalized_shown_first(seed, judge, row)
        if control == "swapped_order":
            first = not first
        messages = judge_messages(
            prompts,
            "no_context_judge" if control == "no_context" else "preference_judge",
            prompt=texts["prompt"][row.prompt_id],
            generic=texts["response"][row.generic_response_id],
            personalized=texts["response"][row.personalized_response_id],
            personalized_first=first,
            attribute=None if aid is None else texts["attribute"][f"{aid}|{uid}"],
            max_chars=max_chars,
            answer_format=answer_format,
        )
        requests.append(make_request(messages, params, f"{control}|{item_key(row)}"))
        rows.append(
            {
                "control": control,
                **{k: str(getattr(row, k)) for k in ITEM_KEY},
                "model": judge,
                "shown_attribute_id": aid,
                "shown_user_id": uid,
                "personalized_first": first,
            }
        )
    return requests, pd.DataFrame(rows, columns=list(CONTROL_COLUMNS[:-2]))


def control_table(rows: pd.DataFrame, outcomes: Sequence[ParsedOutput]) -> pd.DataFrame:
    """Rows of one control with raw and mapped ratings plus bookkeeping."""
    book = outcome_frame(outcomes)
    raw = [o.value for o in outcomes]
    mapped = [
        to_personalized_scale(r, f) if r is not None else None
        for r, f in zip(raw, rows["personalized_first"], strict=True)
    ]
    table = rows.reset_index(drop=True).assign(
        raw_rating=pd.array(raw, dtype="Int64"), rating=pd.array(mapped, dtype="Int64")
    )
    return pd.concat([table, book.drop(columns="custom_id")], axis=1)


def combine_controls(
    models: Sequence[str],
    control_tables: Sequence[pd.DataFrame],
    judged_tables: Sequence[pd.DataFrame],
    *,
    stats: StatsSettings,
) -> tuple[pd.DataFrame, list[Record]]:
    """Every judge's control rows in one table (sorted) and each judge's control records."""
    records: list[Record] = []
    for model, ctl, main in zip(models, control_tables, judged_tables, strict=True):
        records += control_records(main, ctl, judge=model, settings=stats)
    frames = [t for t in control_tables if len(t)]
    if frames:
        table = pd.concat(frames, ignore_index=True)
    else:
        table = control_table(pd.DataFrame(columns=list(CONTROL_COLUMNS[:-2])), [])
    order = ["control", "model", *ITEM_KEY]
    return table.sort_values(order, kind="stable").reset_index(drop=True), records
