"""What goes wrong with study data, said in the data's own coordinates.

Raw exports are read line by line, so a problem is reported as *file, line, field* (what a
person needs to open the file and fix it). Canonical tables are checked after they are built,
so a problem there is reported as *table, row, column*. Records the authors' own tool is known
to write but that carry no usable judgment (a null label, an empty record) are not errors:
they are counted and listed as :class:`SkippedRecord` so that nothing disappears silently.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


class DataError(ValueError):
    """A raw record is malformed; the message names the file, the line (1-based) and the field."""

    def __init__(self, file: str, line: int | None, field: str | None, problem: str) -> None:
        self.file = file
        self.line = line
        self.field = field
        self.problem = problem
        where = file if line is None else f"{file}, line {line}"
        if field:
            where += f", field '{field}'"
        super().__init__(f"{where}: {problem}")


class TableValidationError(ValueError):
    """A canonical table breaks its schema; ``failures`` lists (table, row, column, problem)."""

    def __init__(self, failures: list[tuple[str, Any, str | None, str]]) -> None:
        self.failures = failures
        first = failures[0]
        self.table, self.row, self.column = first[0], first[1], first[2]
        lines = [
            f"table '{t}', row {r}, column '{c if c is not None else '-'}': {p}"
            for t, r, c, p in failures[:25]
        ]
        more = f"\n... and {len(failures) - 25} more" if len(failures) > 25 else ""
        super().__init__(
            f"{len(failures)} canonical-table check(s) failed:\n" + "\n".join(lines) + more
        )


@dataclass(frozen=True, order=True)
class SkippedRecord:
    """One raw record (or one judgment inside a record) the adapter did not turn into a row.

    ``kind`` is a short stable code (``null_label``, ``empty_record``, ...) so reports can be
    counted; ``reason`` says it in words.
    """

    file: str
    line: int
    field: str
    kind: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, order=True)
class IgnoredFile:
    """A file under the raw root that is not one of the canonical file kinds."""

    file: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
