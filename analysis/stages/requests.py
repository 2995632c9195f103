"""Building chat requests and calling a model through the call layer, shared by all stages.

Structured output is asked for in the form each backend understands: OpenAI-style
``json_schema`` for hosted endpoints, llama.cpp's ``json_object`` + ``schema`` (a grammar) for a
local llama.cpp server, whose ``json_schema`` support is missing. The form is part of the
request parameters and therefore of the call key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.llm.calls import CallResult, ChatRequest, resolve_store, run_calls
from analysis.llm.models import ModelSpec
from analysis.settings import ClientSettings, LlmConfig
from analysis.stages.prompts import Message


def make_request(
    messages: Sequence[Message], params: Mapping[str, Any], custom_id: str
) -> ChatRequest:
    """One request; ``params`` are per-request overrides (max_tokens, response_format)."""
    return ChatRequest(messages=tuple(messages), params=dict(params), custom_id=custom_id)


def json_response_format(model: ModelSpec, schema: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The ``response_format`` asking ``model`` for JSON that follows ``schema``."""
    if model.server is not None and model.server.get("kind") == "llama_cpp":
        return {"type": "json_object", "schema": dict(schema)}
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": dict(schema), "strict": True},
    }


@dataclass(frozen=True)
class ModelCaller:
    """``call(requests)`` bound to one model, stage and store: what the parsing loop needs."""

    model: ModelSpec
    stage: str
    store: Path
    mode: str
    prompt_version: str
    settings: ClientSettings
    shard: str = "0"
    overrides: str | None = None
    executor: str = "direct"  # llm.executor: direct requests, or one Batch API batch per call set

    def __call__(self, requests: Sequence[ChatRequest]) -> list[CallResult]:
        if not requests:
            return []
        return run_calls(
            self.model,
            list(requests),
            stage=self.stage,
            store=self.store,
            mode=self.mode,
            shard=self.shard,
            prompt_version=self.prompt_version,
            settings=self.settings,
            overrides=self.overrides,
            executor=self.executor,
            progress=False,
        )


def caller_from_config(
    model: ModelSpec,
    llm: LlmConfig,
    *,
    stage: str,
    prompt_version: str,
    overrides: str | None = None,
    shard: str = "0",
) -> ModelCaller:
    """A :class:`ModelCaller` for ``model`` from the run's typed ``llm`` settings.

    ``llm`` must be the whole group, runtime-only keys included (``executor``, timeouts: a
    rule's params leave them out, :func:`analysis.workflow_config.runtime_keys` adds them
    back before the glue types them); without ``executor`` a run would silently make direct
    calls where the user asked for a batch. A relative ``llm.store`` is relative to the
    repository, not the cwd.
    """
    return ModelCaller(
        model=model,
        stage=stage,
        store=resolve_store(llm.store),
        mode=str(llm.mode),
        prompt_version=prompt_version,
        settings=llm,
        shard=shard,
        overrides=overrides,
        executor=str(llm.executor),
    )
