r"""Read the paper's ``.tex`` sources the way the provenance chain needs them.

:func:`keys_used` lists the record keys a text prints (``\rc{key}``, ``\rcci{key}``, ``\rcn``,
``\rcmethod``, ``\rclink`` and the CamelCase aliases), so the audit site knows which numbers
appear in the paper; :func:`keys_guarded` the keys a text only tests for. The lint
that finds digits typed by hand where a result belongs is a test (``tests/paper/source_lint.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

#: accessors whose argument is a record key that is printed
PRINTING_ACCESSORS = ("rc", "rcci", "rcint", "rcstack", "rcn", "rcmethod", "rclink")
#: accessors whose argument names keys only to test that they exist
GUARDS = ("IfRecordTF", "IfRecordsTF")


def strip_comments(text: str) -> str:
    """Drop ``%`` comments (not ``\\%``), keeping every line so line numbers stay right."""
    return "\n".join(re.sub(r"(?<!\\)%.*$", "", line) for line in text.split("\n"))


def macro_args(text: str, macros: Iterable[str]) -> list[str]:
    names = "|".join(macros)
    return re.findall(r"\\(?:" + names + r")\s*\{([^{}]*)\}", text)


def keys_used(text: str, aliases: Mapping[str, str] | None = None) -> set[str]:
    """Record keys whose values ``text`` prints (accessors and, given the map, aliases)."""
    text = strip_comments(text)
    keys = {k.strip() for k in macro_args(text, PRINTING_ACCESSORS)}
    if aliases:
        keys |= {aliases[n] for n in re.findall(r"\\([A-Za-z]+)", text) if n in aliases}
    return keys


def keys_guarded(text: str) -> set[str]:
    """Record keys ``text`` tests with ``\\IfRecordTF``/``\\IfRecordsTF``."""
    keys: set[str] = set()
    for arg in macro_args(strip_comments(text), GUARDS):
        keys |= {k.strip() for k in arg.split(",") if k.strip()}
    return keys


def keys_in_files(paths: Iterable[Path], aliases: Mapping[str, str] | None = None) -> set[str]:
    """The union of :func:`keys_used` over files (missing files are skipped)."""
    keys: set[str] = set()
    for p in paths:
        if Path(p).is_file():
            keys |= keys_used(Path(p).read_text(encoding="utf-8"), aliases)
    return keys
