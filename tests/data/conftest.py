"""Fixtures of the data tests: the tiny made-up world on disk and the adapter's result on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.data.annotation_tool import AdapterResult, read_annotation_tool
from tests.data.tiny_world import tiny_world, write_world


@pytest.fixture
def tiny_root(tmp_path: Path) -> Path:
    """A fresh copy of the tiny world (a test may change its files)."""
    return write_world(tmp_path / "raw", tiny_world())


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> AdapterResult:
    """The adapter's result on the unchanged tiny world (read once per module)."""
    return read_annotation_tool(write_world(tmp_path_factory.mktemp("tiny"), tiny_world()))
