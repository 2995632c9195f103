"""The default settings of the shipped config, typed: tests start from the YAML defaults
(the only copy of them) and change what they test, instead of relying on dataclass defaults."""

from __future__ import annotations

import copy
import dataclasses
import functools
from typing import Any

from analysis.settings import Config, DataNouns, LlmConfig, PromptsConfig
from analysis.stats.settings import StatsSettings
from analysis.workflow_config import compose_typed


@functools.cache
def _composed() -> Config:
    return compose_typed()[0]


def default_settings() -> Config:
    """A fresh copy of the composed default config (tests may change it freely)."""
    return copy.deepcopy(_composed())


@functools.cache
def _nouns(dataset: str) -> DataNouns:
    overrides = [] if dataset == "bundled" else [f"data={dataset}"]
    return compose_typed(overrides)[0].data.nouns


def dataset_nouns(dataset: str = "bundled") -> DataNouns:
    """The words a dataset's config gives for who is in it (``data.nouns``, the only copy of
    them): the bundled world's (``config/data/bundled.yaml``: simulated raters, simulated chat
    users ...) or the real exports' (``annotation_tool``: people, WildChat users ...); a fresh
    copy."""
    return dataclasses.replace(_nouns(dataset))


def llm_settings(**changes: Any) -> LlmConfig:
    """The shipped ``llm`` group (``config/llm/replay.yaml``) with ``changes`` applied.

    It serves wherever the call layer wants client settings (an ``LlmConfig`` is a
    ``ClientSettings``); ``dataclasses.replace`` runs the same range checks as composition.
    """
    return dataclasses.replace(_composed().llm, **changes)


def prompts_settings() -> PromptsConfig:
    """The shipped prompt templates (``config/prompts/v1.yaml``), typed; a fresh copy."""
    return copy.deepcopy(_composed().prompts)


def stats_settings(**changes: Any) -> StatsSettings:
    """The default statistics settings (seed and caveats included) with ``changes`` applied.

    ``changes`` name keys of the ``stats`` group, ``seed`` and ``caveats`` (model -> note),
    and are checked as a rule's params are.
    """
    cfg = compose_config_plain()
    stats = {**cfg["stats"], **{k: v for k, v in changes.items() if k in cfg["stats"]}}
    rest = {k: v for k, v in changes.items() if k not in cfg["stats"]}
    params = {
        "stats": stats,
        "run.seed": rest.pop("seed", cfg["run"]["seed"]),
        "stages.caveats": dict(rest.pop("caveats", {})),
    }
    if rest:
        raise TypeError(f"unknown statistics settings {sorted(rest)}")
    return StatsSettings.from_rule_params(params)


@functools.cache
def _plain() -> dict[str, Any]:
    return compose_typed()[1]


def compose_config_plain() -> dict[str, Any]:
    """A fresh copy of the composed default config as plain dicts."""
    return copy.deepcopy(_plain())
