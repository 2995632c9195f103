"""Valid call-store records made without an endpoint, for tests that write shards by hand.

Each record is what recording would store for ``request(i)`` (its key is that request's key,
its line carries its digest), so replay serves it; a test then changes what it means to test.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from analysis.llm.calls import ChatRequest, PendingCall, call_key, make_record
from analysis.llm.keys import effective_params
from analysis.llm.models import ModelSpec
from analysis.llm.store import record_line

#: a model that is never called (nothing listens on port 9)
MODEL = ModelSpec("m", "http://127.0.0.1:9/v1", None, {"temperature": 0.0})
PROMPT_VERSION = "v1"


def request(i: int) -> ChatRequest:
    return ChatRequest.from_prompt(f"q{i}", custom_id=f"c{i}")


def key_of(i: int, model: ModelSpec = MODEL) -> str:
    return call_key(model, request(i), PROMPT_VERSION)


def record(
    i: int,
    answer: str | None = None,
    *,
    model: ModelSpec = MODEL,
    stage: str = "s",
    revision: int = 0,
    created: str = "2026-01-01T00:00:00.000000+00:00",
    response: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The record of ``request(i)`` answered with ``answer`` (default ``answer <i>``)."""
    req = request(i)
    call = PendingCall(
        call_key(model, req, PROMPT_VERSION),
        req,
        effective_params(model.params, req.params),
        revision,
    )
    body = dict(
        response
        or {
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": answer or f"answer {i}"}}
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
        }
    )
    rec = make_record(
        model,
        call,
        stage=stage,
        prompt_version=PROMPT_VERSION,
        response=body,
        latency_s=0.1,
        executor="direct",
    )
    rec["created"] = created  # fixed, so that the same record gives the same bytes
    return rec


def lines(records: Iterable[Mapping[str, Any]]) -> bytes:
    """The store lines of ``records``, as the writer writes them (digest first)."""
    return b"".join(record_line(r) for r in records)


def write_shard(path: Path, records: Iterable[Mapping[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(lines(records))
    return path


def replay(store: Path, indices: Iterable[int], model: ModelSpec = MODEL, stage: str = "s"):
    """``run_calls`` in replay mode for ``request(i)`` of every ``i``."""
    from analysis.llm.calls import run_calls
    from tests.settings_defaults import llm_settings

    return run_calls(
        model,
        [request(i) for i in indices],
        stage=stage,
        store=store,
        prompt_version=PROMPT_VERSION,
        progress=False,
        settings=llm_settings(),
    )
