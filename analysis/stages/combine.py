"""The tables the statistics read: imported data plus every workflow model's parsed output.

Each combined table has exactly the canonical columns (``analysis.data.schemas``) and is
validated with the canonical schema, so the statistics cannot tell (and need not care) whether
a rater was imported or run here. Only parsed items enter; failures stay in the per-model
tables and are counted in ``parse_failures``. When no model is configured the imported table
passes through unchanged. A workflow model whose name is also an imported rater (e.g. the
user runs gpt-5.4 with this project's prompts on the real data) is filed as
``<model>@<prompt version>`` so the two never merge.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from analysis.data.schemas import KEYS, make_table, schema
from analysis.provenance import Record
from analysis.stages import judging, relevance, verification
from analysis.stages.parsing import PARSED, count_parse_outcomes

PARSE_FAILURE_COLUMNS = ("model", "stage", "n_calls", "n_repair_calls", "n_repaired", "n_failed")


def rater_name(model: str, imported_raters: Iterable[str], prompt_version: str) -> str:
    """The model's rater id, suffixed with the prompt version if an imported rater has it."""
    return f"{model}@{prompt_version}" if model in set(imported_raters) else model


def _finish(table: str, frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.sort_values(list(KEYS[table]), kind="stable").reset_index(drop=True)
    return schema(table).validate(out, lazy=True)


def _combine(table: str, imported: pd.DataFrame, rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    if not rows:
        return _finish(table, imported)
    added = make_table(table, rows)
    return _finish(table, pd.concat([imported, added], ignore_index=True))


def _combine_raters(
    table: str,
    imported: pd.DataFrame,
    model_tables: Sequence[pd.DataFrame],
    prompt_version: str,
    rows_of: Callable[[pd.DataFrame, str], list[dict[str, Any]]],
) -> pd.DataFrame:
    """Imported rows plus ``rows_of(model table, rater name)`` for each model that has rows."""
    rows: list[dict[str, Any]] = []
    for t in model_tables:
        if len(t):
            name = rater_name(str(t["model"].iloc[0]), imported["rater"], prompt_version)
            rows += rows_of(t, name)
    return _combine(table, imported, rows)


def combine_attribute_judgments(
    imported: pd.DataFrame, verifier_tables: Sequence[pd.DataFrame], prompt_version: str
) -> pd.DataFrame:
    """Human (and imported) judgments plus each verifier's accepted/rejected labels."""
    return _combine_raters(
        "attribute_judgments",
        imported,
        verifier_tables,
        prompt_version,
        lambda t, name: verification.verifier_judgments(t, imported, name),
    )


def combine_relevance_votes(
    imported: pd.DataFrame, vote_tables: Sequence[pd.DataFrame], prompt_version: str
) -> pd.DataFrame:
    """Imported votes (humans, majority, imported models) plus each workflow model's votes."""
    return _combine_raters(
        "relevance_votes", imported, vote_tables, prompt_version, relevance.model_votes
    )


def combine_responses(
    imported: pd.DataFrame, generated_tables: Sequence[pd.DataFrame], prompt_version: str
) -> pd.DataFrame:
    """Imported responses plus each workflow generator's parsed responses."""
    rows: list[dict[str, Any]] = []
    for t in generated_tables:
        parsed = t[t["parse_status"].isin(PARSED)]
        if not len(parsed):
            continue
        model = str(parsed["generator"].iloc[0])
        name = rater_name(model, imported["generator"], prompt_version)
        for r in parsed.itertuples(index=False):
            rows.append(
                {
                    "response_id": r.response_id,
                    "user_id": r.user_id,
                    "prompt_id": r.prompt_id,
                    "generator": name,
                    "raw_generator": model,
                    "condition": r.condition,
                    "text": r.text,
                }
            )
    return _combine("responses", imported, rows)


def combine_preference_ratings(
    imported: pd.DataFrame, judge_tables: Sequence[pd.DataFrame], prompt_version: str
) -> pd.DataFrame:
    """Imported human and model-judge ratings plus each workflow judge's mapped ratings."""
    return _combine_raters(
        "preference_ratings", imported, judge_tables, prompt_version, judging.model_ratings
    )


def parse_failure_table(outputs: Sequence[tuple[str, str, pd.DataFrame]]) -> pd.DataFrame:
    """``PARSE_FAILURE_COLUMNS`` for every (stage, model) table, sorted by stage and model."""
    rows = [count_parse_outcomes(t, model, stage) for stage, model, t in outputs]
    frame = pd.DataFrame(rows, columns=list(PARSE_FAILURE_COLUMNS))
    frame = frame.astype(
        {"model": str, "stage": str, **{c: "int64" for c in PARSE_FAILURE_COLUMNS[2:]}}
    )
    return frame.sort_values(["stage", "model"], kind="stable").reset_index(drop=True)


def call_counts(table: pd.DataFrame, store: str) -> dict[str, int]:
    """``{<store>/<stage>/<model>: calls}`` (items + repair requests) for ``write_records``."""
    return {
        f"{store.rstrip('/')}/{r.stage}/{r.model}": int(r.n_calls + r.n_repair_calls)
        for r in table.itertuples(index=False)
    }


def parse_failure_records(
    table: pd.DataFrame, caveats: Mapping[str, str] | None = None
) -> list[Record]:
    """``parse_failures.<stage>.<model>`` = items whose output stayed unreadable after repair."""
    records = []
    for r in table.itertuples(index=False):
        extra: dict[str, Any] = {
            "n_calls": int(r.n_calls),
            "n_repair_calls": int(r.n_repair_calls),
            "n_repaired": int(r.n_repaired),
            "failure_rate": float(r.n_failed / r.n_calls) if r.n_calls else None,
        }
        if caveats and r.model in caveats:
            extra["caveat"] = caveats[r.model]
        records.append(
            Record(
                key=f"parse_failures.{r.stage}.{r.model}",
                value=int(r.n_failed),
                fmt=",d",
                method=(
                    "items whose output could not be parsed by the strict grammar after at most "
                    "one repair request; recorded as failures, never scored"
                ),
                code="analysis.stages.combine:parse_failure_records",
                n=int(r.n_calls),
                extra=extra,
            )
        )
    return records
