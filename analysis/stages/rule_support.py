"""Glue shared by the stage rule scripts: config subtrees back to nested dicts, model steps.

Rules receive config as ``subtree(CFG, "stages.stage2", "prompts", ...)``: flat dotted keys,
so that a change to one stage's settings reruns only that stage's rules. The step functions
want the nested shape; :func:`nested` rebuilds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from analysis.stages.prompts import PromptSet
from analysis.stages.shards import Shard, write_shard_table

if TYPE_CHECKING:
    from analysis.stages.steps import CallStep


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


def run_model_step(smk: Any, step: CallStep) -> pd.DataFrame:
    """Run one shard of one model-call step for the job's ``{model}`` and write its table.

    The job's ``{shard}`` wildcard is its shard index; ``llm.shards`` (in the rule's config
    params) is the shard count. The runtime-only ``llm`` keys come from the run's config,
    not from params (changing a timeout must rerun nothing). Inputs are read by the step's
    input names, in its order.
    """
    from analysis.stages.requests import caller_from_config
    from analysis.workflow_config import runtime_llm_keys

    cfg = nested(smk.params.cfg)
    shard = Shard(int(smk.wildcards.shard), int(cfg["llm"]["shards"]))
    prompts = PromptSet.from_config(cfg["prompts"])
    # timeouts, retries, polling: not rule params (they change no output), so read apart
    workflow_dir = Path(smk.scriptdir).resolve().parents[1]  # scripts are in workflow/scripts
    llm = {**cfg["llm"], **runtime_llm_keys(smk.config, workflow_dir / "config")}
    caller = caller_from_config(
        smk.wildcards.model,
        smk.params.model,
        llm,
        stage=step.stage,
        prompt_version=prompts.version,
        shard=shard.name,
    )
    tables = [read(smk.input[name]) for name in step.inputs]
    table = step.run(*tables, cfg["stages"], prompts, caller, int(cfg["run"]["seed"]), shard=shard)
    write_shard_table(table, smk.output.table)
    return table


def read(path: str | Path) -> pd.DataFrame:
    """One parquet input."""
    return pd.read_parquet(path)


def write(table: pd.DataFrame, path: str | Path) -> None:
    """One parquet output (no index, folder created)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    table.to_parquet(path, index=False)
