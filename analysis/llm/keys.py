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
from typing import Any, NamedTuple

import orjson

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


#: parameter values whose canonical JSON depends only on (type, value): safe to cache by them
_SCALARS = frozenset((str, int, float, bool, type(None)))


class KeyMaker:
    """``key_from_parts`` for many requests of one model and prompt version, byte for byte.

    Replaying a 100k-call set computes 100k keys, so the document is assembled from parts:
    the identity and prompt version are serialized once, the parameters once per distinct
    set, and messages that hold only strings (the common case) by orjson, whose output for
    strings equals the stdlib's compact, non-ASCII-escaping form. Anything else (a float in a
    message, a non-string value) takes the reference path. ``tests/llm/test_keys_models.py``
    checks both agree.
    """

    def __init__(
        self, identity: Mapping[str, Any], defaults: Mapping[str, Any], prompt_version: str
    ) -> None:
        self.identity = normalize_value(dict(identity))
        self.defaults = dict(defaults)
        self.prompt_version = str(prompt_version)
        self._model = canonical_json(self.identity).encode("utf-8")
        self._version = canonical_json(self.prompt_version).encode("utf-8")
        self._params: dict[tuple, tuple[dict[str, Any], bytes]] = {}

    def params(self, overrides: Mapping[str, Any]) -> tuple[dict[str, Any], bytes]:
        """The effective params of a request and their canonical JSON (cached per value set)."""
        values = tuple(overrides.values())
        types = tuple(map(type, values))
        if _SCALARS.issuperset(types):
            cache_key = (tuple(overrides), types, values)
            hit = self._params.get(cache_key)
            if hit is None:
                params = effective_params(self.defaults, overrides)
                hit = self._params[cache_key] = (params, canonical_json(params).encode("utf-8"))
            return hit
        params = effective_params(self.defaults, overrides)
        return params, canonical_json(params).encode("utf-8")

    def key(
        self, messages: Sequence[Mapping[str, Any]], overrides: Mapping[str, Any], sample_index: int
    ) -> str:
        """The key of one request (``overrides``: its own params, before the model's defaults)."""
        return self.asked(messages, overrides, sample_index).key

    def asked(
        self, messages: Sequence[Mapping[str, Any]], overrides: Mapping[str, Any], sample_index: int
    ) -> AskedParts:
        """The key of one request with the parts it was made from (see :class:`AskedParts`)."""
        params, params_json = self.params(overrides)
        text = _strings_only_json(messages)
        if text is None:
            key = key_from_parts(self.identity, messages, params, sample_index, self.prompt_version)
            return AskedParts(key, self._model, params_json, self._version, sample_index, None)
        key = _key_of_json_parts(text, self._model, params_json, self._version, sample_index)
        return AskedParts(
            key, self._model, params_json, self._version, sample_index, list(messages)
        )


class AskedParts(NamedTuple):
    """A request's key and the parts it was hashed from, as the key document holds them: the
    canonical JSON of the model identity, the effective params and the prompt version, the
    sample index, and the messages themselves (as a list, as a record stores them) when they
    hold only strings (else None).

    Replay serves a record only if its stored request hashes to its key. For the record of a
    key just made from these parts, equal parts prove that without hashing again
    (:meth:`StoredKeys.answers`): strings compare exactly, and equal strings-only messages
    have the same canonical JSON whatever the order of their fields. (A named tuple: one is
    made per request replayed, and a frozen dataclass costs several times more to make.)
    """

    key: str
    model: bytes
    params: bytes
    version: bytes
    sample_index: int
    messages: list[Mapping[str, Any]] | None


def _key_of_json_parts(
    messages: bytes, model: bytes, params: bytes, version: bytes, sample_index: int
) -> str:
    """sha256 of the key document assembled from the canonical JSON of its parts (the same
    bytes ``canonical_json(key_document(...))`` gives: its keys in sorted order)."""
    doc = b"".join(
        (
            b'{"messages":',
            messages,
            b',"model":',
            model,
            b',"params":',
            params,
            b',"prompt_version":',
            version,
            b',"sample_index":',
            str(int(sample_index)).encode(),
            b',"schema":',
            str(KEY_SCHEMA).encode(),
            b"}",
        )
    )
    return hashlib.sha256(doc).hexdigest()


class StoredKeys:
    """``key_from_parts`` for the parts a stored record carries, byte for byte, cheaply.

    Replay recomputes the key of every record it serves (a record whose request does not hash
    to its key is refused), so the few distinct model identities, parameter sets and prompt
    versions of a store are serialized canonically once each (looked up by their orjson
    bytes), and strings-only messages go through orjson as in :class:`KeyMaker`.
    """

    #: distinct parts remembered; beyond it they are serialized each time (same result)
    MAX_CACHED = 4096

    def __init__(self) -> None:
        self._canonical: dict[bytes, bytes] = {}
        self._versions: dict[str, bytes] = {}

    def _json(self, value: Any) -> bytes:
        try:
            probe = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except TypeError:  # beyond orjson (e.g. an integer over 64 bits): no cache
            return canonical_json(normalize_value(value)).encode("utf-8")
        hit = self._canonical.get(probe)
        if hit is None:
            hit = canonical_json(normalize_value(value)).encode("utf-8")
            if len(self._canonical) < self.MAX_CACHED:
                self._canonical[probe] = hit
        return hit

    def _version(self, prompt_version: str) -> bytes:
        hit = self._versions.get(prompt_version)
        if hit is None:
            hit = canonical_json(str(prompt_version)).encode("utf-8")
            if len(self._versions) < self.MAX_CACHED:
                self._versions[prompt_version] = hit
        return hit

    def answers(self, record: Mapping[str, Any], asked: AskedParts) -> bool:
        """True when a stored record carries exactly the ``asked`` parts under their key, so its
        request hashes to its key (False says nothing: :meth:`key` then decides)."""
        if asked.messages is None or record["key"] != asked.key:
            return False
        request = record["request"]
        sample = request.get("sample_index", 0)
        return (
            type(sample) is int
            and sample == asked.sample_index
            and request["messages"] == asked.messages
            and self._version(record["prompt_version"]) == asked.version
            and self._json(dict(record["model"])) == asked.model
            and self._json(dict(request["params"])) == asked.params
        )

    def key(
        self,
        identity: Mapping[str, Any],
        messages: Sequence[Mapping[str, Any]],
        params: Mapping[str, Any],
        sample_index: int,
        prompt_version: str,
    ) -> str:
        """The key of these parts (``params``: the effective params, as a record stores them)."""
        text = _strings_only_json(messages)
        if text is None:
            return key_from_parts(identity, messages, params, sample_index, prompt_version)
        return _key_of_json_parts(
            text,
            self._json(dict(identity)),
            self._json(dict(params)),
            self._version(prompt_version),
            sample_index,
        )


def _strings_only_json(messages: Sequence[Mapping[str, Any]]) -> bytes | None:
    """Canonical JSON of messages whose keys and values are all strings; else None."""
    for m in messages:
        if type(m) is not dict:
            return None
        for k, v in m.items():
            if type(k) is not str or type(v) is not str:
                return None
    try:
        return orjson.dumps(messages, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # e.g. a lone surrogate: the reference path raises its own error
        return None
