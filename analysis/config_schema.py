"""Structured schemas for the Hydra config groups: a typo in a key is an error, not a no-op.

Each top-level group of ``config/config.yaml`` has a dataclass here. ``validate`` merges the
composed group onto its schema, which rejects unknown keys and wrong types with the key's path.
Add a field here when you add a key to a YAML file (the YAML comment documents it for users).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omegaconf import OmegaConf


@dataclass
class DataConfig:
    name: str = "bundled"  # dataset name; part of every output path
    adapter: str = "annotation_tool"  # which adapter reads the raw files
    root: str = "data/raw/bundled"  # folder with raw files (relative to the repo, or absolute)
    simulated: bool = True  # whether the dataset is the simulated bundled world
    description: str = ""  # one line printed in the paper's data section


@dataclass
class RunConfig:
    seed: int = 20260601  # master seed; every random step derives its own seed from it
    report_only_claims: bool = False  # true: a failed claim is reported instead of stopping


@dataclass
class PaperConfig:
    title: str = ""  # paper title
    source_date_epoch: int = 0  # timestamp embedded in the PDF (determinism)
    claims_mode: str = "stop"  # stop | report: what a claim the data do not support does


@dataclass
class StatsConfig:
    n_boot: int = 2000  # bootstrap resamples for every CI
    ci_level: float = 0.95  # confidence level
    ci_method: str = "percentile"  # percentile | bca
    cluster: str = "user"  # resampling unit for item bootstraps: item | user | prompt
    multiple_comparisons: str = "holm"  # holm | fdr_bh


#: top-level group -> schema; groups not listed are validated by their own modules.
SCHEMAS: dict[str, type] = {
    "data": DataConfig,
    "run": RunConfig,
    "paper": PaperConfig,
    "stats": StatsConfig,
}


def validate(cfg: Any) -> None:
    """Check every group with a schema; raise ``ConfigError`` naming the offending key."""
    from analysis.workflow_config import ConfigError

    for group, schema in SCHEMAS.items():
        if group not in cfg:
            raise ConfigError(f"config group '{group}' is missing from config/config.yaml")
        try:
            OmegaConf.merge(OmegaConf.structured(schema), cfg[group])
        except Exception as err:  # omegaconf raises several error types; all mean a bad key
            raise ConfigError(f"config group '{group}': {err}") from err

