"""What a learning rule reads from the config, typed, from its plain ``params.cfg`` subtree.

Rules pass ``subtree(CFG, "learn", "stats", "run.seed")``; this turns it into the settings
dataclasses of :mod:`analysis.settings` and the statistics' one settings object
(:class:`analysis.stats.settings.StatsSettings`) with the same checks as composition (no
defaults of its own: a missing key is an error, not a silent fallback). Each model derives
its own training seed from the master seed and its name (:func:`analysis.seeds.derive_seed`),
so adding a model never changes another model's random draws; the intervals resample with
the run's seed, as every statistic does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from analysis.settings import ConfigError, LearnConfig, from_params
from analysis.stats.settings import StatsSettings


@dataclass(frozen=True)
class Settings:
    """What a learning rule reads from the config."""

    learn: LearnConfig
    stats: StatsSettings

    @property
    def seed(self) -> int:
        return self.stats.seed


def settings_from_params(cfg: Mapping[str, Any]) -> Settings:
    """Settings from ``{"learn": {...}, "stats": {...}, "run.seed": int}`` (all required)."""
    missing = sorted({"learn", "stats", "run.seed"} - set(cfg))
    if missing:
        raise ConfigError(f"a learning rule's params lack {missing}")
    return Settings(
        learn=from_params(LearnConfig, cfg["learn"], "learn"),
        stats=StatsSettings.from_rule_params(cfg),
    )
