"""Study data: the canonical tables, the adapter that fills them, and their schemas.

Every dataset becomes the same validated tables (``analysis.data.schemas``), written as parquet
by rule ``canonical_tables`` (``analysis.data.canonical``); analysis code reads only those.
Each raw layout has an adapter in one registry (``analysis.data.adapters``); the authors'
annotation-tool layout is read by ``analysis.data.annotation_tool``, and the bundled simulated
world (written by the tool ``analysis.simulation``) uses that same layout, so one adapter
serves both datasets. The public face is what the rules use: ``read_dataset`` and
``resolve_root``; errors live in ``analysis.data.errors``.
``docs/data.md`` documents every table, column, file kind and round.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from analysis.data.annotation_tool import AdapterResult

__all__ = ["read_dataset", "resolve_root"]


def resolve_root(root: str | Path, base: str | Path) -> Path:
    """``data.root`` as a path: absolute as given, else relative to ``base`` (the repository)."""
    path = Path(root).expanduser()
    return path if path.is_absolute() else Path(base) / path


def read_dataset(
    adapter: str,
    root: Path | str,
    known_models: Sequence[str] = (),
    *,
    distinct_annotators: Sequence[Sequence[str]] = (),
    distinct_attributes: Sequence[Sequence[str]] = (),
) -> AdapterResult:
    """Read a raw dataset with the named adapter (``data.adapter``, a registry entry of
    ``analysis.data.adapters``).

    ``known_models`` (``data.models``) are model raters the dataset holds besides the study's
    five; a model file whose name nearly spells one of either is an error. The ``distinct_*``
    groups (``data.distinct_annotators``, ``data.distinct_attributes``) list spellings that
    differ only in case or surrounding space yet name different annotators or attributes.
    """
    # the registry names its readers by import path: the Snakefile imports this package at
    # every parse, and the readers bring pandas and pandera (about a second per start)
    from analysis.data.adapters import dataset_adapter

    return dataset_adapter(adapter).read_tables(
        root,
        known_models,
        distinct_annotators=distinct_annotators,
        distinct_attributes=distinct_attributes,
    )
