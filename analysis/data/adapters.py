"""The dataset adapters: one registry, ``data.adapter`` name -> the reader that returns the
canonical tables and the listing of the raw files it reads.

A dataset in another layout is one entry here, its module (``analysis/data/<name>.py``) and
its config (``config/data/<name>.yaml``, ``adapter: <name>``): rule ``canonical_tables``
declares the entry's raw files as its inputs (so a changed file reruns it) and calls its
reader. Entries name functions by import path, as the figure registry does: the Snakefile
reads the registry at every start, and the readers import pandas and pandera, which only the
``canonical_tables`` job needs. docs/data.md lists the tables a reader must return.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analysis.settings import ConfigError, did_you_mean

if TYPE_CHECKING:
    from analysis.data.annotation_tool import AdapterResult

__all__ = ["ADAPTERS", "DatasetAdapter", "dataset_adapter"]


def _load(path: str) -> Callable[..., Any]:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class DatasetAdapter:
    """One raw layout: how to read it and which of its files the reading depends on."""

    #: ``module:function(root, known_models, *, distinct_annotators, distinct_attributes) ->
    #: AdapterResult`` (validated canonical tables, skipped records, the raw files behind each
    #: table; the ``data`` config's rater lists as in ``analysis.data.read_dataset``)
    read: str
    #: ``module:function(root) -> list[str]``: every raw file the reader would read, sorted
    files: str
    doc: str

    def read_tables(
        self, root: Path | str, known_models: Sequence[str] = (), **options: Any
    ) -> AdapterResult:
        return _load(self.read)(Path(root), known_models, **options)

    def raw_files(self, root: Path | str) -> list[str]:
        return list(_load(self.files)(Path(root)))


#: ``data.adapter`` -> adapter
ADAPTERS: dict[str, DatasetAdapter] = {
    "annotation_tool": DatasetAdapter(
        read="analysis.data.annotation_tool:read_annotation_tool",
        files="analysis.data.layout:raw_files",
        doc="The study authors' annotation-tool exports (and the bundled world, written in "
        "their layout): per-annotator task files, model votes, items and responses.",
    ),
}


def dataset_adapter(name: str) -> DatasetAdapter:
    """The registered adapter ``name`` (``data.adapter``), or a ``ConfigError`` naming them."""
    if name not in ADAPTERS:
        raise ConfigError(
            f"data.adapter={name!r} is not a registered dataset adapter"
            f"{did_you_mean(name, ADAPTERS)}; registered: {', '.join(sorted(ADAPTERS))} "
            "(analysis/data/adapters.py)"
        )
    return ADAPTERS[name]
