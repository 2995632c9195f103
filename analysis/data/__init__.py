"""Study data: the canonical tables, the adapter that fills them, and their schemas.

Every dataset becomes the same validated tables (``analysis.data.schemas``), written as parquet
by rule ``canonical_tables`` (``analysis.data.canonical``); analysis code reads only those.
The authors' annotation-tool layout is read by ``analysis.data.annotation_tool``; the bundled
simulated world (written by the tool ``analysis.simulation``) uses that same layout, so one
adapter serves both datasets. The public face is what the rules use: ``read_dataset`` and
``resolve_root``; errors live in ``analysis.data.errors``.
``docs/data.md`` documents every table, column, file kind and round.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from analysis.data.annotation_tool import AdapterResult

__all__ = ["read_dataset", "resolve_root"]


def _annotation_tool(root: Path) -> AdapterResult:
    from analysis.data.annotation_tool import read_annotation_tool

    return read_annotation_tool(root)


#: ``data.adapter`` config value -> reader of a raw root
ADAPTERS: dict[str, Callable[[Path], AdapterResult]] = {"annotation_tool": _annotation_tool}


def resolve_root(root: str | Path, base: str | Path) -> Path:
    """``data.root`` as a path: absolute as given, else relative to ``base`` (the repository)."""
    path = Path(root).expanduser()
    return path if path.is_absolute() else Path(base) / path


def read_dataset(adapter: str, root: Path | str) -> AdapterResult:
    """Read a raw dataset with the named adapter (``data.adapter``)."""
    if adapter not in ADAPTERS:
        raise ValueError(f"unknown data.adapter {adapter!r}; known: {sorted(ADAPTERS)}")
    return ADAPTERS[adapter](Path(root))
