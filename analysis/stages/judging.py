"""Stage 3, step 2: judges rate personalized vs generic per relevant attribute (1-5).

A judge imagines being a user with one relevant attribute and compares the two responses to
the prompt. The two are shown as "Reply A" and "Reply B" in a seeded shuffled order: a coin per
(judge, user, prompt, generator), independent of every other pair, so, as for the study's
annotators, one response pair keeps its order across the attributes it is rated for (and the
server's prompt cache can reuse the shared text). The judge answers on the study's 5-point
scale for B vs A. The answer is mapped back so that,
as in the human data, 5 = personalized much better, 3 = no difference, 1 = much worse.
Items humans rated come first when a judge is capped, so its ratings line up with theirs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from analysis.data.vocabulary import RATING_SLOT
from analysis.stages.parsing import PARSED, ParsedOutput, outcome_frame
from analysis.stages.prompts import PromptSet, truncate
from analysis.stages.selection import coin, hash_rank

ROUND = "final"
ITEM_KEY = RATING_SLOT


def to_personalized_scale(raw: int, personalized_first: bool) -> int:
    """Map a rating of "B vs A" (5 = B much better) to "personalized vs generic".

    Personalized shown second (as B): the rating already means personalized vs generic.
    Personalized shown first (as A): the scale is mirrored, 6 - rating.
    """
    if not 1 <= int(raw) <= 5:
        raise ValueError(f"rating {raw} outside 1-5")
    return 6 - int(raw) if personalized_first else int(raw)


def item_key(row: Any) -> str:
    """The id of one rating slot: user, prompt, generator, attribute."""
    return "|".join(str(getattr(row, k)) for k in ITEM_KEY)


def judge_items(
    responses: pd.DataFrame, relevant: pd.DataFrame, ratings: pd.DataFrame
) -> pd.DataFrame:
    """Every rating slot: a (generic, personalized) response pair x one relevant attribute.

    Slots are the human-majority relevant attributes of the pair's (user, prompt), plus any
    attribute humans rated for that pair; ``human_rated`` marks the latter.
    """
    gen = responses[responses["condition"].isin(["generic", "personalized"])]
    wide = gen.pivot_table(
        index=["user_id", "prompt_id", "generator"],
        columns="condition",
        values="response_id",
        aggfunc="first",
    )
    if "generic" not in wide or "personalized" not in wide:
        return pd.DataFrame(
            columns=[*ITEM_KEY, "generic_response_id", "personalized_response_id", "human_rated"]
        )
    wide = wide.dropna(subset=["generic", "personalized"]).reset_index()
    wide.columns.name = None
    wide = wide.rename(
        columns={"generic": "generic_response_id", "personalized": "personalized_response_id"}
    )
    human = ratings[ratings["rater_kind"] == "human"][list(ITEM_KEY)].drop_duplicates()
    slots_rel = wide.merge(relevant, on=["user_id", "prompt_id"], how="inner")
    slots_hum = wide.merge(human, on=["user_id", "prompt_id", "generator"], how="inner")
    slots = pd.concat([slots_rel, slots_hum], ignore_index=True).drop_duplicates(list(ITEM_KEY))
    rated = set(map(tuple, human[list(ITEM_KEY)].astype(str).to_numpy()))
    slots["human_rated"] = [tuple(map(str, k)) in rated for k in slots[list(ITEM_KEY)].to_numpy()]
    return slots.sort_values(list(ITEM_KEY), kind="stable").reset_index(drop=True)


def select_judge_items(items: pd.DataFrame, cap: int | None, seed: int) -> pd.DataFrame:
    """Human-rated slots first, then the rest, each by seeded hash rank; at most ``cap``.

    The ranking is the same for every judge and cap, so a smaller cap (the controls) is a
    prefix of a larger one (the main ratings).
    """
    keys = items.apply(item_key, axis=1) if len(items) else pd.Series([], dtype=str)
    rated = items["human_rated"].to_numpy(dtype=bool) if len(items) else []
    ranked = hash_rank(keys[rated], seed, "stage3.judge") + hash_rank(
        keys[~pd.Series(rated, index=keys.index, dtype=bool)], seed, "stage3.judge"
    )
    if cap is not None:
        ranked = ranked[: max(int(cap), 0)]
    order = {k: i for i, k in enumerate(ranked)}
    chosen = items[keys.isin(order)].assign(_order=keys.map(order))
    return chosen.sort_values("_order").drop(columns="_order").reset_index(drop=True)


def personalized_shown_first(seed: int, judge: str, row: Any) -> bool:
    """The seeded coin deciding the order one judge sees one response pair in."""
    pair = "|".join(str(getattr(row, k)) for k in ITEM_KEY[:3])
    return coin(seed, "stage3.judge.order", judge, pair)


def in_call_order(chosen: pd.DataFrame) -> pd.DataFrame:
    """Slots grouped by response pair, so consecutive calls share their long prefix."""
    return chosen.sort_values(list(ITEM_KEY), kind="stable").reset_index(drop=True)


def judge_messages(
    prompts: PromptSet,
    template: str,
    *,
    prompt: str,
    generic: str,
    personalized: str,
    personalized_first: bool,
    attribute: str | None,
    max_chars: int,
    answer_format: str,
) -> tuple[dict[str, str], ...]:
    """Render one comparison with the two responses in the given order."""
    first, second = (personalized, generic) if personalized_first else (generic, personalized)
    fields = {
        "prompt": truncate(prompt, 2000),
        "response_a": truncate(first, max_chars),
        "response_b": truncate(second, max_chars),
        "answer_format": answer_format,
    }
    if attribute is not None:
        fields["attribute"] = truncate(attribute, 500)
    return prompts.render(template, **fields)


def judge_requests(
    chosen: pd.DataFrame,
    texts: Mapping[str, Mapping[str, str]],
    prompts: PromptSet,
    *,
    judge: str,
    seed: int,
    max_chars: int,
    params: dict[str, Any],
    answer_format: str,
) -> tuple[list[Any], list[bool]]:
    """One request per slot and the order each was shown in (True = personalized first).

    ``texts`` holds ``response`` (response_id -> text), ``prompt`` (prompt_id -> text) and
    ``attribute`` ("attribute_id|user_id" -> text).
    """
    from analysis.stages.requests import make_request

    requests, orders = [], []
    for row in chosen.itertuples(index=False):
        first = personalized_shown_first(seed, judge, row)
        messages = judge_messages(
            prompts,
            "preference_judge",
            prompt=texts["prompt"][row.prompt_id],
            generic=texts["response"][row.generic_response_id],
            personalized=texts["response"][row.personalized_response_id],
            personalized_first=first,
            attribute=texts["attribute"][f"{row.attribute_id}|{row.user_id}"],
            max_chars=max_chars,
            answer_format=answer_format,
        )
        requests.append(make_request(messages, params, item_key(row)))
        orders.append(first)
    return requests, orders


def judge_table(
    chosen: pd.DataFrame, orders: Sequence[bool], outcomes: Sequence[ParsedOutput], model: str
) -> pd.DataFrame:
    """One row per slot: the raw rating (B vs A) and the mapped rating (5 = personalized better)."""
    book = outcome_frame(outcomes)
    raw = [o.value for o in outcomes]
    mapped = [
        to_personalized_scale(r, f) if r is not None else None
        for r, f in zip(raw, orders, strict=True)
    ]
    table = (
        chosen[list(ITEM_KEY)]
        .astype(str)
        .reset_index(drop=True)
        .assign(
            model=model,
            personalized_first=pd.array(list(orders), dtype=bool),
            raw_rating=pd.array(raw, dtype="Int64"),
            rating=pd.array(mapped, dtype="Int64"),
        )
    )
    return pd.concat([table, book.drop(columns="custom_id")], axis=1)


def model_ratings(table: pd.DataFrame, rater: str) -> list[dict[str, Any]]:
    """Canonical ``preference_ratings`` rows of one judge (parsed items only)."""
    parsed = table[table["parse_status"].isin(PARSED)]
    return [
        {
            "user_id": r.user_id,
            "prompt_id": r.prompt_id,
            "generator": r.generator,
            "attribute_id": r.attribute_id,
            "rater": rater,
            "rater_kind": "model",
            "raw_rater": r.model,
            "round": ROUND,
            "rating": int(r.rating),
        }
        for r in parsed.itertuples(index=False)
    ]


def texts_for_judging(
    responses: pd.DataFrame, prompts_table: pd.DataFrame, attributes: pd.DataFrame
) -> dict[str, dict[str, str]]:
    """The lookup tables :func:`judge_requests` renders from."""
    return {
        "response": dict(zip(responses["response_id"], responses["text"], strict=True)),
        "prompt": dict(zip(prompts_table["prompt_id"], prompts_table["text"], strict=True)),
        "attribute": {
            f"{a}|{u}": t
            for a, u, t in zip(
                attributes["attribute_id"], attributes["user_id"], attributes["text"], strict=True
            )
        },
    }
