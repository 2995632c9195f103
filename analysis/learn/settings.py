"""Typed settings for the learners, from a rule's plain ``params.cfg`` subtree.

Rules pass ``subtree(CFG, "learn", "stats", "run.seed")``; library functions take the
dataclasses from :mod:`analysis.config_schema`, so a typo fails at the boundary. Each model
derives its own seed from the master seed and its name, so adding a model never changes
another model's random draws.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from omegaconf import OmegaConf

from analysis.config_schema import LearnConfig, StatsConfig


@dataclass(frozen=True)
class Settings:
    """What a learning rule reads from the config."""

    learn: LearnConfig
    stats: StatsConfig
    seed: int


def settings_from_params(cfg: Mapping[str, Any]) -> Settings:
    """Settings from ``{"learn": {...}, "stats": {...}, "run.seed": int}`` (missing: defaults)."""
    learn = OmegaConf.to_object(
        OmegaConf.merge(OmegaConf.structured(LearnConfig), cfg.get("learn", {}))
    )
    stats = OmegaConf.to_object(
        OmegaConf.merge(OmegaConf.structured(StatsConfig), cfg.get("stats", {}))
    )
    assert isinstance(learn, LearnConfig) and isinstance(stats, StatsConfig)
    return Settings(learn=learn, stats=stats, seed=int(cfg.get("run.seed", 20260601)))


def derive_seed(seed: int, name: str) -> int:
    """A 31-bit seed for ``name`` derived from the master seed (stable across machines)."""
    digest = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
