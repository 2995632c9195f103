"""The model-call layer: every call of the study goes through ``run_calls`` and the call store.

- ``models``: ``ModelSpec`` and ``model_from_config`` (the ``models/`` config group)
- ``calls``: ``ChatRequest``, ``CallResult``, ``run_calls``, ``call_key``, ``ReplayMiss``
- ``store``: the committed JSONL call store, its validation and ``usage_summary``
- ``client``: one request through the official ``openai`` client, with our retry policy
- ``batch``: the Batch API executor; ``local_server``: the managed llama.cpp server
- ``fake_server``: a fault-injecting OpenAI-compatible server for tests and benchmarks
"""

from analysis.llm.calls import (
    CallError,
    CallResult,
    ChatRequest,
    ReplayMiss,
    call_key,
    calls_provenance,
    run_calls,
    run_stage_calls,
    usage_summary,
)
from analysis.llm.models import ModelSpec, model_from_config, models_from_config
from analysis.llm.settings import CallSettings
from analysis.llm.store import validate_store

__all__ = [
    "CallError",
    "CallResult",
    "CallSettings",
    "ChatRequest",
    "ModelSpec",
    "ReplayMiss",
    "call_key",
    "calls_provenance",
    "model_from_config",
    "models_from_config",
    "run_calls",
    "run_stage_calls",
    "usage_summary",
    "validate_store",
]
