"""Content addresses of model calls.

A call's key is the sha256 of one canonical JSON document holding everything that can change
the answer: the model identity, every message, every effective generation parameter, the
sample index and the prompt version. The store keeps these parts in each record, so
``recenter calls --validate`` can recompute every key and catch a record filed under the
wrong one.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

#: bumped only if the key document's layout changes (it would orphan every stored call)
KEY_SCHEMA = 1


def normalize_value(value: Any) -> Any:
    """Canonical form of a JSON-like value: integral floats become ints, tuples lists.

    ``temperature: 0`` and ``temperature: 0.0`` mean the same request and must share a key;
    YAML and Python produce either spelling. (Exact type checks first: this runs for every
    message of every call when a 100k-call set is replayed.)
    """
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        if not math.isfinite(value):
            raise ValueError(f"non-finite number {value!r} in a call request")
        return int(value) if value.is_integer() else value
    if kind is dict:
        return {str(k): normalize_value(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [normalize_value(v) for v in value]
    if isinstance(value, bool | int | str):  # subclasses (e.g. IntEnum, numpy via int())
        return value
    if isinstance(value, float):
        return normalize_value(float(value))
    if isinstance(value, Mapping):
        return {str(k): normalize_value(v) for k, v in value.items()}
    if isinstance(value, Sequence):
        return [normalize_value(v) for v in value]
    raise TypeError(f"value of type {type(value).__name__} cannot be part of a call request")


def effective_params(defaults: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters actually sent: model defaults, overridden per request; ``None`` = unset."""
    merged = {**dict(defaults), **dict(overrides)}
    return {k: normalize_value(v) for k, v in sorted(merged.items()) if v is not None}


def canonical_json(value: Any) -> str:
    """Compact, key-sorted, ASCII-safe JSON: the same document always gives the same bytes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def key_document(
    identity: Mapping[str, Any],
    messages: Sequence[Mapping[str, Any]],
    params: Mapping[str, Any],
    sample_index: int,
    prompt_version: str,
) -> dict[str, Any]:
    """The document hashed into a call key (``params`` must already be effective params)."""
    return {
        "schema": KEY_SCHEMA,
        "model": normalize_value(dict(identity)),
        "messages": [normalize_value(dict(m)) for m in messages],
        "params": normalize_value(dict(params)),
        "sample_index": int(sample_index),
        "prompt_version": str(prompt_version),
    }


def key_from_parts(
    identity: Mapping[str, Any],
    messages: Sequence[Mapping[str, Any]],
    params: Mapping[str, Any],
    sample_index: int,
    prompt_version: str,
) -> str:
    """sha256 hex digest of the key document."""
    doc = key_document(identity, messages, params, sample_index, prompt_version)
    return hashlib.sha256(canonical_json(doc).encode("utf-8")).hexdigest()
