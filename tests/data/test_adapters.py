"""The dataset adapters' one registry (analysis/data/adapters.py): the rule reads the files its
entry lists and the tables its reader returns; an unknown adapter is a config error."""

from __future__ import annotations

import pytest

from analysis.data import read_dataset
from analysis.data.adapters import ADAPTERS, dataset_adapter
from analysis.data.layout import raw_files
from analysis.settings import ConfigError
from analysis.workflow_config import compose_config
from tests.conftest import REPO_ROOT


def test_every_configured_dataset_names_a_registered_adapter() -> None:
    for config in sorted((REPO_ROOT / "config" / "data").glob("*.yaml")):
        cfg = compose_config([f"data={config.stem}"])
        assert cfg["data"]["adapter"] in ADAPTERS, config.name


def test_the_annotation_tool_entry_lists_what_its_reader_reads() -> None:
    bundled = REPO_ROOT / "data" / "raw" / "bundled"
    entry = dataset_adapter("annotation_tool")
    assert entry.raw_files(bundled) == raw_files(bundled)
    assert entry.doc


def test_an_unknown_adapter_names_the_registered_ones() -> None:
    with pytest.raises(ConfigError, match=r"did you mean 'annotation_tool'\?.*registered"):
        read_dataset("annotation_tol", REPO_ROOT)
