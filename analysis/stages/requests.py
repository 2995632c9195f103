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

from analysis.llm.calls import CallResult, ChatRequest, run_calls
from analysis.llm.models import ModelSpec
from analysis.llm.settings import CallSettings
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
    settings: CallSettings | None = None
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


def store_path(store: str | Path) -> Path:
    """The call store folder: relative paths are relative to the repository, not the cwd."""
    from analysis import REPO_ROOT

    path = Path(store)
    return path if path.is_absolute() else REPO_ROOT / path


def caller_from_config(
    model_name: str,
    model_cfg: Mapping[str, Any],
    llm_cfg: Mapping[str, Any],
    *,
    stage: str,
    prompt_version: str,
    overrides: str | None = None,
    shard: str = "0",
) -> ModelCaller:
    """A :class:`ModelCaller` from the ``models.<name>`` and ``llm`` config subtrees.

    ``llm_cfg`` must hold the runtime-only keys too (``executor``, timeouts: a rule's params
    leave them out, :func:`analysis.workflow_config.runtime_llm_keys` adds them back); without
    ``executor`` a run would silently make direct calls where the user asked for a batch.
    """
    from analysis.llm.models import model_from_config

    return ModelCaller(
        model=model_from_config(model_name, dict(model_cfg)),
        stage=stage,
        store=store_path(llm_cfg["store"]),
        mode=str(llm_cfg["mode"]),
        prompt_version=prompt_version,
        settings=CallSettings.from_config(llm_cfg),
        shard=shard,
        overrides=overrides,
        executor=str(llm_cfg["executor"]),
    )
