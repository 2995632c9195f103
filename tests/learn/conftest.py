"""Fixtures of the learner tests: default settings with one regularization value per grid
(the grid search itself is tested once, in test_learners.py) and a small bootstrap."""

from __future__ import annotations

import pytest

from analysis.settings import LearnConfig
from analysis.stats.settings import StatsSettings
from tests.settings_defaults import default_settings, stats_settings


@pytest.fixture
def learn() -> LearnConfig:
    cfg = default_settings().learn
    cfg.n_folds = 4
    cfg.verifier.C_grid = [0.03]
    cfg.relevance.C_grid = [0.03]
    cfg.reward.ridge_alpha_grid = [300.0]
    cfg.reward.C_grid = [0.01]
    return cfg


@pytest.fixture
def stats() -> StatsSettings:
    return stats_settings(n_boot=200, seed=11)
