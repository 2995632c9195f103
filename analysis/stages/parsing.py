"""Strict parsers for every model output, one bounded repair, and counted parse failures.

A model output is read by a small, explicit grammar (one word, one digit, one JSON object of a
fixed shape). An output outside the grammar gets at most one repair request (the original
conversation, the bad output cut to a bounded length, and a one-line instruction naming the
problem). If the repair fails too, the item is a *parse failure*: it keeps its row with
``parse_status = "failed"`` and no value, is counted per model and stage, and never enters a
statistic as if it were a vote. Guessing ("the reply starts with 'Yes,'") would score a model
on our heuristics instead of on its answers.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from analysis.stages.prompts import PromptSet, truncate

#: outcome of one item: parsed first time, parsed after one repair, or a recorded failure
OK = "ok"
REPAIRED = "repaired"
FAILED = "failed"
STATUSES = (OK, REPAIRED, FAILED)
#: the statuses whose row holds a parsed value (what every stage table's analysis keeps)
PARSED = (OK, REPAIRED)

#: the suffix of a repair request's custom id (its key differs anyway: new messages)
REPAIR_SUFFIX = "#repair"


class ParseError(ValueError):
    """An output outside its grammar; the message is short because a repair request quotes it."""


_WORD = r"^\s*\"?\s*({words})\s*\"?\s*\.?\s*$"
_YES_NO = re.compile(_WORD.format(words="yes|no"), re.IGNORECASE)
_SUPPORTED = re.compile(_WORD.format(words="supported|unsupported"), re.IGNORECASE)
_RATING = re.compile(r"^\s*\"?\s*([1-5])\s*\"?\s*\.?\s*$")


def _describe(text: str) -> str:
    text = text.strip()
    if not text:
        return "the reply was empty"
    return f"the reply was {truncate(text, 40)!r}"


def parse_yes_no(text: str) -> bool:
    """``YES`` -> True, ``NO`` -> False; case, surrounding quotes and one final period allowed."""
    m = _YES_NO.match(text or "")
    if not m:
        raise ParseError(f"expected YES or NO; {_describe(text or '')}")
    return m.group(1).lower() == "yes"


def parse_supported(text: str) -> bool:
    """``SUPPORTED`` -> True, ``UNSUPPORTED`` -> False (same tolerance as :func:`parse_yes_no`)."""
    m = _SUPPORTED.match(text or "")
    if not m:
        raise ParseError(f"expected SUPPORTED or UNSUPPORTED; {_describe(text or '')}")
    return m.group(1).lower() == "supported"


def parse_rating(text: str) -> int:
    """A single digit 1-5 (nothing else but whitespace, quotes or a final period)."""
    m = _RATING.match(text or "")
    if not m:
        raise ParseError(f"expected one digit from 1 to 5; {_describe(text or '')}")
    return int(m.group(1))


def parse_response_text(text: str) -> str:
    """A generated response: any non-empty text, kept verbatim (stripped)."""
    if not (text or "").strip():
        raise ParseError("the reply was empty")
    return text.strip()


def parse_attributes_json(text: str, max_attributes: int) -> list[dict[str, Any]]:
    """The extractor's ``{"attributes": [{sentence, reason, confidence}, ...]}`` object.

    Exactly these keys, a non-empty sentence, a string reason, a confidence that is a number in
    [0, 1] (not a bool, not a string), and at most ``max_attributes`` entries.
    """
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, TypeError) as err:
        raise ParseError(f"not valid JSON ({err.msg if hasattr(err, 'msg') else err})") from None
    if not isinstance(obj, dict) or set(obj) != {"attributes"}:
        raise ParseError('expected an object with the single key "attributes"')
    items = obj["attributes"]
    if not isinstance(items, list):
        raise ParseError('"attributes" must be a list')
    if len(items) > max_attributes:
        raise ParseError(f"{len(items)} attributes given, at most {max_attributes} allowed")
    out: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        where = f"attributes[{i}]"
        if not isinstance(item, dict) or set(item) != {"sentence", "reason", "confidence"}:
            raise ParseError(f'{where} must have exactly "sentence", "reason", "confidence"')
        sentence, reason, conf = item["sentence"], item["reason"], item["confidence"]
        if not isinstance(sentence, str) or not sentence.strip():
            raise ParseError(f"{where}.sentence must be a non-empty string")
        if not isinstance(reason, str):
            raise ParseError(f"{where}.reason must be a string")
        if isinstance(conf, bool) or not isinstance(conf, int | float) or not math.isfinite(conf):
            raise ParseError(f"{where}.confidence must be a number")
        if not 0.0 <= float(conf) <= 1.0:
            raise ParseError(f"{where}.confidence {conf} is outside [0, 1]")
        out.append(
            {"sentence": sentence.strip(), "reason": reason.strip(), "confidence": float(conf)}
        )
    return out


@dataclass(frozen=True)
class ParsedOutput:
    """One item's outcome: the parsed value (None on failure) and how it was obtained."""

    custom_id: str
    value: Any
    status: str  # ok | repaired | failed
    error: str  # "" when ok; else the (last) reason the output could not be read
    text: str  # the raw text the value came from (the repair's when repaired)
    call_key: str
    repair_key: str  # "" when no repair was requested


#: ``call(requests) -> results`` in the same order; bound to a model, stage and store
Caller = Callable[[Sequence[Any]], list[Any]]


def repair_request(request: Any, bad_text: str, instruction: str, echo_chars: int) -> Any:
    """The original request plus the malformed reply (cut to ``echo_chars``) and an instruction."""
    messages = (
        *request.messages,
        {"role": "assistant", "content": truncate(bad_text or "", echo_chars)},
        {"role": "user", "content": instruction},
    )
    return dataclasses.replace(
        request, messages=messages, custom_id=f"{request.custom_id}{REPAIR_SUFFIX}"
    )


def call_and_parse(
    requests: Sequence[Any],
    parser: Callable[[str], Any],
    call: Caller,
    *,
    prompts: PromptSet,
    repair_kind: str,
    repair_attempts: int = 1,
    echo_chars: int = 300,
    repair_fields: dict[str, Any] | None = None,
) -> list[ParsedOutput]:
    """Call every request, parse strictly, send one repair batch for the unreadable, then stop.

    A stored answer the call layer already marks unusable (``result.error``, e.g. no content,
    or invalid JSON under a JSON response format) is treated like any unreadable output. Calls
    that fail for good (network, refusals) raise in the call layer instead, so a rerun retries
    them rather than freezing a transient error into a parse failure.
    """
    if repair_attempts not in (0, 1):
        raise ValueError(f"repair_attempts must be 0 or 1, got {repair_attempts}")
    if not requests:
        return []
    results = call(list(requests))
    if len(results) != len(requests):
        raise RuntimeError(
            f"call layer returned {len(results)} results for {len(requests)} requests"
        )
    outcomes: list[ParsedOutput | None] = [None] * len(requests)
    to_repair: list[tuple[int, str]] = []
    for i, (req, res) in enumerate(zip(requests, results, strict=True)):
        text = res.text or ""
        try:
            if res.error:
                raise ParseError(str(res.error))
            outcomes[i] = ParsedOutput(req.custom_id, parser(text), OK, "", text, res.key, "")
        except ParseError as err:
            outcomes[i] = ParsedOutput(req.custom_id, None, FAILED, str(err), text, res.key, "")
            to_repair.append((i, str(err)))
    if repair_attempts and to_repair:
        repairs = [
            repair_request(
                requests[i],
                results[i].text or "",
                prompts.repair(repair_kind, err, **(repair_fields or {})),
                echo_chars,
            )
            for i, err in to_repair
        ]
        repaired = call(repairs)
        for (i, _), res in zip(to_repair, repaired, strict=True):
            first = outcomes[i]
            assert first is not None
            text = res.text or ""
            try:
                if res.error:
                    raise ParseError(str(res.error))
                value = parser(text)
            except ParseError as err:
                outcomes[i] = dataclasses.replace(
                    first, error=f"after repair: {err}", text=text, repair_key=res.key
                )
                continue
            outcomes[i] = ParsedOutput(
                first.custom_id, value, REPAIRED, first.error, text, first.call_key, res.key
            )
    return [o for o in outcomes if o is not None]


def outcome_frame(outcomes: Sequence[ParsedOutput]) -> pd.DataFrame:
    """The bookkeeping columns every model-call table carries, one row per item."""
    return pd.DataFrame(
        {
            "custom_id": [o.custom_id for o in outcomes],
            "parse_status": [o.status for o in outcomes],
            "parse_error": [o.error for o in outcomes],
            "raw_text": [o.text for o in outcomes],
            "call_key": [o.call_key for o in outcomes],
            "repair_key": [o.repair_key for o in outcomes],
        },
        dtype="object",
    ).astype(str)


def count_parse_outcomes(table: pd.DataFrame, model: str, stage: str) -> dict[str, Any]:
    """Counts of one model-call table: items, repair requests, repaired, failed."""
    status = table["parse_status"] if len(table) else pd.Series([], dtype=str)
    unknown = sorted(set(status) - set(STATUSES))
    if unknown:
        raise ValueError(f"{stage}/{model}: unknown parse_status value(s) {unknown}")
    repair_calls = int((table["repair_key"] != "").sum()) if len(table) else 0
    return {
        "model": model,
        "stage": stage,
        "n_calls": int(len(table)),
        "n_repair_calls": repair_calls,
        "n_repaired": int((status == REPAIRED).sum()),
        "n_failed": int((status == FAILED).sum()),
    }
