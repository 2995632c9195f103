"""The model-call layer: every call of the study goes through ``run_calls`` and the call store.

- ``models``: ``ModelSpec`` and ``model_from_config`` (the ``models/`` config group)
- ``calls``: ``ChatRequest``, ``CallResult``, ``run_calls``, ``call_key``, ``ReplayMiss``
- ``store``: the committed JSONL call store, its validation and ``usage_summary``
- ``client``: one request through the official ``openai`` client, with our retry policy
  (imported only when a request is made); ``failures``: the errors a call ends with
- ``batch``: the Batch API executor; ``local_server``: the managed llama.cpp server
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from analysis.llm.calls import (
        CallError,
        CallResult,
        ChatRequest,
        ReplayMiss,
        call_key,
        calls_provenance,
        run_calls,
        usage_summary,
    )
    from analysis.llm.models import ModelSpec, model_from_config, models_from_config
    from analysis.llm.store import validate_store

__all__ = [
    "CallError",
    "CallResult",
    "ChatRequest",
    "ModelSpec",
    "ReplayMiss",
    "call_key",
    "calls_provenance",
    "model_from_config",
    "models_from_config",
    "run_calls",
    "usage_summary",
    "validate_store",
]

#: public name -> the submodule defining it. Imported on first use (PEP 562), not with the
#: package: ``analysis.llm.store`` is read by the Snakefile at every parse and by light rule
#: scripts, and importing ``calls`` (openai, httpx) there cost about a second per process.
_HOME = {
    "CallError": "calls",
    "CallResult": "calls",
    "ChatRequest": "calls",
    "ModelSpec": "models",
    "ReplayMiss": "calls",
    "call_key": "calls",
    "calls_provenance": "calls",
    "model_from_config": "models",
    "models_from_config": "models",
    "run_calls": "calls",
    "usage_summary": "calls",
    "validate_store": "store",
}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(importlib.import_module(f"analysis.llm.{_HOME[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
