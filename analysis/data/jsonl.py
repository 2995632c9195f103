"""Reading JSON-lines exports so that every problem points at a file, a line and a field.

The annotation tool writes one JSON object per line. :func:`read_jsonl` yields each object as a
:class:`Rec` that remembers where it came from; ``rec.req("index", int)`` either returns a value
of the right type or raises :class:`~analysis.data.errors.DataError` with the file, the 1-based
line and the dotted path of the field (``relevance_judgments[3].relevant``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from analysis.data.errors import DataError

_MISSING = object()

#: readable names for the types a field may have
_TYPE_NAMES: dict[type, str] = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true/false",
    list: "a list",
    dict: "an object",
}


def _is(value: Any, kind: type) -> bool:
    """Type test that keeps JSON's booleans apart from numbers."""
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, kind)


class Rec:
    """One JSON object of a JSON-lines file (or an object nested in one), with its origin."""

    __slots__ = ("file", "line", "data", "path")

    def __init__(self, file: str, line: int, data: dict[str, Any], path: str = "") -> None:
        self.file = file
        self.line = line
        self.data = data
        self.path = path

    def where(self, key: str | None = None) -> str:
        """Dotted path of ``key`` inside the line's object."""
        if key is None:
            return self.path
        return f"{self.path}.{key}" if self.path else key

    def error(self, key: str | None, problem: str) -> DataError:
        return DataError(self.file, self.line, self.where(key) or None, problem)

    def has(self, key: str) -> bool:
        return key in self.data

    def _typed(self, key: str, value: Any, kind: type) -> Any:
        if not _is(value, kind):
            raise self.error(
                key, f"expected {_TYPE_NAMES.get(kind, kind.__name__)}, got {value!r:.80}"
            )
        return float(value) if kind is float else value

    def req(self, key: str, kind: type) -> Any:
        """A field that must be present and non-null, of type ``kind``."""
        value = self.data.get(key, _MISSING)
        if value is _MISSING:
            raise self.error(key, "missing required field")
        if value is None:
            raise self.error(key, "required field is null")
        return self._typed(key, value, kind)

    def nullable(self, key: str, kind: type) -> Any:
        """A field that must be present but may be null (``None`` is returned for null)."""
        value = self.data.get(key, _MISSING)
        if value is _MISSING:
            raise self.error(key, "missing required field")
        return None if value is None else self._typed(key, value, kind)

    def opt(self, key: str, kind: type) -> Any:
        """A field that may be absent or null (``None`` then)."""
        value = self.data.get(key)
        return None if value is None else self._typed(key, value, kind)

    def children(self, key: str) -> list[Rec]:
        """The objects of a required list field, each as a :class:`Rec` with its own path."""
        items = self.req(key, list)
        out = []
        for i, item in enumerate(items):
            path = f"{self.where(key)}[{i}]"
            if not isinstance(item, dict):
                raise DataError(self.file, self.line, path, f"expected an object, got {item!r:.80}")
            out.append(Rec(self.file, self.line, item, path))
        return out

    def origin(self) -> str:
        return f"{self.file}, line {self.line}"


class _DuplicateKey(ValueError):
    """A JSON object names the same key twice (``json`` would silently keep the last)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` that refuses a key given twice in one object."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise _DuplicateKey(key)
        data[key] = value
    return data


def _decode(raw: bytes, rel: str, number: int, offset: int) -> str:
    """The line as text; a byte that is not UTF-8 is named by its offset in the file."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DataError(
            rel,
            number,
            None,
            f"not UTF-8: byte 0x{raw[err.start]:02x} at byte offset {offset + err.start} of "
            f"the file (column {err.start + 1} of the line, in bytes)",
        ) from None


def read_jsonl(path: Path, rel: str) -> Iterator[Rec]:
    """Yield each line of ``path`` as a :class:`Rec`; ``rel`` is the name used in messages.

    Blank lines are skipped (they carry nothing); any other line must be one UTF-8 JSON object
    whose keys are all different. A file without any record is an error: an emptied export
    would otherwise silently remove a rater and every vote it held.
    """
    records = 0
    offset = 0
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            text = _decode(raw, rel, number, offset)
            offset += len(raw)
            if not text.strip():
                continue
            try:
                data = json.loads(text, object_pairs_hook=_unique_keys)
            except _DuplicateKey as dup:
                raise DataError(
                    rel, number, dup.key, "key given twice in one object; which value is meant?"
                ) from None
            except json.JSONDecodeError as err:
                raise DataError(
                    rel, number, None, f"not valid JSON ({err.msg} at column {err.colno})"
                ) from err
            if not isinstance(data, dict):
                raise DataError(rel, number, None, "each line must hold one JSON object")
            records += 1
            yield Rec(rel, number, data)
    if records == 0:
        raise DataError(
            rel, None, None, "no records: the export file is empty (or blank lines only)"
        )
