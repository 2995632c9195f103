"""Glue shared by the stage rule scripts: config subtrees back to nested dicts, model steps.

Rules receive config as ``subtree(CFG, "stages.stage2", "prompts", ...)``: flat dotted keys,
so that a change to one stage's settings reruns only that stage's rules. The step functions
want the nested shape; :func:`nested` rebuilds it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.stages.prompts import PromptSet


def nested(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``{"a.b": 1, "a.c": 2, "d": 3}`` -> ``{"a": {"b": 1, "c": 2}, "d": 3}``."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        node = out
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return out


def stage_models(cfg: Mapping[str, Any], stage: str, role: str) -> list[str]:
    """Models of one step: ``stages.<stage>.<role>``, or every model of ``models`` when null."""
    from analysis.workflow_config import ConfigError

    configured = sorted(cfg["models"] or {})
    chosen = cfg["stages"][stage][role]
    if chosen is None:
        return configured
    unknown = sorted(set(chosen) - set(configured))
    if unknown:
        raise ConfigError(
            f"stages.{stage}.{role} names {unknown}, which are not in the models group "
            f"(configured: {configured})"
        )
    return sorted(chosen)


def run_model_step(
    smk: Any,
    step: Callable[..., pd.DataFrame],
    stage: str,
    tables: Mapping[str, pd.DataFrame],
) -> pd.DataFrame:
    """Run one model-call step for the job's ``{model}`` and write its table.

    ``tables`` are the step's leading DataFrame arguments, in order; config, prompts, the
    caller and the seed are taken from the rule's params.
    """
    from analysis.stages.requests import caller_from_config

    cfg = nested(smk.params.cfg)
    prompts = PromptSet.from_config(cfg["prompts"])
    caller = caller_from_config(
        smk.wildcards.model,
        smk.params.model,
        cfg["llm"],
        stage=stage,
        prompt_version=prompts.version,
    )
    table = step(*tables.values(), cfg["stages"], prompts, caller, int(cfg["run"]["seed"]))
    out = Path(smk.output.table)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_parquet(out, index=False)
    return table


def read(path: str | Path) -> pd.DataFrame:
    """One parquet input."""
    return pd.read_parquet(path)


def write(table: pd.DataFrame, path: str | Path) -> None:
    """One parquet output (no index, folder created)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    table.to_parquet(path, index=False)
