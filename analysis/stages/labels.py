"""Labels (YES/NO, SUPPORTED/UNSUPPORTED, a 1-5 rating) asked for as one word or as JSON.

A small local model cannot be relied on to answer with one word (SmolLM2-135M mostly starts
"The assistant ..."), so by default (``stages.label_format: json``) a label is asked for as a
JSON object with a schema sent as the response format: on llama.cpp the schema becomes a
grammar, so the reply is always well-formed and the model's choice is what gets measured.
Hosted endpoints receive the same schema as OpenAI ``json_schema``. The plain-word form stays
available for models and comparisons that need it. Either way, the parser is strict.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from analysis.stages.parsing import ParseError, parse_rating, parse_supported, parse_yes_no
from analysis.stages.prompts import LABEL_FORMATS, PromptSet

#: kind -> (JSON key, allowed values, value -> parsed label)
_KINDS: dict[str, tuple[str, tuple[Any, ...], Callable[[Any], Any]]] = {
    "yes_no": ("answer", ("YES", "NO"), lambda v: v == "YES"),
    "supported": ("answer", ("SUPPORTED", "UNSUPPORTED"), lambda v: v == "SUPPORTED"),
    "rating": ("rating", (1, 2, 3, 4, 5), int),
}
_WORD_PARSERS: dict[str, Callable[[str], Any]] = {
    "yes_no": parse_yes_no,
    "supported": parse_supported,
    "rating": parse_rating,
}


def label_schema(kind: str) -> dict[str, Any]:
    """JSON schema of a label reply: one key whose value is one of the allowed values."""
    key, allowed, _ = _KINDS[kind]
    value: dict[str, Any] = {"type": "integer" if kind == "rating" else "string"}
    value["enum"] = list(allowed)
    return {
        "type": "object",
        "properties": {key: value},
        "required": [key],
        "additionalProperties": False,
    }


def parse_json_label(text: str, kind: str) -> Any:
    """``{"answer": "YES"}`` -> True, ``{"rating": 4}`` -> 4; nothing else is accepted."""
    key, allowed, convert = _KINDS[kind]
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        raise ParseError(f'expected a JSON object {{"{key}": ...}}; not valid JSON') from None
    if not isinstance(obj, dict) or set(obj) != {key}:
        raise ParseError(f'expected a JSON object with the single key "{key}"')
    value = obj[key]
    if isinstance(value, bool) or value not in allowed or type(value) is not type(allowed[0]):
        raise ParseError(f'"{key}" must be one of {list(allowed)}, got {value!r}')
    return convert(value)


@dataclass(frozen=True)
class LabelRequest:
    """Everything a step needs to ask for one kind of label in one format."""

    kind: str
    fmt: str
    answer_format: str  # the instruction line rendered into the prompt
    params: dict[str, Any]  # extra request params (the response_format for json)
    parser: Callable[[str], Any]

    def repair_fields(self) -> dict[str, str]:
        return {"answer_format": self.answer_format}


def label_request(kind: str, fmt: str, model: Any, prompts: PromptSet) -> LabelRequest:
    """The instruction, request params and parser of ``kind`` labels in format ``fmt``."""
    from analysis.stages.requests import json_response_format

    if kind not in _KINDS:
        raise ValueError(f"unknown label kind '{kind}'")
    if fmt not in LABEL_FORMATS:
        raise ValueError(f"stages.label_format must be one of {LABEL_FORMATS}, got '{fmt}'")
    if fmt == "json":
        params = {"response_format": json_response_format(model, label_schema(kind), kind)}
        return LabelRequest(
            kind,
            fmt,
            prompts.answer_format(kind, fmt),
            params,
            lambda text: parse_json_label(text, kind),
        )
    return LabelRequest(kind, fmt, prompts.answer_format(kind, fmt), {}, _WORD_PARSERS[kind])
